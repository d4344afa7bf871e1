package textcall_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

// A chat server without a tool parser passes on the call a model wrote in
// its text (Qwen3-Coder markup here, cut across deltas). The chat.textcalls
// node, inserted by name before chat.accumulate as serve does, turns it
// into a function call typed by the request's tool schemas (timeout is an
// integer); the text around the markup stays text.
func Example() {
	n, err := textcall.Node(textcall.Options{
		Format: textcall.Auto,
		Config: textcall.Config{Schemas: textcall.Schemas{"exec_command": {"cmd": "string", "timeout": "integer"}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := chatstream.Graph(chatstream.Options{})
	if err == nil {
		g, err = g.InsertBefore(chatstream.AccumulateName, n)
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	var body strings.Builder
	for _, d := range []string{"Checking.\n<tool_", "call>\n<function=exec_command>\n<parameter=cmd>\ngo vet ./...\n</para",
		"meter>\n<parameter=timeout>\n30\n</parameter>\n</function>\n</tool_call>"} {
		fmt.Fprintf(&body, "data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", d)
	}
	body.WriteString("data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	if err := pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(body.String())), sinks.JSONLines(os.Stdout, false)); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"type":"created"}
	// {"type":"output_item.added","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":""}]}}
	// {"type":"output_text.delta","delta":"Checking.\n"}
	// {"type":"output_item.done","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":"Checking.\n"}]}}
	// {"type":"output_item.done","item":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"go vet ./...\",\"timeout\":30}","call_id":"call_r1_0"}}
	// {"type":"completed","response_id":"r1","finish_reason":"tool_calls"}
}

// The text tool-call stage inserted by name into the chat response graph
// (before chat.accumulate, where serve puts it) and its throughput
// measured on fifty copies of a recorded stream whose model wrote its call
// as Qwen3-Coder markup: per stage and end to end, in both modes. The figures
// (res.Stages[i].Modes["fused"].EventsPerSec, …) vary from run to run and
// are not printed; what the graph made of the stream does not vary.
func Example_throughput() {
	n, err := textcall.Node(textcall.Options{Format: textcall.Auto, Config: textcall.Config{Model: "qwen3-coder"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := chatstream.Graph(chatstream.Options{})
	if err == nil {
		g, err = g.InsertBefore(chatstream.AccumulateName, n)
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	body, err := os.ReadFile("../../testdata/text-tool-calls/chat_qwen3_coder.sse")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := benchmark.Graph(context.Background(), g, benchmark.Corpus{Name: "qwen3-coder markup ×50", Inputs: slices.Repeat([][]byte{body}, 50)},
		benchmark.Options{Iterations: 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(res.Nodes, " → "))
	for _, st := range res.Stages {
		m := st.Modes["fused"]
		fmt.Printf("%-16s %s, measured: %v\n", st.Node, st.Method, m != nil && m.Iterations == 20 && st.Modes["async"] != nil)
	}
	fmt.Println("upstream events:", res.Corpus.Events, "— engine events of one stream:", res.Output.Outputs)
	fmt.Printf("text %q\n", res.Output.Text)
	for _, c := range res.Output.Calls {
		fmt.Println("call", c.Name, c.Arguments)
	}
	// Output:
	// sse.decode → chat.decode → chat.textcalls → chat.accumulate → chat.finalize
	// sse.decode       replay, measured: true
	// chat.decode      replay, measured: true
	// chat.textcalls   replay, measured: true
	// chat.accumulate  replay, measured: true
	// chat.finalize    replay, measured: true
	// upstream events: 250 — engine events of one stream: 7
	// text "I will list the files.\n"
	// call exec_command {"cmd":"ls -l"}
}
