package benchmark_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/benchmark/sdkpeer"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/chatstream"
)

// A user's own graph — the chat protocol layer with a stage of theirs
// appended — is measured per stage and end to end, next to openai-go on the
// same generated stream. The figures vary from run to run; what is printed
// here does not.
func ExampleGraph() {
	chat, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// A stage of our own: drop the reasoning deltas (the reasoning item
	// still comes whole when it is done).
	quiet := pipeline.StageNode("user.quiet", pipeline.Filter(func(ev protocol.ResponseEvent) bool {
		return ev.Type != protocol.EventReasoningContentDelta
	}))
	g, err := chat.Append(quiet)
	if err != nil {
		fmt.Println(err)
		return
	}
	corpus, err := benchmark.Generate("chat", 2000)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := benchmark.Graph(context.Background(), g, corpus, benchmark.Options{
		Iterations: 3, // or Duration; the default is about two seconds
		Peers:      []benchmark.Peer{sdkpeer.OpenAIChat()},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range res.Stages {
		fmt.Printf("%-16s %s, fused and async measured: %v\n", st.Node, st.Method, st.Modes["fused"] != nil && st.Modes["async"] != nil)
	}
	fmt.Println("events:", res.Corpus.Events, "— end to end in", strings.Join(res.Modes, " and "))
	p := res.Peers[0]
	fmt.Printf("%s gives the same result: %v\n", p.Name, p.Agrees)

	// res renders as Markdown, JSON or an SVG chart (write to os.Stdout,
	// or a file, in a program).
	rep := &benchmark.Report{Title: "my graph", Machine: benchmark.ReadMachine(), Results: []*benchmark.Result{res}}
	_ = rep.WriteMarkdown(io.Discard)
	// Output:
	// sse.decode       replay, fused and async measured: true
	// chat.decode      replay, fused and async measured: true
	// chat.accumulate  replay, fused and async measured: true
	// chat.finalize    replay, fused and async measured: true
	// user.quiet       replay, fused and async measured: true
	// events: 2000 — end to end in fused and async
	// openai-go gives the same result: true
}
