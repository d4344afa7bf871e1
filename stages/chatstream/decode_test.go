package chatstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/stages/sse"
)

func decodeOne(t testing.TB, data string) (view, string) {
	t.Helper()
	var d chunkDecoder
	c, msg, _ := d.decodeMsg([]byte(data))
	if msg != "" {
		return view{}, msg
	}
	return viewOf(*c), ""
}

func str(s string) *string { return &s }

func TestDecoderTable(t *testing.T) {
	tests := []struct {
		name, in string
		want     view   // compared when err == ""
		err      string // substring of the expected problem
	}{
		{name: "plain", in: `{"id":"a","model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`,
			want: view{ID: str("a"), Model: str("m"), Choices: []choiceView{{Content: []string{"hi"}}}}},
		{name: "escapes", in: `{"choices":[{"delta":{"content":"q\"b\\s\/n\nt\tr\rb\bf\fu\u00e9\u4e2d"}}]}`,
			want: view{Choices: []choiceView{{Content: []string{"q\"b\\s/n\nt\tr\rb\bf\fué中"}}}}},
		{name: "surrogate pair", in: `{"choices":[{"delta":{"content":"\ud83d\ude00"}}]}`,
			want: view{Choices: []choiceView{{Content: []string{"😀"}}}}},
		{name: "lone high surrogate", in: `{"choices":[{"delta":{"content":"a\ud83db"}}]}`,
			want: view{Choices: []choiceView{{Content: []string{"a\uFFFDb"}}}}},
		{name: "high then non-low escape", in: `{"choices":[{"delta":{"content":"\ud83d\u0041"}}]}`,
			want: view{Choices: []choiceView{{Content: []string{"\uFFFDA"}}}}},
		{name: "lone low surrogate", in: `{"choices":[{"delta":{"content":"\ude00x"}}]}`,
			want: view{Choices: []choiceView{{Content: []string{"\uFFFDx"}}}}},
		{name: "two high surrogates", in: `{"choices":[{"delta":{"content":"\ud83d\ud83d\ude00"}}]}`,
			want: view{Choices: []choiceView{{Content: []string{"\uFFFD😀"}}}}},
		{name: "invalid utf8 bytes", in: "{\"choices\":[{\"delta\":{\"content\":\"a\xffb\xed\xa0\x80c\"}}]}",
			want: view{Choices: []choiceView{{Content: []string{"a\uFFFDb\uFFFD\uFFFD\uFFFDc"}}}}},
		{name: "raw utf8 kept", in: `{"choices":[{"delta":{"content":"café 中文 😀"}}]}`,
			want: view{Choices: []choiceView{{Content: []string{"café 中文 😀"}}}}},
		{name: "escaped key", in: `{"choices":[{"delta":{"con\u0074ent":"x"}}]}`,
			want: view{Choices: []choiceView{{Content: []string{"x"}}}}},
		{name: "keys are case-sensitive", in: `{"choices":[{"delta":{"Content":"x"}}]}`,
			want: view{Choices: []choiceView{{}}}},
		{name: "unknown nested fields", in: `{"x":{"a":[1,{"b":"}]\"","c":[[],{}]}],"d":-1.5e+3},"choices":[{"logprobs":{"content":[{"token":"a","bytes":[97]}]},"delta":{"content":"y","obfuscation":"\"}"}}],"z":[true,false,null]}`,
			want: view{Choices: []choiceView{{Content: []string{"y"}}}}},
		{name: "nulls are absent", in: `{"id":null,"model":null,"choices":[{"delta":{"content":null,"reasoning_content":null,"tool_calls":null},"finish_reason":null}],"usage":null,"error":null}`,
			want: view{Choices: []choiceView{{}}}},
		{name: "number where string expected is absent", in: `{"id":5,"choices":[{"delta":{"content":7,"reasoning_content":true},"finish_reason":0}]}`,
			want: view{Choices: []choiceView{{}}}},
		{name: "string where object expected is absent", in: `{"choices":[{"delta":"content"}],"usage":"lots"}`,
			want: view{Choices: []choiceView{{}}}},
		{name: "last duplicate wins", in: `{"id":"a","id":"b","choices":[{"delta":{"content":"1"},"delta":{"content":"2"}}]}`,
			want: view{ID: str("b"), Choices: []choiceView{{Content: []string{"2"}}}}},
		{name: "duplicate then wrong type clears", in: `{"model":"m","model":1}`, want: view{}},
		{name: "content array and object", in: `{"choices":[{"delta":{"content":[{"type":"text","text":"a"},"s",{"text":5},{"text":""},{"type":"image_url"}]}},{"delta":{"content":{"text":"o"}}}]}`,
			want: view{Choices: []choiceView{{Content: []string{"a", ""}}, {Content: []string{"o"}}}}},
		{name: "refusal", in: `{"choices":[{"delta":{"content":null,"refusal":"I can't help with that."}}]}`,
			want: view{Choices: []choiceView{{Refusal: str("I can't help with that.")}}}},
		{name: "empty string content", in: `{"choices":[{"delta":{"content":""}}]}`,
			want: view{Choices: []choiceView{{Content: []string{""}}}}},
		{name: "reasoning precedence", in: `{"choices":[{"delta":{"reasoning_details":[{"text":"d"}],"reasoning":"r","reasoning_content":"c"}}]}`,
			want: view{Choices: []choiceView{{Reasoning: str("c"), Source: ReasoningContent}}}},
		{name: "empty reasoning_content falls back", in: `{"choices":[{"delta":{"reasoning_content":"","reasoning":{"content":"r"}}}]}`,
			want: view{Choices: []choiceView{{Reasoning: str("r"), Source: ReasoningField}}}},
		{name: "reasoning details joined", in: `{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.text","text":"a\u00e9"},{"type":"reasoning.encrypted","data":"zz"},{"summary":"b"}]}}]}`,
			want: view{Choices: []choiceView{{Reasoning: str("aéb"), Source: ReasoningDetails}}}},
		{name: "tool call fields", in: `{"choices":[{"delta":{"tool_calls":[{"index":2,"id":"c","type":"function","function":{"name":"n","arguments":"{\"a\":\"\\u00e9\"}"},"extra_content":{"g":{"s":"x"}}},{"index":-1},{"index":1.0},{"index":"0"},{"index":99999999999999999999},5]}}]}`,
			want: view{Choices: []choiceView{{Calls: []callView{
				{Index: 2, HasIndex: true, ID: str("c"), Type: str("function"), Name: str("n"), Args: str(`{"a":"\u00e9"}`), Extra: str(`{"g":{"s":"x"}}`)},
				{}, {}, {}, {},
			}}}}},
		{name: "arguments object compacted", in: `{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":{ "a" : [ 1 , "x y" ] } }}]}}]}`,
			want: view{Choices: []choiceView{{Calls: []callView{{Args: str(`{"a":[1,"x y"]}`), ArgsJSON: true}}}}}},
		{name: "usage", in: `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4},"cached_tokens":9,"completion_tokens_details":{"reasoning_tokens":2},"cost":1.5e-5}}`,
			want: view{HasUsage: true, Usage: Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15, CachedTokens: 4, ReasoningTokens: 2, HasTotal: true, Known: true}}},
		{name: "usage fraction and overflow absent", in: `{"usage":{"prompt_tokens":1.0,"completion_tokens":1e2,"total_tokens":9223372036854775808,"prompt_cache_hit_tokens":-3}}`,
			want: view{HasUsage: true, Usage: Usage{CachedTokens: -3, Known: true}}},
		{name: "usage int64 bounds", in: `{"usage":{"prompt_tokens":9223372036854775807,"completion_tokens":-9223372036854775808}}`,
			want: view{HasUsage: true, Usage: Usage{PromptTokens: 9223372036854775807, CompletionTokens: -9223372036854775808, Known: true}}},
		{name: "empty usage", in: `{"usage":{}}`, want: view{HasUsage: true}},
		{name: "error object", in: `{"error":{"message":"m","type":"t","code":"c","param":null}}`,
			want: view{Kind: ChunkError, ErrMsg: str("m"), ErrType: str("t"), ErrCode: str("c")}},
		{name: "error numeric code", in: `{"error":{"message":"m","code":502}}`,
			want: view{Kind: ChunkError, ErrMsg: str("m"), ErrCode: str("502")}},
		{name: "error string", in: `{"error":"boom"}`, want: view{Kind: ChunkError, ErrMsg: str("boom")}},
		{name: "error other", in: `{"error":[1, 2]}`, want: view{Kind: ChunkError, ErrMsg: str("[1, 2]")}},
		{name: "error then null", in: `{"error":"x","error":null}`, want: view{}},
		{name: "whitespace everywhere", in: " \r\n\t{ \"choices\" : [ { \"delta\" : { \"content\" : \"x\" } } ] } \n",
			want: view{Choices: []choiceView{{Content: []string{"x"}}}}},

		{name: "truncated", in: `{"choices":[{"delta":{"content":"x`, err: "data byte 34: unexpected end of data in string literal"},
		{name: "empty", in: ``, err: "unexpected end of data looking for beginning of value"},
		{name: "trailing garbage", in: `{"a":1} x`, err: "after top-level value"},
		{name: "two objects", in: `{}{}`, err: "after top-level value"},
		{name: "not an object", in: `"[DONE]x"`, err: "want a JSON object, got a string"},
		{name: "array top", in: `[1]`, err: "got an array"},
		{name: "null top", in: `null`, err: "got null"},
		{name: "bad escape", in: `{"a":"\q"}`, err: `invalid character 'q' in string escape code`},
		{name: "bad unicode escape", in: `{"a":"\u12G4"}`, err: `in \u hexadecimal character escape`},
		{name: "control char", in: "{\"a\":\"x\ny\"}", err: "in string literal"},
		{name: "control char in skipped string", in: "{\"zz\":\"x\ty\"}", err: "in string literal"},
		{name: "trailing comma", in: `{"a":1,}`, err: "looking for beginning of object key string"},
		{name: "trailing comma array", in: `{"a":[1,]}`, err: "looking for beginning of value"},
		{name: "missing colon", in: `{"a" 1}`, err: "after object key"},
		{name: "leading zero", in: `{"a":01}`, err: "after object key:value pair"},
		{name: "bad number", in: `{"a":-}`, err: "in numeric literal"},
		{name: "bad fraction", in: `{"a":1.}`, err: "after decimal point"},
		{name: "bad exponent", in: `{"a":1e}`, err: "in exponent"},
		{name: "bad literal", in: `{"a":nul}`, err: "in literal null"},
		{name: "single quotes", in: `{'a':1}`, err: "looking for beginning of object key string"},
		{name: "too deep", in: `{"a":` + strings.Repeat("[", jsonx.MaxDepth) + strings.Repeat("]", jsonx.MaxDepth) + `}`, err: "exceeded max depth"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := decodeOne(t, tc.in)
			ref, refOK := refDecode([]byte(tc.in), false)
			if tc.err != "" {
				if !strings.Contains(msg, tc.err) {
					t.Errorf("problem %q, want it to contain %q", msg, tc.err)
				}
				if refOK {
					t.Errorf("encoding/json accepts what we reject")
				}
				return
			}
			if msg != "" {
				t.Fatalf("unexpected problem %q", msg)
			}
			if tc.want.Kind == 0 && got.Kind == ChunkData {
				tc.want.Kind = ChunkData
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if !refOK {
				t.Fatal("encoding/json rejects what we accept")
			}
			if d := cmp.Diff(ref, got); d != "" {
				t.Errorf("differs from encoding/json reference (-ref +got):\n%s", d)
			}
		})
	}
}

