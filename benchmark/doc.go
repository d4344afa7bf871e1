// Package benchmark measures a pipeline graph — one of harnessflow's, as
// `harnessflow bench` does, or a user's own — over a corpus: per stage and
// end to end, in the fused and the async mode, next to other
// implementations of the same translation (the official SDKs' stream
// accumulators) on the same bytes in the same run.
//
//	corpus, _ := benchmark.Generate("chat", benchmark.DefaultChunks)
//	res, err := benchmark.Graph(ctx, g, corpus, benchmark.Options{
//		Peers: []benchmark.Peer{sdkpeer.OpenAIChat()}, // package benchmark/sdkpeer
//	})
//	report := &benchmark.Report{Machine: benchmark.ReadMachine(), Results: []*benchmark.Result{res}}
//	report.WriteMarkdown(os.Stdout) // or WriteJSON, or SVG
//
// Every figure is per upstream event of the corpus (SSE events without the
// chat wire's [DONE]; one per request for request graphs): wall-clock ns
// (the median of interleaved samples), the process's CPU ns, heap
// allocations, events/s and MB/s. Generated chat and messages streams of
// DefaultChunks chunks are the corpora of `go test ./bench`, so the two
// measure the same thing; see [Graph] for how a single stage is isolated.
//
// The charts are drawn by the small SVG writer of package
// benchmark/chart, which also has the line chart a latency-versus-load
// report needs.
package benchmark
