package benchmark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/wire"
)

// DefaultChunks is the size of a generated stream: the number of data
// events (chunks) it has. At this size the generated chat and messages
// streams are byte for byte the corpora of `go test ./bench`
// (BenchmarkChatStream, BenchmarkAnthropicStream), so the figures of both
// can be compared.
const DefaultChunks = 10_000

// MinChunks is the smallest generated stream.
const MinChunks = 200

// Generate returns a deterministic synthetic upstream stream of chunks data
// events for the wire of that name (one of GenerateWires: chat, messages,
// responses): reasoning, text with escapes and non-ASCII, and tool calls
// whose arguments arrive in small fragments, with usage. The corpus's
// Expect says what it must turn into.
func Generate(name string, chunks int) (Corpus, error) {
	if chunks < MinChunks {
		return Corpus{}, fmt.Errorf("benchmark: generate: %d chunks, want at least %d", chunks, MinChunks)
	}
	gen, ok := generators[wire.Wire(name)]
	if !ok {
		return Corpus{}, generateError(name)
	}
	body, want, err := gen(chunks)
	if err != nil {
		return Corpus{}, err
	}
	return Corpus{
		Name:   fmt.Sprintf("generated %s stream, %d chunks", name, chunks),
		Inputs: [][]byte{body},
		Events: chunks,
		Expect: []*Summary{want},
	}, nil
}

// generators build the synthetic stream of each wire Generate knows, by
// the wire's registered name.
var generators = map[wire.Wire]func(chunks int) ([]byte, *Summary, error){
	wire.Chat:      generateChat,
	wire.Messages:  generateMessages,
	wire.Responses: generateResponses,
}

// GenerateWires returns the wires Generate makes streams of, in the codec
// registry's order.
func GenerateWires() []wire.Wire {
	var out []wire.Wire
	for _, w := range codec.All() {
		if _, ok := generators[w]; ok {
			out = append(out, w)
		}
	}
	return out
}

// generateError is Generate's refusal of a wire without a generator: a
// registered wire that has none, or an unknown name.
func generateError(name string) error {
	var names []string
	for _, w := range GenerateWires() {
		names = append(names, string(w))
	}
	want := strings.Join(names, ", ")
	if _, ok := codec.Lookup(wire.Wire(name)); ok {
		return fmt.Errorf("benchmark: generate: no synthetic stream of the %s wire (there is one of %s)", name, want)
	}
	return fmt.Errorf("benchmark: generate: unknown wire %q (want %s)", name, want)
}

// jsonQuote is encoding/json's quoting of s (HTML characters escaped, as
// json.Marshal does).
func jsonQuote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// jsonQuoteRaw is s quoted as JSON without HTML escaping, as Anthropic
// writes it.
func jsonQuoteRaw(s string) string { return string(jsonx.AppendString(nil, s)) }

