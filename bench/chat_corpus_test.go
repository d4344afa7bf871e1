package bench

import "github.com/harnessflow/harnessflow/benchmark"

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

// chatCorpus is the generated chat stream of the benchmark package
// (benchmark.Generate, about 3 MB of chatCorpusChunks chunks: reasoning,
// text with escapes and non-ASCII, three parallel tool calls in small
// interleaved fragments, usage once), so that `harnessflow bench` and these
// benchmarks measure the same bytes. It avoids what openai-go assembles
// differently from the wire's meaning
// (docs/streams.md#real-world-stream-edge-cases).
func chatCorpus() ([]byte, chatWant) {
	c, err := benchmark.Generate("chat", chatCorpusChunks)
	if err != nil {
		panic(err) // a constant size the generator accepts
	}
	s := c.Expect[0]
	want := chatWant{Text: s.Text, Reasoning: s.Reasoning, Prompt: s.InputTokens, Output: s.OutputTokens, Total: s.TotalTokens}
	for _, call := range s.Calls {
		want.Calls = append(want.Calls, chatCall{ID: call.ID, Name: call.Name, Arguments: call.Arguments})
	}
	return c.Inputs[0], want
}
