package codec

import (
	"net/http"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/wire"
)

func TestParse(t *testing.T) {
	for _, w := range All()[:3] {
		got, err := Parse(string(w))
		if err != nil || got != w {
			t.Errorf("Parse(%q) = %q, %v", w, got, err)
		}
	}
	if got := All()[:3]; got[0] != wire.Responses || got[1] != wire.Chat || got[2] != wire.Messages {
		t.Errorf("All()[:3] = %v, want the routing matrix's order", got)
	}
	for _, bad := range []string{"", "Chat", "anthropic", "chat "} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "want responses, chat or messages") {
			t.Errorf("Parse(%q): %v, want the choices named", bad, err)
		}
	}
}

func TestRegister(t *testing.T) {
	resp := func(Options) (*pipeline.Graph, error) { return nil, nil }
	for _, tc := range []struct {
		c    Codec
		want string
	}{
		{Codec{Response: resp}, "a wire's name is a lowercase word"},
		{Codec{Wire: "Chat2", Response: resp}, "a wire's name is a lowercase word"},
		{Codec{Wire: "nograph"}, "no response graph"},
		{Codec{Wire: wire.Chat, Response: resp}, "registered twice"},
	} {
		if err := Register(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Register(%q) = %v, want %q", tc.c.Wire, err, tc.want)
		}
	}
}

func TestSetKey(t *testing.T) {
	chat, _ := Lookup(wire.Chat)
	msgs, _ := Lookup(wire.Messages)
	for _, tc := range []struct {
		c                 *Codec
		auth, clientKey   string
		header, wantValue string
	}{
		{chat, "Bearer k1", "", "Authorization", "Bearer k1"},
		{chat, "Basic xyz", "", "Authorization", "Basic xyz"},
		{chat, "", "k2", "Authorization", ""},
		{msgs, "Bearer k1", "", "X-Api-Key", "k1"},
		{msgs, "", "k2", "X-Api-Key", "k2"},
		{msgs, "Basic xyz", "k2", "X-Api-Key", "k2"},
	} {
		h := http.Header{}
		tc.c.SetKey(h, tc.auth, tc.clientKey)
		tc.c.SetHeaders(h)
		if got := h.Get(tc.header); got != tc.wantValue {
			t.Errorf("%s SetKey(%q, %q): %s = %q, want %q", tc.c.Wire, tc.auth, tc.clientKey, tc.header, got, tc.wantValue)
		}
		if tc.c == msgs && h.Get("anthropic-version") == "" {
			t.Errorf("messages: no anthropic-version header")
		}
		if tc.c == msgs && h.Get("Authorization") != "" {
			t.Errorf("messages: the key went in Authorization too")
		}
	}
}

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		event, data string
		want        wire.Wire
	}{
		{"message_start", "", wire.Messages},
		{"content_block_delta", "", wire.Messages},
		{"response.created", "", wire.Responses},
		{"", `{"object":"chat.completion.chunk","choices":[]}`, wire.Chat},
		{"", `{"choices":[{"delta":{}}]}`, wire.Chat},
		{"", `{"type":"response.output_text.delta"}`, wire.Responses},
		{"", `{"type":"message_delta"}`, wire.Messages},
		{"", `{"error":{"message":"x"}}`, ""},
		{"ping", "", ""},
	} {
		var data []byte
		if tc.data != "" {
			data = []byte(tc.data)
		}
		if got, _ := Sniff(tc.event, data); got != tc.want {
			t.Errorf("Sniff(%q, %s) = %q, want %q", tc.event, tc.data, got, tc.want)
		}
	}
}

func TestModels(t *testing.T) {
	msgs, _ := Lookup(wire.Messages)
	got, err := msgs.Models([]byte(`{"data":[{"id":"claude-x","type":"model","created_at":"2025-01-02T03:04:05Z"},{"id":"m","object":"model"}]}`))
	if err != nil || len(got) != 2 || string(got[0]) != `{"id":"claude-x","object":"model","created":1735787045,"owned_by":"anthropic"}` || string(got[1]) != `{"id":"m","object":"model"}` {
		t.Errorf("messages Models = %s, %v", got, err)
	}
	if _, err := msgs.Models([]byte(`{"data":[{"type":"model"}]}`)); err == nil || !strings.Contains(err.Error(), "data[0]: want an object with an id") {
		t.Errorf("messages Models without an id: %v", err)
	}
	chat, _ := Lookup(wire.Chat)
	if _, err := chat.Models([]byte(`[]`)); err == nil || !strings.Contains(err.Error(), `"data" array`) {
		t.Errorf("chat Models of an array: %v", err)
	}
}

func TestSniffBody(t *testing.T) {
	for _, tc := range []struct {
		body string
		want wire.Wire
	}{
		{`{"object":"chat.completion","choices":[]}`, wire.Chat},
		{`{"choices":[{"message":{}}]}`, wire.Chat},
		{`{"id":"m","type":"message","content":[{"type":"text","text":"hi"}]}`, wire.Messages},
		{`{"type":"message"}`, ""},
		{`{"id":"r","object":"response","output":[]}`, wire.Responses},
		{`{"error":{"message":"x"}}`, ""},
		{`not json`, ""},
	} {
		if got, _ := SniffBody([]byte(tc.body)); got != tc.want {
			t.Errorf("SniffBody(%s) = %q, want %q", tc.body, got, tc.want)
		}
	}
}
