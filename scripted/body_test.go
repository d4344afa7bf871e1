package scripted_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/scripted"
)

// A "body" condition compares top-level fields of the request as JSON
// values; null holds for an absent field.
func TestBodyCondition(t *testing.T) {
	s := &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{Body: map[string]json.RawMessage{"max_tokens": json.RawMessage(`5`),
			"temperature": json.RawMessage(`0.1`), "prompt_cache_key": json.RawMessage(`null`)}},
			Text: "limited", FinishReason: "length"},
		{Text: "unlimited"},
	}}
	h := scripted.New(s)
	for _, c := range []struct{ extra, want string }{
		{`,"max_tokens":5,"temperature":0.1`, `"content":"limited"`},
		{`,"max_tokens":5,"temperature":1e-1,"top_p":1`, `"content":"limited"`}, // equal as JSON values; other fields do not matter
		{`,"max_tokens":5`, `"content":"unlimited"`},
		{`,"max_tokens":6,"temperature":0.1`, `"content":"unlimited"`},
		{`,"max_tokens":5,"temperature":0.1,"prompt_cache_key":"k"`, `"content":"unlimited"`},
	} {
		body := `{"model":"m","stream":false,"messages":[` + user + `]` + c.extra + `}`
		w := serve(t, h, http.MethodPost, "/v1/chat/completions", body)
		if w.Code != 200 || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("%s: %d %s, want %s", c.extra, w.Code, w.Body.String(), c.want)
		}
		if c.want == `"content":"limited"` && !strings.Contains(w.Body.String(), `"finish_reason":"length"`) {
			t.Errorf("%s: no length finish: %s", c.extra, w.Body.String())
		}
	}
}
