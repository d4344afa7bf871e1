package metrics_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/metrics"
)

// Counting a chat stream: the counting stage inserted by name after
// chat.finalize, the observer on every node, the totals in Prometheus text.
func Example() {
	m := metrics.New()
	g, err := chatstream.Graph(chatstream.Options{})
	if err == nil {
		g, err = g.InsertAfter("chat.finalize", m.Node())
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	body := "data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hel\"}}]}\n\n" +
		"data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n" +
		"data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n"
	err = pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(body)),
		sinks.Discard[protocol.ResponseEvent](), pipeline.WithObserver(m.Observer(g)))
	if err != nil {
		m.RunError(err)
	}
	var buf bytes.Buffer
	if err := m.WritePrometheus(&buf); err != nil {
		fmt.Println(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(line, "harnessflow_") && !strings.Contains(line, "_seconds_") {
			fmt.Println(line) // times vary from run to run
		}
	}
	// Output:
	// harnessflow_node_inputs_total{graph="chat-response",node="sse.decode"} 1
	// harnessflow_node_inputs_total{graph="chat-response",node="chat.decode"} 3
	// harnessflow_node_inputs_total{graph="chat-response",node="chat.accumulate"} 3
	// harnessflow_node_inputs_total{graph="chat-response",node="chat.finalize"} 5
	// harnessflow_node_inputs_total{graph="chat-response",node="metrics.count"} 5
	// harnessflow_node_outputs_total{graph="chat-response",node="sse.decode"} 3
	// harnessflow_node_outputs_total{graph="chat-response",node="chat.decode"} 3
	// harnessflow_node_outputs_total{graph="chat-response",node="chat.accumulate"} 5
	// harnessflow_node_outputs_total{graph="chat-response",node="chat.finalize"} 5
	// harnessflow_node_outputs_total{graph="chat-response",node="metrics.count"} 5
	// harnessflow_node_errors_total{graph="chat-response",node="sse.decode"} 0
	// harnessflow_node_errors_total{graph="chat-response",node="chat.decode"} 0
	// harnessflow_node_errors_total{graph="chat-response",node="chat.accumulate"} 0
	// harnessflow_node_errors_total{graph="chat-response",node="chat.finalize"} 0
	// harnessflow_node_errors_total{graph="chat-response",node="metrics.count"} 0
	// harnessflow_stream_events_total{type="created"} 1
	// harnessflow_stream_events_total{type="failed"} 1
	// harnessflow_stream_events_total{type="output_item.added"} 1
	// harnessflow_stream_events_total{type="output_text.delta"} 2
	// harnessflow_stream_delta_bytes_total 5
	// harnessflow_streams_started_total 1
	// harnessflow_streams_ended_total{outcome="completed"} 0
	// harnessflow_streams_ended_total{outcome="incomplete"} 0
	// harnessflow_streams_ended_total{outcome="failed"} 1
	// harnessflow_streams_ended_total{outcome="client_closed"} 0
	// harnessflow_streams_ended_total{outcome="shutdown"} 0
	// harnessflow_streams_ended_total{outcome="no_terminal_event"} 0
	// harnessflow_stream_failures_total{kind="upstream_error"} 1
}
