package benchmark

import (
	"strings"
	"testing"
)

// A peer is found by name among the registered ones; a known peer that is
// not linked says how to get it; an unknown one is named.
func TestPeerByName(t *testing.T) {
	linked := map[string]Peer{"chat": {Name: "openai-go"}}
	tests := []struct {
		name    string
		byWire  map[string]Peer
		peer    string
		wantErr string
	}{
		{"linked", linked, "openai-go", ""},
		{"known, not linked", nil, "openai-go", "-tags peers"},
		{"known, other one linked", linked, "anthropic-sdk-go", "not linked into this binary"},
		{"unknown", linked, "langchain", `unknown peer "langchain"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := peerByName(tt.byWire, tt.peer)
			switch {
			case tt.wantErr == "" && (err != nil || p.Name != tt.peer):
				t.Fatalf("got %+v, %v", p, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
