package wire

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, w := range All() {
		got, err := Parse(string(w))
		if err != nil || got != w {
			t.Errorf("Parse(%q) = %q, %v", w, got, err)
		}
	}
	for _, bad := range []string{"", "Chat", "anthropic", "chat "} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "want responses, chat or messages") {
			t.Errorf("Parse(%q): %v, want the choices named", bad, err)
		}
	}
}
