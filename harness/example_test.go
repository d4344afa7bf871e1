package harness_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/all"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

// A recorded chat stream translated by the graph serve runs for the
// opencode route — the protocol layer with the text tool-call node
// (chat.textcalls, on as serve's default "auto" sets it), then the
// harness's bridge — with a logging stage of our own inserted by name
// before harness.bridge. The model wrote its call as Qwen3-Coder markup
// in the text; the events show it recovered as a function call.
func Example() {
	body, err := os.ReadFile("../testdata/requests/codex_tools.json") // a Codex request
	if err != nil {
		fmt.Println(err)
		return
	}
	req, err := protocol.DecodeRequest(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	req.Model = "qwen3-coder"
	cfg := harness.Config{
		Registry:   all.Registry(), // every harness of harnessflow ("opencode" below)
		Wire:       harness.WireChat,
		ToolFormat: textcall.Auto,
		Now:        func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	}
	ex, err := harness.Open(context.Background(), cfg, harness.Opening{Harness: "opencode", Request: req})
	if err != nil {
		fmt.Println(err)
		return
	}

	// The logging stage: one record per tool call the model made, before
	// the bridge maps it back to the client's tools.
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // keep the output stable
			}
			return a
		},
	}))
	audit := pipeline.StageNode("user.audit", pipeline.Func[protocol.ResponseEvent, protocol.ResponseEvent](
		func(ctx context.Context, ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) error {
			if call, ok := ev.Item.(*protocol.FunctionCall); ok && ev.Type == protocol.EventOutputItemDone {
				logger.InfoContext(ctx, "tool call", "name", call.Name, "arguments", call.Arguments)
			}
			emit(ev)
			return nil
		}))
	g, err := ex.Graph(func(g *pipeline.Graph) (*pipeline.Graph, error) {
		return g.InsertBefore("harness.bridge", audit)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(g.Names(), " → "))

	f, err := os.Open("../testdata/text-tool-calls/chat_qwen3_coder.sse") // recorded upstream bytes
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	if err := pipeline.Run(context.Background(), g, sources.Reader(f), sinks.JSONLines(os.Stdout, true)); err != nil {
		fmt.Println(err)
	}
	// Output:
	// sse.decode → chat.decode → chat.textcalls → chat.accumulate → chat.finalize → user.audit → harness.bridge
	// {"type":"server_model","model":"qwen3-coder"}
	// {"type":"created"}
	// {"type":"output_item.added","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":""}]}}
	// {"type":"output_text.delta","delta":"I will list the files.\n"}
	// {"type":"output_item.done","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":"I will list the files.\n"}]}}
	// level=INFO msg="tool call" name=exec_command arguments="{\"cmd\":\"ls -l\"}"
	// {"type":"output_item.done","item":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls -l\"}","call_id":"call_chatcmpl-q1_0"}}
	// {"type":"completed","response_id":"chatcmpl-q1","finish_reason":"tool_calls"}
}
