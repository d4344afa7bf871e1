package textcall

import (
	"context"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
)

// runLoading runs body through the chat graph with chat.textcalls in format
// (schemas given by LoadSchemas), the content cut into the given pieces,
// and returns the events as JSON and how many times the schemas were read.
func runLoading(t *testing.T, format string, pieces ...string) (string, int) {
	t.Helper()
	loads := 0
	n, err := Node(Options{Format: format, LoadSchemas: func() Schemas {
		loads++
		return Schemas{"count_words": {"limit": "integer", "path": "string"}}
	}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := chatstream.Graph(chatstream.Options{})
	if err == nil {
		g, err = g.InsertBefore(chatstream.AccumulateName, n)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err = pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(sseOf(pieces...))),
		pipeline.SinkFunc[protocol.ResponseEvent](func(ev protocol.ResponseEvent) error {
			b, err := ev.MarshalJSON()
			out.Write(b)
			out.WriteByte('\n')
			return err
		}))
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), loads
}

// The request's tool schemas are read only once a parser meets text that
// could be markup: never for plain prose (not even for the first text of
// the reply, which the reasoning splitter must look at), once for a call —
// also when the call starts the reply and the splitter held its first
// bytes as a possible <think> — and in time to type its values.
func TestStageReadsSchemasOnlyForMarkup(t *testing.T) {
	if _, loads := runLoading(t, "auto", "ts=1764636000 ", "plain words, ", "a colon: and a dash - too"); loads != 0 {
		t.Errorf("plain prose read the schemas %d times, want never", loads)
	}
	call := "<tool_call>\n<function=count_words>\n<parameter=path>\nnotes.txt\n</parameter>\n<parameter=limit>\n12\n</parameter>\n</function>\n</tool_call>"
	for _, cut := range []int{1, 2, 5, 11, len(call)} {
		pieces := []string{call[:cut]}
		if cut < len(call) {
			pieces = append(pieces, call[cut:])
		}
		for _, format := range []string{"qwen3_coder", "auto"} {
			events, loads := runLoading(t, format, pieces...)
			if loads != 1 {
				t.Errorf("%s, cut at %d: the schemas were read %d times, want once", format, cut, loads)
			}
			if !strings.Contains(events, `\"limit\":12`) || !strings.Contains(events, `\"path\":\"notes.txt\"`) {
				t.Errorf("%s, cut at %d: the call's values are not typed by the schema:\n%s", format, cut, events)
			}
		}
	}
}
