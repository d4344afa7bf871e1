package anthropicstream_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/anthropicstream"
)

func Example() {
	const upstream = `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5","usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"bash","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"ls\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":12}}

event: message_stop
data: {"type":"message_stop"}

`
	g, err := anthropicstream.Graph(anthropicstream.Options{})
	if err != nil {
		panic(err)
	}
	out := sinks.Collect[protocol.ResponseEvent]()
	if err := pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(upstream)), out); err != nil {
		panic(err)
	}
	for _, e := range out.Items() {
		b, _ := e.MarshalJSON()
		fmt.Println(string(b))
	}
	// Output:
	// {"type":"server_model","model":"claude-sonnet-4-5"}
	// {"type":"created"}
	// {"type":"output_item.done","item":{"type":"function_call","name":"bash","arguments":"{\"command\":\"ls\"}","call_id":"toolu_1"}}
	// {"type":"completed","response_id":"msg_1","token_usage":{"input_tokens":100,"cached_input_tokens":90,"output_tokens":12,"reasoning_output_tokens":0,"total_tokens":112},"finish_reason":"tool_calls"}
}