// TestDecoderDepthLimit pins the nesting limit at encoding/json's.
func TestDecoderDepthLimit(t *testing.T) {
	ok := `{"a":` + strings.Repeat("[", jsonx.MaxDepth-1) + strings.Repeat("]", jsonx.MaxDepth-1) + `}`
	if _, msg := decodeOne(t, ok); msg != "" {
		t.Fatalf("depth %d rejected: %s", jsonx.MaxDepth, msg)
	}
	if _, refOK := refDecode([]byte(ok), false); !refOK {
		t.Fatal("reference rejects max depth")
	}
}

// TestDecodeStage checks the stage around the decoder: [DONE] detection,
// blank events, named error events, truncation, the error text, and that
// nothing after the end is parsed.
func TestDecodeStage(t *testing.T) {
	type in = sse.Event
	ev := func(data string) in { return in{Type: "message", Data: []byte(data), Offset: 7} }
	st := NewDecodeStage()
	var got []string
	emit := func(c Chunk) {
		msg := ""
		if c.Error != nil {
			msg = string(c.Error.Message)
		}
		got = append(got, fmt.Sprintf("%s@%d:%s", c.Kind, c.Offset, msg))
	}
	ctx := context.Background()
	for _, e := range []in{ev(""), ev(" \n\t"), ev(`{"choices":[]}`), ev("  [DONE] \n"), ev("{broken"), ev(`{"choices":[]}`)} {
		if err := st.Push(ctx, e, emit); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.(interface {
		Finish(context.Context, func(Chunk)) error
	}).Finish(ctx, emit); err != nil {
		t.Fatal(err)
	}
	if want := []string{"data@7:", "done@7:"}; !cmp.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}

	got = nil
	st = NewDecodeStage()
	_ = st.Push(ctx, in{Type: "error", Data: []byte("upstream exploded"), Offset: 3}, emit)
	if want := []string{"error@3:upstream exploded"}; !cmp.Equal(got, want) {
		t.Errorf("named error event with text: got %q, want %q", got, want)
	}

	got = nil
	st = NewDecodeStage()
	_ = st.Push(ctx, in{Truncated: true, Offset: 99}, emit)
	_ = st.(interface {
		Finish(context.Context, func(Chunk)) error
	}).Finish(ctx, emit)
	if want := []string{"truncated@99:", "eof@0:"}; !cmp.Equal(got, want) {
		t.Errorf("truncation: got %q, want %q", got, want)
	}

	err := NewDecodeStage().Push(ctx, in{Type: "message", Data: []byte(`{"choices":[{"delta":{"content":"x"}`), Offset: 1234}, emit)
	var de *DecodeError
	if !errors.As(err, &de) || de.Offset != 1234 {
		t.Fatalf("error %v, want a *DecodeError at 1234", err)
	}
	if de.DataOffset != 36 || de.Event != "message" || !errors.As(err, new(*SyntaxError)) {
		t.Errorf("error %#v, want a *SyntaxError at data byte 36 of a message event", de)
	}
	if want := "message event at byte 1234: invalid JSON at data byte 36: unexpected end of data after object key:value pair"; err.Error() != want {
		t.Errorf("error text\n%q, want\n%q", err, want)
	}
}

