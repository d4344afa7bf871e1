package chatin

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

// TestReplayThroughDecoder reads the writer's stream of every writer
// golden with the project's own chat stream decoder — whole, one byte at a
// time and in random chunks, in both run modes (streamtest.Replay) — and
// the non-streaming body with its unary decoder, and checks that both give
// back what the events said: the same text, reasoning, tool calls and
// arguments, finish reason and usage.
func TestReplayThroughDecoder(t *testing.T) {
	files, _ := filepath.Glob("testdata/writer/*.txtar")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar := readArchive(t, file)
			evs := readEvents(t, section(t, ar, "events.jsonl"))
			var sse bytes.Buffer
			opts := Options{Model: "m", IncludeUsage: true}
			w := NewWriter(&sse, opts)
			unary := NewWriter(nil, opts)
			for _, ev := range evs {
				if err := w.Accept(ev); err != nil {
					t.Fatal(err)
				}
				_ = unary.Accept(ev)
			}
			g, err := chatstream.Graph(chatstream.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := summary(evs)
			got := streamtest.Replay(t, g, sse.Bytes())
			if diff := cmp.Diff(want, summary(got.Events)); diff != "" {
				t.Fatalf("the stream decoder read back something else (-events +read):\n%s\nstream:\n%s", diff, sse.String())
			}
			if w.Failure() != nil {
				return
			}
			ug, err := chatstream.UnaryGraph(chatstream.Options{})
			if err != nil {
				t.Fatal(err)
			}
			body := unary.AppendCompletion(nil)
			gotUnary := streamtest.Run(t, ug, body, 0, nil)
			if diff := cmp.Diff(want, summary(gotUnary.Events)); diff != "" {
				t.Fatalf("the unary decoder read back something else (-events +read):\n%s\nbody:\n%s", diff, body)
			}
		})
	}
}

// summary is what a client keeps of a stream: text, reasoning and calls in
// order (text and reasoning joined per kind, as a chat client keeps them),
// and how it ended.
func summary(evs []protocol.ResponseEvent) []string {
	var text, reasoning strings.Builder
	var calls []string
	var end string
	for _, ev := range evs {
		switch ev.Type {
		case protocol.EventOutputItemDone:
			switch it := ev.Item.(type) {
			case *protocol.Message:
				for _, c := range it.Content {
					text.WriteString(c.Text)
				}
			case *protocol.Reasoning:
				for _, c := range it.Content {
					reasoning.WriteString(c.Text)
				}
			case *protocol.FunctionCall:
				args := it.Arguments
				if args == "" {
					args = "{}"
				}
				calls = append(calls, "tool "+it.CallID+" "+it.Name+" "+args)
			}
		case protocol.EventCompleted:
			u := protocol.TokenUsage{}
			if ev.TokenUsage != nil {
				u = *ev.TokenUsage
			}
			end = fmt.Sprintf("completed %s in=%d cached=%d out=%d", FinishReasonOf(ev.FinishReason, len(calls) > 0), u.InputTokens, u.CachedInputTokens, u.OutputTokens)
		case protocol.EventFailed:
			end = "failed " + ev.Error.Message
		}
	}
	out := []string{"text " + text.String(), "reasoning " + reasoning.String()}
	return append(append(out, calls...), end)
}
