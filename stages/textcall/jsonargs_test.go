package textcall

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSpecialTokenQuiet checks Quiet of the kimi_k2, deepseek and mistral
// parsers: true only when Feed gives the text back as one Text event.
func TestSpecialTokenQuiet(t *testing.T) {
	for _, c := range []struct {
		format, before, s string
		quiet             bool
	}{
		{"kimi_k2", "", "plain text, no markers", true},
		{"kimi_k2", "", "a < b", false},
		{"kimi_k2", "held <|tool_c", "plain", false},
		{"kimi_k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{", "\"x\": 1", false},
		{"kimi_k2", "<|tool_call_begin|>a:0<|tool_call_argument_begin|>{}<|tool_call_end|> done", "more text", true},
		{"deepseek_v3", "", "天气 plain", true},
		{"deepseek_v3", "", "<｜", false},
		{"deepseek_v31", "<｜tool▁call▁begin｜>a<｜tool▁sep｜>{", "1", false},
		{"deepseek_v32", "", "no tags here", true},
		{"deepseek_v32", "", "<｜DSML｜", false},
		{"deepseek_v32", `<｜DSML｜invoke name="f"><｜DSML｜parameter name="a" string="true">`, "value", false},
		{"mistral", "", "text (with parens)", true},
		{"mistral", "", "a [link]", false},
		{"mistral", "[TOOL_CALLS]a[ARGS]{", `"x": 1`, false},
	} {
		p, _ := NewParser(c.format, Config{})
		p.Feed(nil, c.before)
		if got := p.Quiet(c.s); got != c.quiet {
			t.Errorf("%s after %q: Quiet(%q) = %v, want %v", c.format, c.before, c.s, got, c.quiet)
			continue
		}
		if c.quiet {
			if d := cmp.Diff([]Event{{Kind: Text, Text: c.s}}, p.Feed(nil, c.s)); d != "" {
				t.Errorf("%s: quiet text changed by Feed (-want +got):\n%s", c.format, d)
			}
		}
	}
}

func TestObjScan(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		done bool
	}{
		{`{}rest`, 2, true},
		{`{"a": "}"}x`, 10, true},
		{`{"a": "\"}"} x`, 12, true},
		{`{"a": [1, {"b": 2}]}`, 20, true},
		{`{"a": "\\"}!`, 11, true},
		{`{"a": 1`, 7, false},
	} {
		var o objScan
		n, done := o.scan(c.in)
		if n != c.n || done != c.done {
			t.Errorf("scan(%q) = %d, %v; want %d, %v", c.in, n, done, c.n, c.done)
		}
	}
	// The same object in pieces.
	var o objScan
	total := 0
	for _, piece := range []string{`{"a": "`, `\`, `"}`, `"}tail`} {
		n, done := o.scan(piece)
		total += n
		if done {
			break
		}
	}
	if total != len(`{"a": "\"}"}`) {
		t.Errorf("in pieces: consumed %d", total)
	}
}