// TestChunkOwn checks that Own copies everything: the owned chunk survives
// the decoder reusing its buffers and the input being overwritten.
func TestChunkOwn(t *testing.T) {
	in := []byte(`{"id":"i","model":"m","choices":[{"delta":{"content":[{"text":"a\u00e9"},{"text":"b"}],"reasoning_details":[{"text":"r1"},{"text":"r2"}],"tool_calls":[{"index":0,"id":"c","function":{"name":"n","arguments":{ "x" : 1 }},"extra_content":{"k":1}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":3},"error":{"message":"e","type":"t","code":1}}`)
	var d chunkDecoder
	c, msg, _ := d.decodeMsg(in)
	if msg != "" {
		t.Fatal(msg)
	}
	want := viewOf(*c)
	owned := c.Own()
	for i := range in {
		in[i] = 'X'
	}
	if _, msg, _ := d.decodeMsg([]byte(`{"id":"zzzzzzzzzz","choices":[{"delta":{"content":"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9","reasoning_details":[{"text":"q"},{"text":"w"}]}},{},{},{}]}`)); msg != "" {
		t.Fatal(msg)
	}
	if d := cmp.Diff(want, viewOf(owned)); d != "" {
		t.Errorf("owned chunk changed (-want +got):\n%s", d)
	}
	if s := (Step{Kind: StepToolCall, ToolCall: &owned.Choices[0].ToolCalls[0]}).Own(); string(s.ToolCall.Name) != "n" || s.ToolCall == &owned.Choices[0].ToolCalls[0] {
		t.Errorf("Step.Own lost the tool call")
	}
}

