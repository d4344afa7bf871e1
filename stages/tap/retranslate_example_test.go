package tap_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reugn/go-streams/extension"
	"github.com/reugn/go-streams/flow"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/anthropicstream"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/responsesstream"
)

// Re-translating a directory of recorded upstream streams (recordings such
// as tap.Record makes) inside go-streams pipelines: go-streams' FileSource
// reads each file line by line, the response graph of the file's wire runs
// as a go-streams Flow, and go-streams' Filter, Map and StdoutSink print the
// items and the end of every stream.
func Example_retranslate() {
	files, err := filepath.Glob("../../testdata/streams/*.sse")
	if err != nil || len(files) == 0 {
		fmt.Println("no recordings:", err)
		return
	}
	for _, file := range files {
		name := filepath.Base(file)
		g, err := graphFor(name)
		if err != nil {
			fmt.Println(name, err)
			continue
		}
		// The file source hands over lines without their line ends.
		g, err = g.Prepend(pipeline.StageNode("lines", pipeline.Map(func(line string) []byte { return []byte(line + "\n") })))
		if err != nil {
			fmt.Println(name, err)
			continue
		}
		f, err := g.AsFlow(context.Background(), pipeline.WithMode(pipeline.Async))
		if err != nil {
			fmt.Println(name, err)
			continue
		}
		fmt.Println(name)
		extension.NewFileSource(file).
			Via(f).
			Via(flow.NewFilter(func(ev protocol.ResponseEvent) bool {
				return ev.Type == protocol.EventOutputItemDone || ev.Type == protocol.EventCompleted || ev.Type == protocol.EventFailed
			}, 1)).
			Via(flow.NewMap(describe, 1)).
			To(extension.NewStdoutSink())
		if err := f.Wait(); err != nil {
			fmt.Println("  run:", err)
		}
	}
	// Output:
	// anthropic_tool_use.sse
	//   message: I'll run the decoder tests.
	//   function_call bash {"command": "go test ./internal/wire/... -run TestDecoder -count=1", "timeout": 120}
	//   completed (tool_calls)
	// chat_parallel_tools.sse
	//   function_call read_file {"path":"internal/wire/sse.go","offset":1,"limit":200}
	//   function_call grep {"pattern":"func (d \\*Decoder)","path":"internal/wire","glob":"*.go"}
	//   function_call list_dir {"path":"internal/wire/testdata"}
	//   completed (tool_calls)
	// chat_reasoning.sse
	//   reasoning
	//   message: **9.8** is larger. Write both with two decimals: 9.80 > 9.11.
	//   completed (stop)
	// responses_tools.sse
	//   function_call shell {"command":["rg","-n","ssestream","--glob","*.go"],"workdir":"/repo","timeout_ms":20000}
	//   custom_tool_call apply_patch
	//   completed (tool_calls)
}

// graphFor returns the response graph of a recording's wire, named by its
// file name's prefix.
func graphFor(name string) (*pipeline.Graph, error) {
	switch {
	case strings.HasPrefix(name, "chat"):
		return chatstream.Graph(chatstream.Options{})
	case strings.HasPrefix(name, "anthropic"):
		return anthropicstream.Graph(anthropicstream.Options{})
	case strings.HasPrefix(name, "responses"):
		return responsesstream.Graph(responsesstream.Options{})
	}
	return nil, fmt.Errorf("no wire for %s", name)
}

// describe prints a finished item or the end of a stream in one line.
func describe(ev protocol.ResponseEvent) string {
	switch it := ev.Item.(type) {
	case *protocol.FunctionCall:
		return "  function_call " + it.Name + " " + it.Arguments
	case *protocol.CustomToolCall:
		return "  custom_tool_call " + it.Name
	case *protocol.Message:
		var text strings.Builder
		for _, c := range it.Content {
			text.WriteString(c.Text)
		}
		return "  message: " + text.String()
	case nil:
		if ev.Type == protocol.EventFailed {
			return "  failed: " + ev.Error.Message
		}
		return "  completed (" + ev.FinishReason + ")"
	}
	return "  " + ev.Item.ItemType()
}
