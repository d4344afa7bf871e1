package messagesin

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/anthropicstream"
	"github.com/harnessflow/harnessflow/stages/streamtest"
)

// TestReplayThroughDecoder reads the writer's stream of every writer
// golden with the project's own Messages stream decoder — whole, one byte
// at a time and in random chunks, in both run modes (streamtest.Replay) —
// and checks that it gives back what the events said: the same done items
// (text, reasoning and its signature, tool calls and their arguments) and
// the same finish reason and usage.
func TestReplayThroughDecoder(t *testing.T) {
	files, _ := filepath.Glob("testdata/writer/*.txtar")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			evs := readEvents(t, section(t, readArchive(t, file), "events.jsonl"))
			var sse bytes.Buffer
			w := NewWriter(&sse, Options{Model: "m"})
			for _, ev := range evs {
				if err := w.Accept(ev); err != nil {
					t.Fatal(err)
				}
			}
			g, err := anthropicstream.Graph(anthropicstream.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := streamtest.Replay(t, g, sse.Bytes())
			if diff := cmp.Diff(summary(evs), summary(got.Events)); diff != "" {
				t.Fatalf("the decoder read back something else (-events +read):\n%s\nstream:\n%s", diff, sse.String())
			}
		})
	}
}

// summary is what a client keeps of a stream: the done items in order and
// how it ended.
func summary(evs []protocol.ResponseEvent) []string {
	var out []string
	tools := false
	for _, ev := range evs {
		switch ev.Type {
		case protocol.EventOutputItemDone:
			switch it := ev.Item.(type) {
			case *protocol.Message:
				var t strings.Builder
				for _, c := range it.Content {
					t.WriteString(c.Text)
				}
				out = append(out, "text "+t.String())
			case *protocol.Reasoning:
				sig := ""
				if it.EncryptedContent != nil {
					sig = *it.EncryptedContent
				}
				out = append(out, "thinking "+reasoningText(it)+" sig="+sig)
			case *protocol.FunctionCall:
				tools = true
				args := it.Arguments
				if args == "not json" { // the wire carries only objects
					args = `{"input":"not json"}`
				}
				out = append(out, "tool "+it.CallID+" "+it.Name+" "+args)
			}
		case protocol.EventCompleted:
			u := protocol.TokenUsage{}
			if ev.TokenUsage != nil {
				u = *ev.TokenUsage
			}
			finish := ev.FinishReason
			if finish == "" {
				finish = "stop"
				if tools {
					finish = "tool_calls"
				}
			}
			out = append(out, fmt.Sprintf("completed %s in=%d cached=%d out=%d", finish, u.InputTokens, u.CachedInputTokens, u.OutputTokens))
		case protocol.EventFailed:
			out = append(out, "failed "+ev.Error.Message)
		}
	}
	return out
}
