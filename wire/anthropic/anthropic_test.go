package anthropic

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/internal/jsonx/jsonxtest"
	"github.com/harnessflow/harnessflow/wire/anthropic/anthropictest"
)

func value(t testing.TB, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return v
}

func bodies(t *testing.T) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata bodies: %v", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	return out
}

// A forwarded body keeps every field, known or not, at every level, and
// encodes the same way every time.
func TestRoundTrip(t *testing.T) {
	extra := `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"t","citations":[{"x":1}],"cache_control":{"type":"ephemeral","ttl":"5m","z":1}},` +
		`{"type":"document","source":{"type":"text","data":"d"},"title":"doc"},{"type":"tool_result","tool_use_id":"a","content":null}],"x_msg":true}],` +
		`"system":"plain system","tools":[{"name":"f","input_schema":{"type":"object"},"input_examples":[{}],"cache_control":{"type":"ephemeral"}}],` +
		`"thinking":{"type":"enabled","budget_tokens":10,"block_binding":{}},"context_management":{"edits":[{"type":"clear_tool_uses_20250919","trigger":{"type":"input_tokens","value":1}}],"q":1},` +
		`"output_config":{"effort":"low","task_budget":{}},"metadata":{"user_id":"u","x":2},"max_tokens":5,"stop_sequences":["x"],"top_k":3}`
	for name, body := range bodies(t) {
		t.Run(name, func(t *testing.T) { checkRoundTrip(t, body) })
	}
	t.Run("extra", func(t *testing.T) {
		// content:null of a tool result is the same as absent.
		checkRoundTrip(t, []byte(strings.Replace(extra, `,"content":null`, "", 1)))
	})
}

func checkRoundTrip(t *testing.T, body []byte) {
	t.Helper()
	var r Request
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	out, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(value(t, body), value(t, out)); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	again, _ := r.AppendJSON(nil)
	if !bytes.Equal(out, again) {
		t.Errorf("two encodings differ")
	}
}

// Every test body decodes with the official SDK's request type without
// losing or changing a field.
func TestOracle(t *testing.T) {
	for name, body := range bodies(t) {
		var r Request
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		out, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		d, err := anthropictest.Diff(out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d != "" {
			t.Errorf("%s: anthropic-sdk-go round trip lost or changed fields (-ours +sdk):\n%s", name, d)
		}
	}
}

// The oracle notices fields and shapes the SDK does not know.
func TestOracleCatchesLoss(t *testing.T) {
	for name, body := range map[string]string{
		"misspelt field":  `{"model":"m","max_tokens":1,"messages":[],"thinkin":{"type":"adaptive"}}`,
		"block field":     `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"a","cache":{"type":"ephemeral"}}]}]}`,
		"tool_use shape":  `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","arguments":"{}"}]}]}`,
		"tool field":      `{"model":"m","max_tokens":1,"messages":[],"tools":[{"name":"f","input_schema":{"type":"object"},"parameters":{}}]}`,
		"thinking budget": `{"model":"m","max_tokens":1,"messages":[],"thinking":{"type":"enabled","budget":5}}`,
	} {
		d, err := anthropictest.Diff([]byte(body))
		if err == nil && d == "" {
			t.Errorf("%s: the oracle did not notice", name)
		}
	}
}

// Strings are escaped exactly as encoding/json does with SetEscapeHTML(false).
func TestStringEscaping(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		s := jsonxtest.RandomString(r)
		m := Message{Role: "user", Content: Blocks(TextBlock(s))}
		got, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want := `{"role":"user","content":[{"type":"text","text":` + jsonxtest.Encode(t, s) + "}]}"
		if string(got) != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
}

func TestEncodeDefaults(t *testing.T) {
	yes := true
	r := Request{Model: "m", MaxTokens: 10, Stream: &yes,
		Tools:    []Tool{{Name: "f"}, {Type: "web_search_20250305", Name: "web_search"}},
		Messages: []Message{{Role: "assistant", Content: Blocks(Block{Type: BlockToolUse, ID: "c", Name: "f"}, Block{Type: BlockThinking})}}}
	got, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"f","input":{}},{"type":"thinking","thinking":"","signature":""}]}],` +
		`"tools":[{"name":"f","input_schema":{"type":"object","properties":{}}},{"type":"web_search_20250305","name":"web_search"}],"max_tokens":10,"stream":true}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	empty, _ := Request{}.MarshalJSON()
	if string(empty) != `{"model":"","messages":[],"max_tokens":0}` {
		t.Errorf("empty request: %s", empty)
	}
	absent, _ := Message{Role: "user"}.MarshalJSON()
	if string(absent) != `{"role":"user","content":null}` {
		t.Errorf("message without content: %s", absent)
	}
	res, _ := Block{Type: BlockToolResult, ToolUseID: "c", CacheControl: &CacheControl{}}.MarshalJSON()
	if string(res) != `{"type":"tool_result","tool_use_id":"c","cache_control":{"type":"ephemeral"}}` {
		t.Errorf("tool result without content: %s", res)
	}
}

