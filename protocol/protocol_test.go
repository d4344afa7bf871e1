package protocol

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/harnessflow/harnessflow/internal/jsonx/jsonxtest"
)

func ptr[T any](v T) *T { return &v }

func TestToTextAndTextContent(t *testing.T) {
	tests := []struct {
		name        string
		p           FunctionCallOutputPayload
		text        string
		textOK      bool
		toText      string
		toTextOK    bool
		wantOnWire  string
		successKept bool
	}{
		{"string", TextPayload("out"), "out", true, "out", true, `"out"`, false},
		{"empty string", TextPayload(""), "", true, "", true, `""`, false},
		{"zero value", FunctionCallOutputPayload{}, "", true, "", true, `""`, false},
		{"text wins over items", FunctionCallOutputPayload{Text: ptr("t"), Items: []FunctionCallOutputContentItem{{Type: ContentInputText, Text: "i"}}}, "t", true, "t", true, `"t"`, false},
		{"items joined", FunctionCallOutputPayload{Items: []FunctionCallOutputContentItem{
			{Type: ContentInputText, Text: "a"},
			{Type: ContentInputImage, ImageURL: "u"},
			{Type: ContentInputText, Text: "  \n"},
			{Type: ContentInputText, Text: ""},
			{Type: ContentInputText, Text: " b "},
		}}, "", false, "a\n b ", true, `[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"u"},{"type":"input_text","text":"  \n"},{"type":"input_text","text":""},{"type":"input_text","text":" b "}]`, false},
		{"items without text", FunctionCallOutputPayload{Items: []FunctionCallOutputContentItem{{Type: ContentInputImage, ImageURL: "u"}}}, "", false, "", false, `[{"type":"input_image","image_url":"u"}]`, false},
		{"empty items", FunctionCallOutputPayload{Items: []FunctionCallOutputContentItem{}}, "", false, "", false, `[]`, false},
		{"success never on wire", FunctionCallOutputPayload{Text: ptr("x"), Success: ptr(false)}, "x", true, "x", true, `"x"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := tt.p.TextContent()
			if s != tt.text || ok != tt.textOK {
				t.Errorf("TextContent() = %q, %v; want %q, %v", s, ok, tt.text, tt.textOK)
			}
			s, ok = tt.p.ToText()
			if s != tt.toText || ok != tt.toTextOK {
				t.Errorf("ToText() = %q, %v; want %q, %v", s, ok, tt.toText, tt.toTextOK)
			}
			b, err := json.Marshal(tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.wantOnWire {
				t.Errorf("wire = %s, want %s", b, tt.wantOnWire)
			}
			var back FunctionCallOutputPayload
			if tt.successKept {
				back.Success = ptr(false)
			}
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if tt.successKept && (back.Success == nil || *back.Success) {
				t.Errorf("UnmarshalJSON changed Success")
			}
		})
	}
}

func TestPayloadDecodeErrors(t *testing.T) {
	for _, in := range []string{`{}`, `1`, `null`, `true`, `[1]`, `[null]`, `["x"]`, `[{"type":"input_text","text":1}]`} {
		var p FunctionCallOutputPayload
		err := json.Unmarshal([]byte(in), &p)
		if err == nil {
			t.Errorf("%s: no error", in)
		} else if !strings.Contains(err.Error(), "protocol: function call output") {
			t.Errorf("%s: error lacks context: %v", in, err)
		}
	}
}

func TestToolName(t *testing.T) {
	tests := []struct {
		spec ToolSpec
		want string
	}{
		{ToolSpec{Type: ToolTypeFunction, Name: "shell"}, "shell"},
		{ToolSpec{Type: ToolTypeCustom, Name: "apply_patch"}, "apply_patch"},
		{ToolSpec{Type: ToolTypeNamespace, Name: "mcp__fs"}, "mcp__fs"},
		{ToolSpec{Type: ToolTypeFunction}, ""},
		{ToolSpec{Type: ToolTypeToolSearch, Name: "ignored"}, "tool_search"},
		{ToolSpec{Type: ToolTypeLocalShell}, "local_shell"},
		{ToolSpec{Type: ToolTypeImageGeneration}, "image_generation"},
		{ToolSpec{Type: ToolTypeWebSearch}, "web_search"},
		{ToolSpec{Type: "mcp", Name: "x"}, "x"},
		{ToolSpec{Type: "mcp"}, "mcp"},
	}
	for _, tt := range tests {
		if got := tt.spec.ToolName(); got != tt.want {
			t.Errorf("%+v.ToolName() = %q, want %q", tt.spec, got, tt.want)
		}
	}
	// Decoded tools report the same names.
	var ts []ToolSpec
	in := `[{"type":"function","name":"f"},{"type":"web_search"},{"type":"mcp","name":"m"},{"type":"namespace","name":"ns","tools":[]}]`
	if err := json.Unmarshal([]byte(in), &ts); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range ts {
		names = append(names, s.ToolName())
	}
	if diff := cmp.Diff([]string{"f", "web_search", "m", "ns"}, names); diff != "" {
		t.Error(diff)
	}
}

func TestToolSpecRaw(t *testing.T) {
	var ts ToolSpec
	in := `{"type":"web_search", "search_context_size":"low"}`
	if err := json.Unmarshal([]byte(in), &ts); err != nil {
		t.Fatal(err)
	}
	if string(ts.Raw) != `{"type":"web_search","search_context_size":"low"}` {
		t.Errorf("Raw = %s", ts.Raw)
	}
	// A tool built from raw JSON only is forwarded verbatim.
	b, err := json.Marshal(ToolSpec{Raw: json.RawMessage(`{"type":"x", "z":1,"a":2}`)})
	if err != nil || string(b) != `{"type":"x","z":1,"a":2}` {
		t.Errorf("raw tool = %s, %v", b, err)
	}
	if _, err := json.Marshal(ToolSpec{Raw: json.RawMessage(`{`)}); err == nil {
		t.Error("invalid Raw: no error")
	}
	if err := json.Unmarshal([]byte(`{"name":"x"}`), &ts); err == nil || !strings.Contains(err.Error(), "protocol: tool") {
		t.Errorf("tool without type: %v", err)
	}
}

func TestToolKindsJSON(t *testing.T) {
	kinds := ToolKinds{
		"shell":         {Kind: KindFunction},
		"apply_patch":   {Kind: KindCustom},
		"mcp__fs__read": {Kind: KindNamespacedFunction, Name: "read", Namespace: "mcp__fs"},
	}
	b, err := json.Marshal(kinds)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apply_patch":{"kind":"custom"},"mcp__fs__read":{"kind":"namespaced_function","name":"read","namespace":"mcp__fs"},"shell":{"kind":"function"}}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	var back ToolKinds
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kinds, back); diff != "" {
		t.Error(diff)
	}
	for _, in := range []string{`{"kind":"nope"}`, `{}`, `[]`, `{"kind":1}`} {
		var k ToolOutputKind
		if err := json.Unmarshal([]byte(in), &k); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestItemDecodeErrors(t *testing.T) {
	bad := []string{
		``, `null`, `[]`, `"message"`, `1`, `{`, `{"type":1}`, `{"role":"user"}`, `{"type":null}`,
		`{"type":"message","content":{}}`,
		`{"type":"message","content":[1]}`,
		`{"type":"message","role":5,"content":[]}`,
		`{"type":"message","content":[{"type":"input_text","text":false}]}`,
		`{"type":"reasoning","summary":"x"}`,
		`{"type":"reasoning","summary":[],"content":[3]}`,
		`{"type":"reasoning","encrypted_content":1}`,
		`{"type":"local_shell_call","action":[]}`,
		`{"type":"local_shell_call","action":{"command":"ls"}}`,
		`{"type":"local_shell_call","action":{"command":[],"timeout_ms":-1}}`,
		`{"type":"local_shell_call","action":{"command":[],"env":[]}}`,
		`{"type":"function_call","arguments":{}}`,
		`{"type":"function_call_output","output":{"content":"x"}}`,
		`{"type":"custom_tool_call_output","output":5}`,
		`{"type":"tool_search_output","tools":{}}`,
		`{"type":"web_search_call","action":"search"}`,
		`{"type":"web_search_call","action":{"queries":"q"}}`,
		`{"type":"message"} trailing`,
	}
	for _, in := range bad {
		it, err := UnmarshalItem([]byte(in))
		if err == nil {
			t.Errorf("%s: no error, got %#v", in, it)
			continue
		}
		if !strings.HasPrefix(err.Error(), "protocol: response item: ") {
			t.Errorf("%s: error lacks context: %v", in, err)
		}
	}
	var it Items
	if err := json.Unmarshal([]byte(`[{"type":"message","role":"user","content":[]},{"type":2}]`), &it); err == nil || !strings.Contains(err.Error(), "items[1]") {
		t.Errorf("Items error = %v", err)
	}
}

func TestMarshalErrors(t *testing.T) {
	for _, it := range []ResponseItem{nil, (*Message)(nil), (*OtherItem)(nil)} {
		if _, err := MarshalItem(it); err == nil {
			t.Errorf("MarshalItem(%#v): no error", it)
		}
	}
	if _, err := json.Marshal(Items{UserMessage("a"), nil}); err == nil || !strings.Contains(err.Error(), "items[1]") {
		t.Errorf("Items with nil: %v", err)
	}
	badRaw := []ResponseItem{
		&OtherItem{Type: "x", Raw: json.RawMessage(`{"type":`)},
		&ToolSearchCall{Arguments: json.RawMessage(`{bad}`)},
		&Message{Role: "user", Extra: Extra{"k": json.RawMessage(`nope`)}},
	}
	for _, it := range badRaw {
		if b, err := MarshalItem(it); err == nil {
			t.Errorf("MarshalItem(%#v) = %s, want error", it, b)
		}
		if _, err := Done(it).AppendJSON(nil); err == nil || !strings.Contains(err.Error(), "protocol: event output_item.done") {
			t.Errorf("AppendJSON with bad item: %v", err)
		}
	}
}

func TestExtraDoesNotDuplicateKnownFields(t *testing.T) {
	m := &Message{Role: "user", Content: []ContentItem{}, Extra: Extra{
		"role": json.RawMessage(`"system"`), "type": json.RawMessage(`"x"`), "z": json.RawMessage(`1`),
	}}
	b, err := MarshalItem(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"message","role":"user","content":[],"z":1}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	r := &Reasoning{Content: []ReasoningContent{{Type: ReasoningTypeRawText, Text: "x"}},
		Extra: Extra{"content": json.RawMessage(`"sneaky"`)}}
	b, err = MarshalItem(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"reasoning","summary":[],"encrypted_content":null}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestConcreteTypesWithEncodingJSON(t *testing.T) {
	fc := FunctionCall{Name: "shell", Arguments: `{"a":1}`, CallID: "c"}
	want := `{"type":"function_call","name":"shell","arguments":"{\"a\":1}","call_id":"c"}`
	for _, v := range []any{fc, &fc} {
		b, err := json.Marshal(v)
		if err != nil || string(b) != want {
			t.Errorf("json.Marshal(%T) = %s, %v", v, b, err)
		}
	}
	var got FunctionCall
	if err := json.Unmarshal([]byte(want), &got); err != nil || !cmp.Equal(got, fc) {
		t.Errorf("Unmarshal = %+v, %v", got, err)
	}
	var m Message
	if err := json.Unmarshal([]byte(want), &m); err == nil || !strings.Contains(err.Error(), `type "function_call", want "message"`) {
		t.Errorf("Unmarshal into wrong type: %v", err)
	}
	var o OtherItem
	if err := json.Unmarshal([]byte(`{"type":"message", "role":"user"}`), &o); err != nil || o.Type != "message" || string(o.Raw) != `{"type":"message","role":"user"}` {
		t.Errorf("OtherItem = %+v, %v", o, err)
	}
	if b, err := MarshalItem(&OtherItem{Type: "t"}); err != nil || string(b) != `{"type":"t"}` {
		t.Errorf("OtherItem without Raw = %s, %v", b, err)
	}
	// Defaults of hand-built values.
	b, err := MarshalItem(&LocalShellCall{Status: "completed", Action: LocalShellAction{Command: []string{"ls"}}})
	if want := `{"type":"local_shell_call","call_id":null,"status":"completed","action":{"type":"exec","command":["ls"],"timeout_ms":null,"working_directory":null,"env":null,"user":null}}`; err != nil || string(b) != want {
		t.Errorf("LocalShellCall = %s, %v", b, err)
	}
	b, err = MarshalItem(&Message{Role: "user"})
	if want := `{"type":"message","role":"user","content":[]}`; err != nil || string(b) != want {
		t.Errorf("Message = %s, %v", b, err)
	}
}

func TestItemsAndPrompt(t *testing.T) {
	var nilItems Items
	if b, err := json.Marshal(nilItems); err != nil || string(b) != `[]` {
		t.Errorf("nil Items = %s, %v", b, err)
	}
	var back Items
	if err := json.Unmarshal([]byte(`null`), &back); err != nil || back != nil {
		t.Errorf("null Items = %#v, %v", back, err)
	}
	p := Prompt{
		Input:             []ResponseItem{UserMessage("hi"), &FunctionCall{Name: "f", Arguments: "{}", CallID: "c"}},
		Tools:             []ToolSpec{{Type: ToolTypeLocalShell}},
		ParallelToolCalls: true,
		Cwd:               "/w",
		BaseInstructions:  "Approval policy is currently never.",
		OutputSchema:      json.RawMessage(`{"type":"object"}`),
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var p2 Prompt
	if err := json.Unmarshal(b, &p2); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, p2, ignoreRaw); diff != "" {
		t.Errorf("prompt round trip (-want +got):\n%s", diff)
	}
}

func TestEventConstructors(t *testing.T) {
	u := &TokenUsage{InputTokens: 3, TotalTokens: 3}
	cases := []struct {
		ev   ResponseEvent
		want string
	}{
		{Created(), `{"type":"created"}`},
		{ServerModel("m"), `{"type":"server_model","model":"m"}`},
		{Added(AssistantMessage("")), `{"type":"output_item.added","item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":""}]}}`},
		{Done(nil), `{"type":"output_item.done","item":null}`},
		{TextDelta("<&>"), `{"type":"output_text.delta","delta":"<&>"}`},
		{ReasoningDelta("r", 1), `{"type":"reasoning_content.delta","delta":"r","content_index":1}`},
		{SummaryDelta("s", 2), `{"type":"reasoning_summary.delta","delta":"s","summary_index":2}`},
		{SummaryPartAdded(0), `{"type":"reasoning_summary_part.added","summary_index":0}`},
		{ToolInputDelta("i", "", "d"), `{"type":"tool_call_input.delta","item_id":"i","delta":"d"}`},
		{Completed("r", u), `{"type":"completed","response_id":"r","token_usage":{"input_tokens":3,"cached_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0,"total_tokens":3}}`},
		{Completed("r", nil), `{"type":"completed","response_id":"r"}`},
		{Failed(&StreamError{Kind: ErrKindTruncated, Message: "eof", Retryable: true}), `{"type":"failed","error":{"kind":"upstream_truncated","message":"eof","retryable":true}}`},
		{Failed(nil), `{"type":"failed","error":null}`},
		{ResponseEvent{Type: "x", Delta: "ignored"}, `{"type":"x"}`},
	}
	for _, c := range cases {
		b, err := c.ev.AppendJSON([]byte("prefix:"))
		if err != nil || string(b) != "prefix:"+c.want {
			t.Errorf("AppendJSON = %s, %v\nwant prefix:%s", b, err, c.want)
		}
		mb, err := json.Marshal(c.ev)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(decodeAny(t, []byte(c.want)), decodeAny(t, mb)); diff != "" {
			t.Errorf("json.Marshal differs:\n%s", diff)
		}
	}
	if !Completed("", nil).IsTerminal() || !Failed(nil).IsTerminal() || TextDelta("").IsTerminal() {
		t.Error("IsTerminal")
	}
	e := &StreamError{Kind: ErrKindUpstream, Code: "rate_limit", Message: "slow down"}
	if e.Error() != "protocol: stream upstream_error (rate_limit): slow down" {
		t.Errorf("Error() = %q", e.Error())
	}
}

func TestEventDecodeErrors(t *testing.T) {
	for _, in := range []string{
		`null`, `[]`, `{}`, `{"type":3}`,
		`{"type":"output_text.delta","delta":1}`,
		`{"type":"reasoning_content.delta","content_index":"0"}`,
		`{"type":"output_item.done","item":{"type":"message","content":5}}`,
		`{"type":"output_item.done","item":[]}`,
		`{"type":"completed","token_usage":[]}`,
		`{"type":"completed","token_usage":{"input_tokens":1.5}}`,
		`{"type":"completed","end_turn":"yes"}`,
		`{"type":"failed","error":"boom"}`,
		`{"type":"failed","error":{"retryable":"yes"}}`,
	} {
		var e ResponseEvent
		if err := json.Unmarshal([]byte(in), &e); err == nil {
			t.Errorf("%s: no error, got %+v", in, e)
		} else if !strings.Contains(err.Error(), "protocol: event") {
			t.Errorf("%s: error lacks context: %v", in, err)
		}
	}
}

// TestDeltaFastPathMatchesReflection compares the hand-written delta encodings with
// encoding/json (reflection) output for random strings.
func TestDeltaFastPathMatchesReflection(t *testing.T) {
	type textDelta struct {
		Type  string `json:"type"`
		Delta string `json:"delta"`
	}
	type contentDelta struct {
		Type         string `json:"type"`
		Delta        string `json:"delta"`
		ContentIndex int    `json:"content_index"`
	}
	type summaryDelta struct {
		Type         string `json:"type"`
		Delta        string `json:"delta"`
		SummaryIndex int    `json:"summary_index"`
	}
	ref := func(v any) string { return jsonxtest.Encode(t, v) }
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		s, idx := jsonxtest.RandomString(r), r.IntN(100)-10
		check := func(ev ResponseEvent, want string) {
			t.Helper()
			got, err := ev.AppendJSON(nil)
			if err != nil || string(got) != want {
				t.Fatalf("%q: got %s, %v\nwant %s", s, got, err, want)
			}
			var back ResponseEvent
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if utf8.ValidString(s) && !cmp.Equal(back, ev) {
				t.Fatalf("round trip: %+v != %+v", back, ev)
			}
		}
		check(TextDelta(s), ref(textDelta{string(EventOutputTextDelta), s}))
		check(ReasoningDelta(s, idx), ref(contentDelta{string(EventReasoningContentDelta), s, idx}))
		check(SummaryDelta(s, idx), ref(summaryDelta{string(EventReasoningSummaryDelta), s, idx}))
	}
}

func TestDeltaFastPathAllocs(t *testing.T) {
	buf := make([]byte, 0, 4096)
	ev := ReasoningDelta("some <reasoning> text with \"quotes\" and ✓", 0)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		buf, err = ev.AppendJSON(buf[:0])
		if err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("AppendJSON allocates %v times per call", allocs)
	}
}

// goldenSeeds returns the NAME.json sections of a testdata archive.
func goldenSeeds(f *testing.F, file string) [][]byte {
	ar, err := txtar.ParseFile(filepath.Join("testdata", file))
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, s := range ar.Files {
		if strings.HasSuffix(s.Name, ".json") {
			out = append(out, s.Data)
		}
	}
	return out
}

func FuzzItemRoundTrip(f *testing.F) {
	for _, s := range goldenSeeds(f, "items.txtar") {
		f.Add(s)
	}
	f.Add([]byte(`{"type":"message","content":[{"type":"input_text","text":"\xff"}],"\xfe":"\xfd"}`))
	f.Add([]byte(`{"type":"reasoning","content":[{"type":"text"}],"content":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d1, err := UnmarshalItem(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "protocol: response item: ") {
				t.Fatalf("error lacks context: %v", err)
			}
			return
		}
		e1, err := MarshalItem(d1)
		if err != nil {
			t.Fatalf("decoded item does not encode: %v\n%#v", err, d1)
		}
		if !json.Valid(e1) {
			t.Fatalf("invalid JSON: %s", e1)
		}
		d2, err := UnmarshalItem(e1)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", e1, err)
		}
		if diff := cmp.Diff(canonicalItem(d1), d2); diff != "" {
			t.Fatalf("re-decode differs (-first +second):\n%s\nencoding: %s", diff, e1)
		}
		e2, err := MarshalItem(d2)
		if err != nil {
			t.Fatal(err)
		}
		eCanon, _ := MarshalItem(canonicalItem(d1))
		if !bytes.Equal(eCanon, e2) {
			t.Fatalf("encoding not stable:\n%s\n%s", eCanon, e2)
		}
		// The same item wrapped in an event round-trips too.
		eb, err := Done(d2).AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var ev ResponseEvent
		if err := json.Unmarshal(eb, &ev); err != nil {
			t.Fatalf("event re-decode of %s: %v", eb, err)
		}
		if diff := cmp.Diff(d2, ev.Item); diff != "" {
			t.Fatalf("event item differs:\n%s", diff)
		}
	})
}

func FuzzEventRoundTrip(f *testing.F) {
	for _, s := range goldenSeeds(f, "events.txtar") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var e1 ResponseEvent
		if err := json.Unmarshal(data, &e1); err != nil {
			return
		}
		b1, err := e1.AppendJSON(nil)
		if err != nil {
			t.Fatalf("decoded event does not encode: %v", err)
		}
		if !json.Valid(b1) || !bytes.HasPrefix(b1, []byte(`{"type":`)) {
			t.Fatalf("bad encoding %s", b1)
		}
		var e2 ResponseEvent
		if err := json.Unmarshal(b1, &e2); err != nil {
			t.Fatalf("re-decode of %s: %v", b1, err)
		}
		if diff := cmp.Diff(eventCodec.canon(e1), e2); diff != "" {
			t.Fatalf("re-decode differs:\n%s", diff)
		}
	})
}

func BenchmarkAppendJSONTextDelta(b *testing.B) {
	ev := TextDelta("The quick brown fox jumps over the lazy dog, <again> & again.\n")
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = ev.AppendJSON(buf[:0])
	}
}

func BenchmarkJSONMarshalTextDelta(b *testing.B) {
	ev := TextDelta("The quick brown fox jumps over the lazy dog, <again> & again.\n")
	b.ReportAllocs()
	for b.Loop() {
		_, _ = json.Marshal(ev)
	}
}

func BenchmarkUnmarshalItem(b *testing.B) {
	data := []byte(`{"type":"function_call","id":"fc_1","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls -la\"]}","call_id":"call_1"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := UnmarshalItem(data); err != nil {
			b.Fatal(err)
		}
	}
}
