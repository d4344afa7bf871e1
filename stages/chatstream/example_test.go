package chatstream_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
)

// A streamed chat completion with a tool call becomes ResponseEvents.
func ExampleGraph() {
	body := `data: {"id":"chatcmpl-1","model":"m","choices":[{"index":0,"delta":{"content":"Listing."}}]}

data: {"id":"chatcmpl-1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"cmd\":"}}]}}]}

data: {"id":"chatcmpl-1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"ls\"}"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`
	g, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		panic(err)
	}
	err = pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(body)),
		pipeline.SinkFunc[protocol.ResponseEvent](func(ev protocol.ResponseEvent) error {
			b, err := ev.MarshalJSON()
			fmt.Println(string(b))
			return err
		}))
	if err != nil {
		fmt.Println("error:", err)
	}
	// Output:
	// {"type":"server_model","model":"m"}
	// {"type":"created"}
	// {"type":"output_item.added","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":""}]}}
	// {"type":"output_text.delta","delta":"Listing."}
	// {"type":"output_item.done","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":"Listing."}]}}
	// {"type":"output_item.done","item":{"type":"function_call","name":"shell","arguments":"{\"cmd\":\"ls\"}","call_id":"call_1"}}
	// {"type":"completed","response_id":"chatcmpl-1","finish_reason":"tool_calls"}
}