func TestTemperature(t *testing.T) {
	for f, want := range map[float64]string{1: "1", 0.5: "0.5", 0: "0", 1e-7: "1e-7", 1e21: "1e+21", -2.25: "-2.25"} {
		r := Request{Model: "m", Temperature: &f}
		got, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), `"temperature":`+want+`,`) {
			t.Errorf("%v: %s", f, got)
		}
		if ref := jsonxtest.Encode(t, f); ref != want {
			t.Errorf("%v: encoding/json writes %s, the test wants %s", f, ref, want)
		}
	}
	nan := math.NaN()
	if _, err := (Request{Temperature: &nan}).MarshalJSON(); err == nil {
		t.Error("NaN temperature: no error")
	}
}

func TestEncodeInvalidRaw(t *testing.T) {
	for name, tc := range map[string]struct {
		r     Request
		where string
	}{
		"tool schema": {Request{Tools: []Tool{{Name: "f", InputSchema: json.RawMessage(`{`)}}}, "tools[0]: field input_schema"},
		"tool_choice": {Request{ToolChoice: json.RawMessage(`nope`)}, "field tool_choice"},
		"tool input": {Request{Messages: []Message{{Role: "assistant", Content: Blocks(Block{Type: BlockToolUse, Input: json.RawMessage(`{"a"}`)})}}},
			"messages[0]: [0]: field input"},
		"nested result": {Request{Messages: []Message{{Role: "user", Content: Blocks(Block{Type: BlockToolResult,
			Content: &Content{Kind: ContentBlocks, Blocks: []Block{{Type: BlockImage, Source: json.RawMessage(`x`)}}}})}}},
			"messages[0]: [0]: content[0]: field source"},
		"extra": {Request{Messages: []Message{{Role: "user", Extra: Extra{"x": json.RawMessage(`[`)}}}}, "messages[0]: field x"},
		"keep":  {Request{ContextManagement: &ContextManagement{Edits: []ContextEdit{{Type: "t", Keep: json.RawMessage(`al`)}}}}, "field keep"},
	} {
		_, err := tc.r.MarshalJSON()
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.Contains(err.Error(), "invalid JSON") || !strings.Contains(err.Error(), tc.where) {
			t.Errorf("%s: %v, want it to say %q", name, err, tc.where)
		}
	}
}

// Extra never overrides a known field.
func TestExtraCollision(t *testing.T) {
	r := Request{Model: "m", MaxTokens: 1, Extra: Extra{"model": json.RawMessage(`"other"`), "max_tokens": json.RawMessage(`2`), "top_k": json.RawMessage(`1`)}}
	got, _ := r.MarshalJSON()
	if string(got) != `{"model":"m","messages":[],"max_tokens":1,"top_k":1}` {
		t.Errorf("got %s", got)
	}
	b := Block{Type: BlockText, Text: "a", Extra: Extra{"text": json.RawMessage(`"b"`), "signature": json.RawMessage(`"s"`)}}
	got, _ = b.MarshalJSON()
	if string(got) != `{"type":"text","text":"a"}` {
		t.Errorf("block: got %s", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, in := range []string{
		`[]`, `{"model":1}`, `{"messages":{}}`, `{"messages":[{"content":5}]}`, `{"messages":[{"content":[1]}]}`,
		`{"system":3}`, `{"tools":[[]]}`, `{"max_tokens":"x"}`, `{"thinking":[]}`, `{"temperature":"hot"}`,
		`{"context_management":{"edits":[1]}}`, `{"messages":[{"content":[{"type":"tool_result","content":7}]}]}`,
		`{"messages":[{"content":[{"type":"text","cache_control":[]}]}]}`, `{"metadata":{"user_id":1}}`, `{`,
	} {
		var r Request
		if err := json.Unmarshal([]byte(in), &r); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestContentIsEmpty(t *testing.T) {
	for c, want := range map[*Content]bool{
		{}: true, {Kind: ContentText}: true, {Kind: ContentBlocks}: true,
		{Kind: ContentText, Text: "x"}: false, {Kind: ContentBlocks, Blocks: []Block{TextBlock("")}}: false,
	} {
		if c.IsEmpty() != want {
			t.Errorf("%+v.IsEmpty() = %v", *c, !want)
		}
	}
}

// FuzzRoundTrip: whatever decodes re-encodes to valid JSON that decodes to
// the same value.
func FuzzRoundTrip(f *testing.F) {
	for _, p := range []string{"testdata/claude_code_like.json", "testdata/title_like.json"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[]}],"max_tokens":1}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"","content":""}]}],"tools":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Request
		if json.Unmarshal(data, &r) != nil {
			return
		}
		out, err := r.MarshalJSON()
		if err != nil {
			return // a value the encoder refuses (a NaN cannot come from JSON; invalid raw cannot either)
		}
		var r2 Request
		if err := json.Unmarshal(out, &r2); err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out)
		}
		out2, err := r2.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}