// generateChat builds a chat completions stream: a role chunk, 30%
// reasoning_content deltas, 35% content deltas, three parallel tool calls
// whose arguments come in fragments of 3–10 bytes (cut anywhere, even
// inside an escape), round robin, a finish chunk, a usage-only chunk and
// [DONE]. Every fragment carries its call's index, ids and names come
// once, and usage once, so that openai-go's accumulator assembles the same
// result as the wire means.
func generateChat(chunks int) ([]byte, *Summary, error) {
	r := rand.New(rand.NewPCG(2026, 1))
	var buf bytes.Buffer
	want := &Summary{}
	const head = `{"id":"chatcmpl-CHxHh5Ab7Cd9Ef1Gh3Ij5Kl7Mn9Op","object":"chat.completion.chunk","created":1767312800,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":`
	const tail = `,"logprobs":null,"finish_reason":null}],"usage":null}`
	n := 0
	chunk := func(delta string) {
		buf.WriteString("data: ")
		buf.WriteString(head)
		buf.WriteString(delta)
		buf.WriteString(tail)
		buf.WriteString("\n\n")
		n++
	}
	words := []string{"the", "decoder", "reads", "café", "bytes", "中文", "until", "a", "blank", "line", "\"quoted\"", "tab\there", "new\nline", "😀", "back\\slash"}

	chunk(`{"role":"assistant","content":"","refusal":null}`)
	reasoning, text := chunks*3/10, chunks*35/100
	var rs, ts strings.Builder
	for i := range reasoning {
		d := " " + words[r.IntN(len(words))]
		if i%97 == 0 {
			d += fmt.Sprintf(" step %d.", i)
		}
		rs.WriteString(d)
		chunk(`{"reasoning_content":` + jsonQuote(d) + `}`)
	}
	for range text {
		d := " " + words[r.IntN(len(words))]
		ts.WriteString(d)
		chunk(`{"content":` + jsonQuote(d) + `}`)
	}
	want.Reasoning, want.Text = rs.String(), ts.String()

	// Three calls: their starts, then their fragments round robin.
	frags := chunks - n - 2 - 3 // minus the finish and usage chunks and the three starts
	names := []string{"read_file", "grep", "apply_edit"}
	sizes := make([][]int, 3)
	for k := range 3 {
		count := frags / 3
		if k < frags%3 {
			count++
		}
		for range count {
			sizes[k] = append(sizes[k], 3+r.IntN(8))
		}
	}
	for k := range 3 {
		total := 0
		for _, s := range sizes[k] {
			total += s
		}
		prefix := fmt.Sprintf(`{"path":"internal/wire/file_%d.go","content":"`, k)
		const suffix = `"}`
		room := total - len(prefix) - len(suffix)
		if room < 0 {
			return nil, nil, fmt.Errorf("benchmark: generate chat: %d chunks leave too little room for tool arguments", chunks)
		}
		var body strings.Builder
		for body.Len() < room {
			w := [...]string{"line ", `\"x\" `, `\n`, `\\ `, `\u00e9 `, "func ", "return "}[r.IntN(7)]
			if body.Len()+len(w) > room {
				w = strings.Repeat(" ", room-body.Len())
			}
			body.WriteString(w)
		}
		args := prefix + body.String() + suffix
		if !json.Valid([]byte(args)) || len(args) != total {
			return nil, nil, fmt.Errorf("benchmark: generate chat: bad arguments for call %d", k)
		}
		id := fmt.Sprintf("call_%c%dBx7Qm2LkT0dYxR4Zp7HcW1s", 'A'+k, k)
		want.Calls = append(want.Calls, Call{ID: id, Name: names[k], Arguments: args})
		chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]}`, k, id, names[k]))
	}
	var pos, next [3]int
	for emitted := 0; emitted < frags; {
		for k := range 3 {
			if next[k] >= len(sizes[k]) {
				continue
			}
			frag := want.Calls[k].Arguments[pos[k] : pos[k]+sizes[k][next[k]]]
			pos[k] += sizes[k][next[k]]
			next[k]++
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, k, jsonQuote(frag)))
			emitted++
		}
	}
	buf.WriteString("data: " + head + `{}` + `,"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}` + "\n\n")
	n++
	want.InputTokens, want.OutputTokens, want.TotalTokens = 1850, 7123, 8973
	fmt.Fprintf(&buf, `data: {"id":"chatcmpl-CHxHh5Ab7Cd9Ef1Gh3Ij5Kl7Mn9Op","object":"chat.completion.chunk","created":1767312800,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`+"\n\n",
		want.InputTokens, want.OutputTokens, want.TotalTokens)
	n++
	buf.WriteString("data: [DONE]\n\n")
	if n != chunks {
		return nil, nil, fmt.Errorf("benchmark: generate chat: %d chunks, want %d", n, chunks)
	}
	return buf.Bytes(), want, nil
}

// messagesWords are the words of the generated Messages stream.
var messagesWords = []string{"the", "stream", "decoder", "reads", "é", "naïve", "“quoted”", "\"q\"", "tab\t", "line\n",
	"back\\slash", "😀", "<tag>", "&amp;", "0.5", "json", "{brace}", "go", "test", "…"}

