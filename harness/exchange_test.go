package harness_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

func TestOpen(t *testing.T) {
	req := func(body string) *protocol.ResponsesRequest {
		r, err := protocol.DecodeRequest([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name      string
		wire      harness.Wire
		open      harness.Opening
		wantTurn  bool
		wantUnary bool
		wantPost  bool
		bridged   bool // a bridge table without a post node
		wantErr   string
	}{
		{name: "planned stream", open: harness.Opening{Harness: testHarness, Request: req(`{"model":"m","stream":true,"input":"hi"}`)},
			wantTurn: true, wantPost: true},
		{name: "planned one body", open: harness.Opening{Harness: testHarness, Request: req(`{"model":"m","input":"hi"}`)},
			wantTurn: true, wantUnary: true, wantPost: true},
		{name: "planned on messages never unary", wire: harness.WireMessages,
			open:     harness.Opening{Harness: harness.NameClaudeCode, Request: req(`{"model":"m","input":"hi"}`)},
			wantTurn: true, bridged: true},
		{name: "prepared", open: harness.Opening{Harness: testHarness}, wantTurn: true, wantPost: true},
		{name: "layer alone", open: harness.Opening{Fallback: harness.FallbackLayer}},
		{name: "layer only without a harness", open: harness.Opening{Harness: testHarness, Fallback: harness.FallbackLayer},
			wantTurn: true, wantPost: true},
		{name: "no native route", wire: harness.WireMessages, open: harness.Opening{Fallback: harness.FallbackNoRoute}},
		{name: "no native route is an error", wire: harness.WireMessages, open: harness.Opening{},
			wantErr: "messages"},
		{name: "no native route fallback is for no harness only", wire: harness.WireMessages,
			open: harness.Opening{Harness: testHarness, Fallback: harness.FallbackNoRoute}, wantErr: testHarness},
		{name: "plan else prepare", open: harness.Opening{Harness: testHarness, Fallback: harness.FallbackPrepare},
			wantTurn: true, wantPost: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := harness.Open(context.Background(), harness.Config{Wire: tt.wire}, tt.open)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (ex.Turn != nil) != tt.wantTurn || ex.Unary != tt.wantUnary {
				t.Errorf("turn %v, unary %v; want turn %v, unary %v", ex.Turn != nil, ex.Unary, tt.wantTurn, tt.wantUnary)
			}
			g, err := ex.Graph()
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(g.Names(), harness.NodePost); got != tt.wantPost {
				t.Errorf("graph %v: harness.post %v, want %v", g.Names(), got, tt.wantPost)
			}
			if want := !tt.wantPost && !tt.bridged; ex.LayerAlone() != want {
				t.Errorf("LayerAlone = %v, want %v", ex.LayerAlone(), want)
			}
		})
	}
}

func TestExchangeAnswered(t *testing.T) {
	tests := []struct {
		wire        harness.Wire
		asked       bool
		contentType string
		want        bool
	}{
		{harness.WireChat, true, "text/event-stream; charset=utf-8", false},
		{harness.WireChat, false, "application/json", true},
		{harness.WireChat, true, "Application/JSON", true},
		{harness.WireMessages, true, "application/json", false},
		{harness.WireChat, true, "text/plain", true},
		{harness.WireChat, false, "", false},
	}
	for _, tt := range tests {
		ex := &harness.Exchange{Wire: tt.wire, Unary: tt.asked}
		ex.Answered(tt.contentType)
		if ex.Unary != tt.want {
			t.Errorf("%s, asked unary %v, answered %q: unary %v, want %v", tt.wire, tt.asked, tt.contentType, ex.Unary, tt.want)
		}
	}
}

// The edits apply to the graph in order; a failing edit fails Graph.
func TestExchangeGraphEdits(t *testing.T) {
	ex, err := harness.Open(context.Background(), harness.Config{}, harness.Opening{Fallback: harness.FallbackLayer})
	if err != nil {
		t.Fatal(err)
	}
	var applied []string
	edit := func(name string, fail bool) pipeline.Edit {
		return func(g *pipeline.Graph) (*pipeline.Graph, error) {
			applied = append(applied, name)
			if fail {
				return nil, errors.New(name + " failed")
			}
			return g.Renamed(g.Name() + "+" + name), nil
		}
	}
	g, err := ex.Graph(edit("a", false), nil, edit("b", false))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(g.Name(), "+a+b") {
		t.Errorf("graph name %q: want the edits applied in order", g.Name())
	}
	applied = nil
	if _, err = ex.Graph(edit("a", false), edit("c", true), edit("d", false)); err == nil || err.Error() != "c failed" {
		t.Fatalf("err = %v, want c failed", err)
	}
	if want := []string{"a", "c"}; !slices.Equal(applied, want) {
		t.Errorf("applied %v, want %v (none after the failing edit)", applied, want)
	}
}