// TestDecoderSteadyStateAllocs pins the zero-allocation promise.
func TestDecoderSteadyStateAllocs(t *testing.T) {
	chunks := [][]byte{
		[]byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hello \u00e9 world"},"logprobs":null,"finish_reason":null}]}`),
		[]byte(`{"id":"chatcmpl-1","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}`),
		[]byte(`{"id":"chatcmpl-1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"a\":"}},{"index":2,"function":{"arguments":"1}"}}]},"finish_reason":null}]}`),
		[]byte(`{"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_tokens_details":{"cached_tokens":0}}}`),
	}
	var d chunkDecoder
	for _, c := range chunks { // warm the pools
		d.decodeMsg(c)
	}
	allocs := testing.AllocsPerRun(200, func() {
		for _, c := range chunks {
			if _, msg, _ := d.decodeMsg(c); msg != "" {
				t.Fatal(msg)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per 4 chunks, want 0", allocs)
	}
}

// TestDecoderDifferential compares the decoder with the encoding/json
// reference on generated chunks and on mutations of them (truncations,
// byte flips, insertions), which are mostly invalid.
func TestDecoderDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	n := 3000
	if testing.Short() {
		n = 300
	}
	valid := 0
	for i := range n {
		doc := genChunk(r)
		inputs := []string{doc, mutate(r, doc), mutate(r, doc)}
		for j, in := range inputs {
			unary := r.IntN(4) == 0
			if ok := diffOne(t, []byte(in), unary); ok && j == 0 {
				valid++
			}
			if t.Failed() {
				t.Fatalf("case %d.%d: %q", i, j, in)
			}
		}
	}
	if valid < n*9/10 {
		t.Errorf("only %d of %d generated chunks were valid JSON", valid, n)
	}
}

// diffOne decodes data both ways and reports a disagreement; it returns
// whether the input was valid.
func diffOne(t testing.TB, data []byte, unary bool) bool {
	t.Helper()
	d := chunkDecoder{unary: unary}
	c, msg, at := d.decodeMsg(data)
	ref, refOK := refDecode(data, unary)
	switch {
	case refOK && msg != "":
		t.Errorf("we reject (%s at %d) what encoding/json accepts", msg, at)
	case !refOK && msg == "":
		t.Errorf("we accept what encoding/json rejects")
	case refOK:
		if diff := cmp.Diff(ref, viewOf(*c)); diff != "" {
			t.Errorf("differs from encoding/json (-ref +got):\n%s", diff)
		}
	}
	// A syntax error names a place in the data; other problems (valid
	// JSON that is not an object) none (-1).
	if msg != "" && (at < -1 || at > len(data) || (at == -1) != strings.Contains(msg, "not a chat chunk")) {
		t.Errorf("error offset %d outside the data (%d bytes): %s", at, len(data), msg)
	}
	return refOK
}

// genChunk builds a random chat chunk exercising every field and type rule.
func genChunk(r *rand.Rand) string {
	g := gen{r: r}
	return g.object(map[string]func() string{
		"id":      g.maybe(g.str),
		"model":   g.maybe(g.str),
		"object":  g.maybe(g.str),
		"created": g.maybe(g.num),
		"choices": g.maybe(func() string {
			return g.array(func() string {
				return g.object(map[string]func() string{
					"index":         g.maybe(g.num),
					"delta":         g.maybe(g.delta),
					"message":       g.maybe(g.delta),
					"finish_reason": g.maybe(g.str),
					"logprobs":      g.maybe(g.any),
				})
			})
		}),
		"usage": g.maybe(func() string {
			return g.object(map[string]func() string{
				"prompt_tokens": g.maybe(g.num), "completion_tokens": g.maybe(g.num), "total_tokens": g.maybe(g.num),
				"cached_tokens": g.maybe(g.num), "prompt_cache_hit_tokens": g.maybe(g.num),
				"prompt_tokens_details":     g.maybe(func() string { return g.object(map[string]func() string{"cached_tokens": g.maybe(g.num)}) }),
				"completion_tokens_details": g.maybe(func() string { return g.object(map[string]func() string{"reasoning_tokens": g.maybe(g.num)}) }),
			})
		}),
		"error": g.maybe(func() string {
			if g.r.IntN(3) == 0 {
				return g.str()
			}
			return g.object(map[string]func() string{"message": g.maybe(g.str), "type": g.maybe(g.str), "code": g.maybe(g.any)})
		}),
	})
}

type gen struct {
	r     *rand.Rand
	depth int
}

func (g *gen) ws() string {
	if g.r.IntN(8) != 0 {
		return ""
	}
	return [...]string{" ", "\n", "\t", "\r\n  "}[g.r.IntN(4)]
}

// maybe returns f, or now and then a value of another type.
func (g *gen) maybe(f func() string) func() string {
	return func() string {
		switch g.r.IntN(12) {
		case 0:
			return "null"
		case 1:
			return g.any()
		}
		return f()
	}
}

func (g *gen) object(fields map[string]func() string) string {
	var b strings.Builder
	b.WriteString("{" + g.ws())
	first := true
	add := func(k, v string) {
		if !first {
			b.WriteString(g.ws() + "," + g.ws())
		}
		first = false
		b.WriteString(k + g.ws() + ":" + g.ws() + v)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	// Deterministic order from the generator, with drops and duplicates.
	sortStrings(keys)
	g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for _, k := range keys {
		if g.r.IntN(4) == 0 {
			continue
		}
		key := `"` + k + `"`
		switch g.r.IntN(20) {
		case 0:
			key = `"` + strings.ToUpper(k[:1]) + k[1:] + `"` // case differs: unknown
		case 1:
			key = `"\u00` + fmt.Sprintf("%02x", k[0]) + k[1:] + `"` // escaped key: same field
		}
		add(key, fields[k]())
		if g.r.IntN(15) == 0 {
			add(key, fields[k]()) // duplicate: last wins
		}
	}
	if g.r.IntN(3) == 0 {
		add(g.str(), g.any()) // unknown member
	}
	b.WriteString(g.ws() + "}")
	return b.String()
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func (g *gen) array(el func() string) string {
	n := g.r.IntN(4)
	parts := make([]string, n)
	for i := range parts {
		if g.r.IntN(10) == 0 {
			parts[i] = g.any()
		} else {
			parts[i] = el()
		}
	}
	return "[" + g.ws() + strings.Join(parts, g.ws()+","+g.ws()) + g.ws() + "]"
}

func (g *gen) delta() string {
	textObj := func() string {
		return g.object(map[string]func() string{"type": g.maybe(g.str), "text": g.maybe(g.str), "summary": g.maybe(g.str), "content": g.maybe(g.str)})
	}
	return g.object(map[string]func() string{
		"role": g.maybe(g.str),
		"content": func() string {
			switch g.r.IntN(4) {
			case 0:
				return g.array(textObj)
			case 1:
				return textObj()
			}
			return g.str()
		},
		"reasoning_content": g.maybe(g.str),
		"refusal":           g.maybe(g.str),
		"reasoning": func() string {
			if g.r.IntN(3) == 0 {
				return textObj()
			}
			return g.str()
		},
		"reasoning_details": g.maybe(func() string { return g.array(textObj) }),
		"tool_calls": g.maybe(func() string {
			return g.array(func() string {
				return g.object(map[string]func() string{
					"index": g.maybe(g.num), "id": g.maybe(g.str), "type": g.maybe(g.str),
					"function": g.maybe(func() string {
						return g.object(map[string]func() string{
							"name": g.maybe(g.str),
							"arguments": func() string {
								if g.r.IntN(4) == 0 {
									return g.any()
								}
								return g.str()
							},
						})
					}),
					"extra_content": g.maybe(g.any),
				})
			})
		}),
	})
}

var strPieces = []string{
	"a", "hello", " ", "é", "中文", "😀", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00e9`, `\u4E2D`,
	`\ud83d\ude00`, `\ud83d`, `\ude00`, `\ud83dx`, `\u0000`, `\u001f`, "\xff", "\xed\xa0\x80", "\xc3", "{", "}", "[", "]", ",", ":",
	"tool_calls", "content", `{\"path\":\"a.go\"}`,
}

func (g *gen) str() string {
	var b strings.Builder
	b.WriteByte('"')
	for n := g.r.IntN(6); n > 0; n-- {
		b.WriteString(strPieces[g.r.IntN(len(strPieces))])
	}
	b.WriteByte('"')
	return b.String()
}

var numPieces = []string{"0", "1", "-1", "42", "7", "1.5", "-0", "1e3", "2E-2", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "4096", "4097", "123456789012345678901234"}

func (g *gen) num() string { return numPieces[g.r.IntN(len(numPieces))] }

func (g *gen) any() string {
	if g.depth > 4 {
		return "1"
	}
	g.depth++
	defer func() { g.depth-- }()
	switch g.r.IntN(8) {
	case 0:
		return "null"
	case 1:
		return "true"
	case 2:
		return "false"
	case 3:
		return g.num()
	case 4:
		return g.array(g.any)
	case 5:
		return g.object(map[string]func() string{"k": g.any, "text": g.any, "x": g.any})
	}
	return g.str()
}

// mutate damages a document: truncation, a flipped or inserted byte, or a
// deleted byte.
func mutate(r *rand.Rand, doc string) string {
	if len(doc) == 0 {
		return doc
	}
	b := []byte(doc)
	i := r.IntN(len(b))
	switch r.IntN(4) {
	case 0:
		return string(b[:i])
	case 1:
		const set = "{}[]\",:\\ 0aeu-.\x00\x1f\xff"
		b[i] = set[r.IntN(len(set))]
		return string(b)
	case 2:
		const set = "{}[]\",:\\ 0aeu-."
		return string(b[:i]) + string(set[r.IntN(len(set))]) + string(b[i:])
	}
	return string(b[:i]) + string(b[i+1:])
}

// The realistic chunk shape the prefix and suffix snapshots are built for.
const (
	seqHead = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`
	seqTail = `,"logprobs":null,"finish_reason":null}],"usage":null}`
)

// primedDecoder returns a decoder that holds a prefix and a suffix
// snapshot of the seqHead/seqTail shape, so that the next decode of a chunk
// with that shape takes the resume and skip paths.
func primedDecoder(t testing.TB) *chunkDecoder {
	var d chunkDecoder
	for _, c := range []string{seqHead + `{"role":"assistant","content":""}` + seqTail, seqHead + `{"content":"x"}` + seqTail} {
		if _, msg, _ := d.decodeMsg([]byte(c)); msg != "" {
			t.Fatal(msg)
		}
	}
	if d.snap.prefix.Len() != len(seqHead) || string(d.sfx.Bytes()) != seqTail {
		t.Fatalf("priming failed: prefix %q suffix %q", d.snap.prefix.Bytes(), d.sfx.Bytes())
	}
	return &d
}

// TestDecoderSequences decodes long runs of chunks with ONE decoder, so the
// prefix resume and the suffix skip are taken, refreshed and invalidated by
// varied heads, deltas and tails (valid and broken), and compares every
// chunk with the encoding/json reference.
func TestDecoderSequences(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	heads := []string{seqHead, seqHead, seqHead,
		`{"id":"chatcmpl-2","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`,
		`{"id":"chatcmpl-1","model":"m2","choices":[{"index":3, "delta" : `,
		`{"id":"chat\u0063mpl-1","choices":[{"delta":`,
		`{"choices":[{"finish_reason":"stop","delta":`,
		`{"usage":{"prompt_tokens":1},"choices":[{"delta":`,
		`{"error":null,"choices":[{"delta":`,
		`{"choices":[1,{"delta":`,
		`{"id":5,"model":null,"choices":[{"index":"0","delta":`,
	}
	tails := []string{seqTail, seqTail, seqTail, `}]}`, `,"finish_reason":"stop"}]}`,
		`,"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":3}}`,
		`,"logprobs":null,"finish_reason":null}],"usage":null,"id":"late"}`,
		`,"logprobs":null,"finish_reason":null}],"usage":null,"error":{"message":"x"}}`,
		`,"delta":{"content":"again"}}],"usage":null}`,
		`,"index":7}],"usage":null}`,
		`},{"delta":{"content":"second"}}],"usage":null}`,
		`,"logprobs":null,"finish_reason":null}],"usage":null,"choices":[]}`,
		`,"logprobs":null,"finish_reason":null}],"usage":null} `,
		`,"logprobs":null,"finish_reason":null}],"usage":null`,
		`,"logprobs":null,"finish_reason":null}],"usage":nul}`,
	}
	d := chunkDecoder{}
	var g gen
	g.r = r
	resumed, skipped := 0, 0
	n := 20000
	if testing.Short() {
		n = 2000
	}
	head, run := seqHead, 0
	for i := range n {
		// Streams keep their head for a while; the common head, mostly.
		if run == 0 {
			head, run = seqHead, 1+r.IntN(8)
			if r.IntN(3) == 0 {
				head = heads[r.IntN(len(heads))]
			}
		}
		run--
		tail := seqTail
		if r.IntN(3) == 0 {
			tail = tails[r.IntN(len(tails))]
		}
		doc := head + g.delta() + tail
		if r.IntN(10) == 0 {
			doc = mutate(r, doc)
		}
		if d.snap.prefix.Matches([]byte(doc)) {
			resumed++
		}
		c, msg, _ := d.decodeMsg([]byte(doc))
		if d.done {
			skipped++
		}
		ref, refOK := refDecode([]byte(doc), false)
		switch {
		case refOK != (msg == ""):
			t.Fatalf("chunk %d %q: ours %q, encoding/json ok=%v", i, doc, msg, refOK)
		case refOK:
			if diff := cmp.Diff(ref, viewOf(*c)); diff != "" {
				t.Fatalf("chunk %d %q differs (-ref +got):\n%s", i, doc, diff)
			}
		}
	}
	if resumed < n/5 || skipped < n/20 {
		t.Errorf("resume path taken %d times, suffix skip %d times, of %d: the test does not exercise them", resumed, skipped, n)
	}
	t.Logf("%d chunks: %d resumed, %d suffix skips", n, resumed, skipped)
}

// FuzzChatDecode: arbitrary data never panics, and the decoder agrees with
// encoding/json on what is valid and on every field of valid input — both
// from a fresh decoder and from one holding prefix and suffix snapshots.
func FuzzChatDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		f.Add([]byte(genChunk(r)), false)
	}
	for _, s := range []string{`{}`, `{"choices":[{"delta":{"content":"\ud83d"}}]}`, `{"error":"x"}`, "{\"a\":\"\xff\"}", `[`, `{"a":1e}`} {
		f.Add([]byte(s), true)
	}
	for _, s := range []string{`{"choices":[],"x_groq":{"usage":{"prompt_tokens":1}},"usage":null}`,
		`{"x_groq":{"usage":{"prompt_tokens":1}},"usage":{"completion_tokens":2}}`, `{"x_groq":{"usage":{"prompt_tokens":1}},"x_groq":{}}`} {
		f.Add([]byte(s), false)
	}
	for _, delta := range []string{`{"content":"hi"}`, `{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":"}}]}`, `null`, `{"reasoning":{"text":"r"}}`,
		`{"content":[{"type":"thinking","thinking":[{"type":"text","text":"t"}],"thinking":"u"},{"type":"text","text":"x","thinking":"no"}]}`,
		`{"content":{"thinking":"t","type":"thinking"}}`} {
		f.Add([]byte(seqHead+delta+seqTail), false)
		f.Add([]byte(seqHead+delta+`,"finish_reason":"stop"}]}`), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, unary bool) {
		diffOne(t, data, unary)
		if !unary {
			d := primedDecoder(t)
			c, msg, _ := d.decodeMsg(data)
			ref, refOK := refDecode(data, false)
			switch {
			case refOK != (msg == ""):
				t.Errorf("primed decoder: %q, encoding/json ok=%v", msg, refOK)
			case refOK:
				if diff := cmp.Diff(ref, viewOf(*c)); diff != "" {
					t.Errorf("primed decoder differs (-ref +got):\n%s", diff)
				}
			}
		}
	})
}
