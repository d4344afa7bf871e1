package protocol

import (
	"encoding/json"
	"reflect"
	"testing"
)

// DecodeRequest rewrites shorthand only when hasShorthand finds it: for
// every form, with and without shorthand, the result equals decoding the
// body after an unconditional normalizeInput.
func TestDecodeRequestShorthandDetection(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","input":"hi"}`,
		`{"model":"m","input":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","input":[{"type":"message","role":"assistant","content":"said"}]}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]}`,
		`{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`,
		`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":"text"},{"role":"user","content":"x"}]}`,
		`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":"only text"}]}`,
		`{"model":"m","input":[{"content":"no role, no type"},{"type":"message","role":"user","content":"late"}]}`,
		`{"input":[],"model":"m"}`,
		`{"model":"m"}`,
		`{"model":"m","input":null}`,
		`{"model":"m","input":[{"role":"user","content":null}]}`,
		`{"model":"m","input":[{"type":"message","role":"user","content":null}]}`,
		`{"model":"m","input":[{"type":"mess\u0061ge","role":"user","content":"escaped type"}]}`,
	} {
		got, err := DecodeRequest([]byte(body))
		norm, nerr := normalizeInput(json.RawMessage(body))
		if nerr != nil {
			t.Fatalf("%s: normalize: %v", body, nerr)
		}
		want := new(ResponsesRequest)
		if werr := want.UnmarshalJSON(norm); werr != nil || err != nil {
			if err == nil || werr == nil || err.Error() != describeRequestError(werr).Error() {
				t.Errorf("%s: error %v, after normalizing %v", body, err, werr)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", body, got, want)
		}
	}
}
