package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// chatCorpusChunks is the number of data events (chunks) in the corpus; the
// final "data: [DONE]" comes on top.
const chatCorpusChunks = 10_000

// chatCall is one expected tool call.
type chatCall struct{ ID, Name, Arguments string }

// chatWant is what every implementation must assemble from the corpus.
type chatWant struct {
	Text      string
	Reasoning string
	Calls     []chatCall
	Prompt    int64
	Output    int64
	Total     int64
}

// chatCorpus generates a deterministic OpenAI-style chat SSE stream of
// chatCorpusChunks chunks (about 3 MB): a role chunk, reasoning_content
// deltas, text deltas (with escapes and non-ASCII), three parallel tool
// calls whose arguments arrive in small interleaved fragments (split at
// arbitrary bytes, also between a backslash and the character it escapes),
// a finish chunk, a usage-only final chunk and [DONE].
//
// It avoids what openai-go assembles differently from the wire's meaning
// (docs/streams.md#real-world-stream-edge-cases): every tool-call fragment carries its index, ids and names
// are sent once, there is no BOM and no lone CR, and usage is sent once (it
// sums usage).
func chatCorpus() ([]byte, chatWant) {
	r := rand.New(rand.NewPCG(2026, 1))
	var buf bytes.Buffer
	var want chatWant
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
	quote := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	words := []string{"the", "decoder", "reads", "café", "bytes", "中文", "until", "a", "blank", "line", "\"quoted\"", "tab\there", "new\nline", "😀", "back\\slash"}

	chunk(`{"role":"assistant","content":"","refusal":null}`)
	const reasoning, text = 3000, 3500
	for i := range reasoning {
		d := " " + words[r.IntN(len(words))]
		if i%97 == 0 {
			d += fmt.Sprintf(" step %d.", i)
		}
		want.Reasoning += d
		chunk(`{"reasoning_content":` + quote(d) + `}`)
	}
	for range text {
		d := " " + words[r.IntN(len(words))]
		want.Text += d
		chunk(`{"content":` + quote(d) + `}`)
	}

	// Tool calls: three starts, then fragments round-robin.
	toolChunks := chatCorpusChunks - n - 2 // minus the finish and usage chunks
	frags := toolChunks - 3
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
		suffix := `"}`
		var body strings.Builder
		for body.Len() < total-len(prefix)-len(suffix) {
			w := [...]string{"line ", `\"x\" `, `\n`, `\\ `, `\u00e9 `, "func ", "return "}[r.IntN(7)]
			if body.Len()+len(w) > total-len(prefix)-len(suffix) {
				w = strings.Repeat(" ", total-len(prefix)-len(suffix)-body.Len())
			}
			body.WriteString(w)
		}
		args := prefix + body.String() + suffix
		if !json.Valid([]byte(args)) || len(args) != total {
			panic(fmt.Sprintf("bad generated arguments for call %d", k))
		}
		id := fmt.Sprintf("call_%c%dBx7Qm2LkT0dYxR4Zp7HcW1s", 'A'+k, k)
		want.Calls = append(want.Calls, chatCall{ID: id, Name: names[k], Arguments: args})
		chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]}`, k, id, names[k]))
	}
	pos := [3]int{}
	next := [3]int{}
	for emitted := 0; emitted < frags; {
		for k := range 3 {
			if next[k] >= len(sizes[k]) {
				continue
			}
			args := want.Calls[k].Arguments
			frag := args[pos[k] : pos[k]+sizes[k][next[k]]]
			pos[k] += sizes[k][next[k]]
			next[k]++
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, k, quote(frag)))
			emitted++
		}
	}
	buf.WriteString("data: " + head + `{}` + `,"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}` + "\n\n")
	n++
	want.Prompt, want.Output, want.Total = 1850, 7123, 8973
	fmt.Fprintf(&buf, `data: {"id":"chatcmpl-CHxHh5Ab7Cd9Ef1Gh3Ij5Kl7Mn9Op","object":"chat.completion.chunk","created":1767312800,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`+"\n\n", want.Prompt, want.Output, want.Total)
	n++
	buf.WriteString("data: [DONE]\n\n")
	if n != chatCorpusChunks {
		panic(fmt.Sprintf("corpus has %d chunks, want %d", n, chatCorpusChunks))
	}
	return buf.Bytes(), want
}