// generateMessages builds an Anthropic Messages stream the way the API
// writes it ("type" first, no HTML escaping): message_start with usage, a
// thinking block (30% of the events) with a signature, a text block, six
// tool_use blocks whose input comes in chunks/25 fragments each (cut at
// rune boundaries, also inside escapes), message_delta and message_stop.
func generateMessages(chunks int) ([]byte, *Summary, error) {
	const tools = 6
	thinking, fragments := chunks*3/10, chunks/25
	// message_start, message_delta, message_stop; start, signature and stop
	// of the thinking block; start and stop of the text block.
	text := chunks - 3 - (thinking + 3) - 2 - tools*(fragments+2)
	if text < 1 || fragments < 2 {
		return nil, nil, fmt.Errorf("benchmark: generate messages: %d chunks are too few", chunks)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	var b bytes.Buffer
	n := 0
	event := func(typ, data string) {
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data)
		n++
	}
	word := func() string { return messagesWords[rng.IntN(len(messagesWords))] }
	delta := func(i int, typ, key, val string) {
		event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":%q,%q:%s}}`, i, typ, key, jsonQuoteRaw(val)))
	}
	start := func(i int, block string) {
		event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, block))
	}
	stop := func(i int) { event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)) }
	want := &Summary{}
	event("message_start", `{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-bench","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1200,"cache_creation_input_tokens":0,"cache_read_input_tokens":4096,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":2,"service_tier":"standard"}}}`)

	start(0, `{"type":"thinking","thinking":"","signature":""}`)
	var sb strings.Builder
	for range thinking {
		piece := " " + word()
		sb.WriteString(piece)
		delta(0, "thinking_delta", "thinking", piece)
	}
	want.Reasoning = sb.String()
	const signature = "EqQBCkYIBxgCKkBXf3m1PqNcZ8yT2wLr0vJ4sK6hG9dF5aQ3eR7tY1uI0oP8lK2jH4gF6dS9aZ7xC5vB3nM1qW0eR8tY6uI4oP2=="
	delta(0, "signature_delta", "signature", signature)
	stop(0)

	start(1, `{"type":"text","text":""}`)
	sb.Reset()
	for range text {
		piece := " " + word()
		sb.WriteString(piece)
		delta(1, "text_delta", "text", piece)
	}
	want.Text = sb.String()
	stop(1)

	for k := range tools {
		idx := 2 + k
		var content strings.Builder
		for content.Len() < fragments*4 {
			content.WriteString(word() + " ")
		}
		args := fmt.Sprintf(`{"path": "pkg/file_%d.go", "content": %s, "mode": 420}`, k, jsonQuoteRaw(content.String()))
		id := fmt.Sprintf("toolu_bench_%d", k)
		want.Calls = append(want.Calls, Call{ID: id, Name: "write_file", Arguments: args})
		start(idx, fmt.Sprintf(`{"type":"tool_use","id":%q,"name":"write_file","input":{}}`, id))
		// fragments pieces at pseudo-random cut points; a piece is always
		// whole UTF-8 but may end inside a JSON escape.
		cuts := make([]int, 0, fragments+1)
		cuts = append(cuts, 0)
		for i := 1; i < fragments; i++ {
			c := max(i*len(args)/fragments+rng.IntN(2), cuts[len(cuts)-1])
			for c < len(args) && !utf8.RuneStart(args[c]) {
				c++
			}
			cuts = append(cuts, c)
		}
		cuts = append(cuts, len(args))
		for i := range fragments {
			delta(idx, "input_json_delta", "partial_json", args[cuts[i]:cuts[i+1]])
		}
		stop(idx)
	}
	event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":1200,"cache_creation_input_tokens":0,"cache_read_input_tokens":4096,"output_tokens":9000}}`)
	event("message_stop", `{"type":"message_stop"}`)
	if n != chunks {
		return nil, nil, fmt.Errorf("benchmark: generate messages: %d events, want %d", n, chunks)
	}
	return b.Bytes(), want, nil
}

