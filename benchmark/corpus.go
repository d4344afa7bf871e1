package benchmark

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// Corpus is the input of a benchmark: whole inputs, each one run through
// the graph on its own, as one upstream answer (the bytes of an SSE body)
// or one client request (Responses JSON) is.
type Corpus struct {
	// Name says where the corpus came from, for reports ("generated chat,
	// 10000 chunks", a file or directory name).
	Name string
	// Inputs are the inputs; every iteration of a benchmark runs them all.
	Inputs [][]byte
	// Events is the number of upstream events in all inputs together, the
	// denominator of every per-event figure. Zero means [Graph] counts
	// them: the SSE events of byte inputs (without the "[DONE]"
	// terminator), or one per request.
	Events int
	// Expect, when set, holds what each input must turn into (one per
	// input; nil entries are not checked). Graph checks the end-to-end
	// output, and a peer's, against it before it measures anything.
	Expect []*Summary
}

// Bytes returns the total size of the inputs.
func (c Corpus) Bytes() int {
	n := 0
	for _, in := range c.Inputs {
		n += len(in)
	}
	return n
}

// CountSSEEvents returns the number of Server-Sent Events in body, not
// counting a "[DONE]" data terminator (the chat wire's end marker, which
// carries nothing) or comments.
func CountSSEEvents(body []byte) int {
	d := sse.New(sse.Options{})
	n := 0
	count := func(e sse.Event) {
		if !e.Truncated && !bytes.Equal(e.Data, []byte("[DONE]")) {
			n++
		}
	}
	// The decoder only fails on an over-long line; such a body fails the
	// benchmark later with the graph's own error.
	_ = d.Push(context.Background(), body, count)
	_ = d.Finish(context.Background(), count)
	return n
}

// LoadCorpus reads a corpus from path: one file, or every regular file of a
// directory (not recursive, sorted by name, hidden files skipped) whose
// name ends in one of exts (all files when exts is empty).
func LoadCorpus(path string, exts ...string) (Corpus, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Corpus{}, fmt.Errorf("benchmark: corpus: %w", err)
	}
	if !st.IsDir() {
		b, err := os.ReadFile(path)
		if err != nil {
			return Corpus{}, fmt.Errorf("benchmark: corpus: %w", err)
		}
		return Corpus{Name: path, Inputs: [][]byte{b}}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return Corpus{}, fmt.Errorf("benchmark: corpus: %w", err)
	}
	c := Corpus{Name: path}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") {
			continue
		}
		if len(exts) > 0 && !slices.ContainsFunc(exts, func(x string) bool { return strings.HasSuffix(name, x) }) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(path, name))
		if err != nil {
			return Corpus{}, fmt.Errorf("benchmark: corpus: %w", err)
		}
		c.Inputs = append(c.Inputs, b)
	}
	if len(c.Inputs) == 0 {
		return Corpus{}, fmt.Errorf("benchmark: corpus: no %s files in %s", strings.Join(exts, " or "), path)
	}
	return c, nil
}

// Summary is what a stream was turned into, in the terms every
// implementation shares: the assistant text, the reasoning, the tool calls
// and the usage. Our graphs' summaries come from their engine events; a
// peer's from its accumulator.
type Summary struct {
	// Outputs is the number of elements the graph emitted (engine events);
	// for a peer, the number of stream events it decoded.
	Outputs int `json:"outputs"`
	// Text is the assistant text; Reasoning the reasoning (or its
	// summary); Calls the tool calls in order. They are left out of JSON.
	Text      string `json:"-"`
	Reasoning string `json:"-"`
	Calls     []Call `json:"-"`
	// InputTokens, OutputTokens and TotalTokens are the usage.
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
	// Completed and Failed say how the stream ended (engine events only).
	Completed bool   `json:"completed"`
	Failed    string `json:"failed,omitempty"`
}

// Call is one tool call of a [Summary]: its call id, the tool's name and
// the arguments (a custom tool's input) as text.
type Call struct{ ID, Name, Arguments string }

// Diff returns "" when got says the same as s, else what differs first:
// the text, the tool calls, the reasoning when withReasoning is set
// (openai-go does not surface chat reasoning), and the usage when withUsage
// is set and s has any (implementations count cached tokens differently).
func (s *Summary) Diff(got *Summary, withReasoning, withUsage bool) string {
	switch {
	case got == nil:
		return "no result"
	case got.Text != s.Text:
		return fmt.Sprintf("text: %d bytes, want %d", len(got.Text), len(s.Text))
	case withReasoning && got.Reasoning != s.Reasoning:
		return fmt.Sprintf("reasoning: %d bytes, want %d", len(got.Reasoning), len(s.Reasoning))
	case len(got.Calls) != len(s.Calls):
		return fmt.Sprintf("%d tool calls, want %d", len(got.Calls), len(s.Calls))
	case withUsage && s.TotalTokens != 0 && (got.InputTokens != s.InputTokens || got.OutputTokens != s.OutputTokens || got.TotalTokens != s.TotalTokens):
		return fmt.Sprintf("usage %d/%d/%d, want %d/%d/%d", got.InputTokens, got.OutputTokens, got.TotalTokens, s.InputTokens, s.OutputTokens, s.TotalTokens)
	}
	for i, c := range got.Calls {
		if w := s.Calls[i]; c != w {
			return fmt.Sprintf("tool call %d: %s %s (%d bytes of arguments), want %s %s (%d)", i, c.ID, c.Name, len(c.Arguments), w.ID, w.Name, len(w.Arguments))
		}
	}
	return ""
}

// summarySink builds a Summary from engine events. It does about the work
// a caller keeping the final result does, so that the end-to-end figures
// include a realistic sink.
type summarySink struct{ s Summary }

// Accept adds one event to the summary.
func (k *summarySink) Accept(ev protocol.ResponseEvent) error {
	k.s.Outputs++
	switch ev.Type {
	case protocol.EventOutputItemDone:
		switch it := ev.Item.(type) {
		case *protocol.Message:
			for _, c := range it.Content {
				k.s.Text += c.Text
			}
		case *protocol.Reasoning:
			for _, c := range it.Content {
				k.s.Reasoning += c.Text
			}
			for _, c := range it.Summary {
				k.s.Reasoning += c.Text
			}
		case *protocol.FunctionCall:
			k.s.Calls = append(k.s.Calls, Call{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		case *protocol.CustomToolCall:
			k.s.Calls = append(k.s.Calls, Call{ID: it.CallID, Name: it.Name, Arguments: it.Input})
		}
	case protocol.EventCompleted:
		k.s.Completed = true
		if u := ev.TokenUsage; u != nil {
			k.s.InputTokens, k.s.OutputTokens, k.s.TotalTokens = u.InputTokens, u.OutputTokens, u.TotalTokens
		}
	case protocol.EventFailed:
		k.s.Failed = "failed"
		if ev.Error != nil {
			k.s.Failed = ev.Error.Message
		}
	}
	return nil
}

// errNoInputs is returned for an empty corpus.
var errNoInputs = errors.New("benchmark: the corpus has no inputs")
