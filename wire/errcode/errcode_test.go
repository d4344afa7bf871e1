package errcode

import (
	"os"
	"strings"
	"testing"
)

// Every row's example classifies as the row's code.
func TestRulesExamples(t *testing.T) {
	for _, r := range Rules {
		var got string
		switch r.Field {
		case "type":
			got = Classify(400, r.Match, "", "whatever")
		case "code":
			got = Classify(400, "", r.Match, "whatever")
		case "message":
			got = Classify(400, "", "", r.Example)
		default:
			t.Fatalf("%s: unknown field %q", r.Server, r.Field)
		}
		if got != r.Code {
			t.Errorf("%s (%s): Classify = %q, want %q", r.Server, r.Match, got, r.Code)
		}
		if r.Source == "" || r.Example == "" {
			t.Errorf("%s: row without source or example", r.Server)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		status             int
		typ, code, message string
		want               string
	}{
		{400, "invalid_request_error", "invalid_value", "bad field", ""},
		{400, "", "", "THIS MODEL'S MAXIMUM CONTEXT LENGTH IS 8 tokens", ContextLengthExceeded},
		{529, "", "", "busy", ServerOverloaded},
		{429, "", "", "slow down", RateLimitExceeded},
		{429, "", "insufficient_quota", "You exceeded your current quota", InsufficientQuota},
		{500, "", "", "internal", ""},
		{0, "", "", "", ""},
	} {
		if got := Classify(c.status, c.typ, c.code, c.message); got != c.want {
			t.Errorf("Classify(%d, %q, %q, %q) = %q, want %q", c.status, c.typ, c.code, c.message, got, c.want)
		}
	}
	if !InStream(ContextLengthExceeded) || !InStream(InsufficientQuota) || InStream(ServerOverloaded) || InStream("") {
		t.Error("InStream")
	}
}

// docs/errors.md lists every row's wording.
func TestDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules {
		if !strings.Contains(string(data), r.Match) || !strings.Contains(string(data), r.Server) {
			t.Errorf("docs/errors.md lacks the row %s / %q", r.Server, r.Match)
		}
	}
}