// generateResponses builds an OpenAI Responses stream: response.created, a
// reasoning item with a summary (30% of the events as summary deltas), a
// message (35% as text deltas), three function calls whose arguments come
// in fragments (the rest), each item's added/done events, and
// response.completed with usage.
func generateResponses(chunks int) ([]byte, *Summary, error) {
	r := rand.New(rand.NewPCG(2026, 3))
	var b bytes.Buffer
	n, seq := 0, 0
	event := func(typ, fields string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,%s,\"sequence_number\":%d}\n\n", typ, typ, fields, seq)
		n++
		seq++
	}
	const calls = 3
	// created, reasoning added + part added + done, message added + done,
	// per call added + done, completed.
	fixed := 1 + 3 + 2 + 2*calls + 1
	summary, text := chunks*3/10, chunks*35/100
	frags := chunks - fixed - summary - text
	if frags < calls*4 {
		return nil, nil, fmt.Errorf("benchmark: generate responses: %d chunks are too few", chunks)
	}
	words := []string{"the", "decoder", "reads", "café", "bytes", "中文", "until", "a", "blank", "line", "\"quoted\"", "tab\there", "new\nline", "😀", "back\\slash"}
	word := func() string { return words[r.IntN(len(words))] }
	const respID = "resp_bench0123456789abcdef"
	const model = "gpt-5.1-codex-2025-11-13"
	response := func(status, output, usage string) string {
		return fmt.Sprintf(`"response":{"id":%q,"object":"response","created_at":1767314000,"status":%q,"error":null,"incomplete_details":null,"model":%q,"output":%s,"usage":%s}`, respID, status, model, output, usage)
	}
	want := &Summary{}
	event("response.created", response("in_progress", "[]", "null"))

	const rsID = "rs_bench0000000000000001"
	event("response.output_item.added", fmt.Sprintf(`"output_index":0,"item":{"id":%q,"type":"reasoning","summary":[]}`, rsID))
	event("response.reasoning_summary_part.added", fmt.Sprintf(`"item_id":%q,"output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}`, rsID))
	var sb strings.Builder
	for range summary {
		d := " " + word()
		sb.WriteString(d)
		event("response.reasoning_summary_text.delta", fmt.Sprintf(`"item_id":%q,"output_index":0,"summary_index":0,"delta":%s`, rsID, jsonQuote(d)))
	}
	want.Reasoning = sb.String()
	rsItem := fmt.Sprintf(`{"id":%q,"type":"reasoning","summary":[{"type":"summary_text","text":%s}]}`, rsID, jsonQuote(want.Reasoning))
	event("response.output_item.done", fmt.Sprintf(`"output_index":0,"item":%s`, rsItem))

	const msgID = "msg_bench0000000000000002"
	event("response.output_item.added", fmt.Sprintf(`"output_index":1,"item":{"id":%q,"type":"message","status":"in_progress","content":[],"role":"assistant"}`, msgID))
	sb.Reset()
	for range text {
		d := " " + word()
		sb.WriteString(d)
		event("response.output_text.delta", fmt.Sprintf(`"item_id":%q,"output_index":1,"content_index":0,"delta":%s`, msgID, jsonQuote(d)))
	}
	want.Text = sb.String()
	msgItem := fmt.Sprintf(`{"id":%q,"type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":%s}],"role":"assistant"}`, msgID, jsonQuote(want.Text))
	event("response.output_item.done", fmt.Sprintf(`"output_index":1,"item":%s`, msgItem))

	items := []string{rsItem, msgItem}
	for k := range calls {
		count := frags / calls
		if k < frags%calls {
			count++
		}
		var body strings.Builder
		for body.Len() < count*6 {
			body.WriteString(word() + " ")
		}
		args := fmt.Sprintf(`{"path":"internal/wire/file_%d.go","content":%s}`, k, jsonQuote(body.String()))
		id, callID := fmt.Sprintf("fc_bench%016d", k), fmt.Sprintf("call_bench_%d", k)
		want.Calls = append(want.Calls, Call{ID: callID, Name: "write_file", Arguments: args})
		idx := 2 + k
		event("response.output_item.added", fmt.Sprintf(`"output_index":%d,"item":{"id":%q,"type":"function_call","status":"in_progress","arguments":"","call_id":%q,"name":"write_file"}`, idx, id, callID))
		lo := 0
		for i := range count {
			hi := max((i+1)*len(args)/count, lo)
			for hi < len(args) && !utf8.RuneStart(args[hi]) {
				hi++ // whole runes: a delta is a JSON string
			}
			event("response.function_call_arguments.delta", fmt.Sprintf(`"item_id":%q,"output_index":%d,"delta":%s`, id, idx, jsonQuote(args[lo:hi])))
			lo = hi
		}
		item := fmt.Sprintf(`{"id":%q,"type":"function_call","status":"completed","arguments":%s,"call_id":%q,"name":"write_file"}`, id, jsonQuote(args), callID)
		items = append(items, item)
		event("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":%s`, idx, item))
	}
	want.InputTokens, want.OutputTokens, want.TotalTokens = 4127, 7212, 11339
	event("response.completed", response("completed", "["+strings.Join(items, ",")+"]",
		fmt.Sprintf(`{"input_tokens":%d,"input_tokens_details":{"cached_tokens":3840},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":2048},"total_tokens":%d}`,
			want.InputTokens, want.OutputTokens, want.TotalTokens)))
	if n != chunks {
		return nil, nil, fmt.Errorf("benchmark: generate responses: %d events, want %d", n, chunks)
	}
	return b.Bytes(), want, nil
}
