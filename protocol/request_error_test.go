package protocol_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
)

// TestDecodeRequestErrors: a body that is JSON but not a Responses request
// is refused with the JSON path at fault and what is wrong there, in our
// words — never Go type names or decoding layers; the decoder's own error
// stays reachable with errors.As/Unwrap.
func TestDecodeRequestErrors(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"model":"m","input":[{"type":"message","role":"user","content":3}]}`, "input[0].content: want an array or a string, got a number"},
		{`{"model":"m","input":[{"type":"message","role":"user","content":{"a":1}}]}`, "input[0].content: want an array or a string, got an object"},
		{`{"model":"m","input":3}`, "input: want an array or a string, got a number"},
		{`{"model":3,"input":"hi"}`, "model: want a string, got a number"},
		{`{"model":"m","input":"hi","tools":[{"type":"function","name":5}]}`, "tools[0].name: want a string, got a number"},
		{`{"model":"m","input":"hi","tools":{}}`, "tools: want an array, got an object"},
		{`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":7}]}`, "input[0].output: want a string or an array, got a number"},
		{`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":1}]}]}`, "input[0].output[0].text: want a string, got a number"},
		{`{"model":"m","input":"hi","stream":"yes"}`, "stream: want true or false, got a string"},
		{`{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":4}]}]}`, "input[0].content[0].text: want a string, got a number"},
		{`{"model":"m","input":"hi","reasoning":{"effort":5}}`, "reasoning.effort: want a string, got a number"},
		{`{"model":"m","input":[{"type":"message","role":"user","content":[]},1]}`, "input[1]: want an object"},
		{`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"x","arguments":{}}]}`, "input[0].arguments: want a string, got an object"},
		{`{"model":"m","input":[{"type":5}]}`, "input[0].type: want a string, got a number"},
		{`[1,2]`, "expected a JSON object (a Responses request)"},
	}
	for _, c := range cases {
		_, err := protocol.DecodeRequest([]byte(c.body))
		if err == nil {
			t.Errorf("%s: no error", c.body)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.body, err, c.want)
		}
		for _, leak := range []string{"Go value", "json.RawMessage", "protocol:", "cannot unmarshal"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: %q holds %q", c.body, err, leak)
			}
		}
		var re *protocol.RequestError
		if !errors.As(err, &re) || re.Err == nil || errors.Unwrap(err) != re.Err {
			t.Errorf("%s: %T does not carry the decoder's error", c.body, err)
		}
	}
}

// FuzzDecodeRequestErrors: whatever the body, DecodeRequest does not
// panic, and a *RequestError never shows Go type names.
func FuzzDecodeRequestErrors(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","input":[{"type":"message","role":"user","content":3}]}`,
		`{"model":"m","input":"hi","tools":[{"type":"function","name":5}]}`,
		`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":1}]}]}`,
		`{"model":"m","stream":"x","reasoning":{"effort":[]}}`, `[1]`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, err := protocol.DecodeRequest(body)
		var re *protocol.RequestError
		if errors.As(err, &re) {
			if strings.Contains(err.Error(), "Go value") || strings.Contains(err.Error(), "json.RawMessage") {
				t.Errorf("%q: %q", body, err)
			}
		}
	})
}
