package textcall_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

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
