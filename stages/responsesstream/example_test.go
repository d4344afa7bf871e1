package responsesstream_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/responsesstream"
)

func Example() {
	const upstream = `event: response.created
data: {"type":"response.created","response":{"id":"resp_1","model":"gpt-5.1-codex","status":"in_progress"}}

event: response.output_item.added
data: {"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi"}

event: response.output_item.done
data: {"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}}

event: error
data: {"type":"error","code":"rate_limit_exceeded","message":"Please try again in 20ms."}

`
	g, err := responsesstream.Graph(responsesstream.Options{})
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
	// {"type":"server_model","model":"gpt-5.1-codex"}
	// {"type":"created"}
	// {"type":"output_item.added","item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}
	// {"type":"output_text.delta","delta":"Hi"}
	// {"type":"output_item.done","item":{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}}
	// {"type":"failed","error":{"kind":"upstream_error","code":"rate_limit_exceeded","message":"Please try again in 20ms.","retryable":true,"retry_after_ms":20},"response_id":"resp_1"}
}
