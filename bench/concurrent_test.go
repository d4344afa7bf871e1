package bench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/metrics"
	"github.com/harnessflow/harnessflow/wire/responses"
)

// concurrentChunks is the number of upstream chunks (text deltas) of one
// stream of BenchmarkChatStreamConcurrent.
const concurrentChunks = 60

// concurrentStream is one chat stream of concurrentChunks text deltas, a
// finish chunk and [DONE], each chunk a separate read.
func concurrentStream() [][]byte {
	var reads [][]byte
	for i := range concurrentChunks {
		reads = append(reads, fmt.Appendf(nil, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"word %d "},"finish_reason":null}]}`+"\n\n", i))
	}
	return append(reads,
		[]byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"),
		[]byte("data: [DONE]\n\n"))
}

// BenchmarkChatStreamConcurrent measures what serve's per-delta translation
// costs when many streams are open at once: N goroutines each run the chat
// response graph (counted, untimed, as serve runs it) into a Responses
// writer, and a driver hands every stream its next upstream read in turn,
// so each delta finds its stream's state and stack as a proxy with N
// streams does — evicted from the caches by the other streams. No sockets;
// every N pays the same channel handoff and goroutine switch per read (which
// dominate N = 1, where the driver and the stream take turns), so compare
// N = 100 with N = 2,000 for the cost of cold state.
//
//	go test ./bench -run '^$' -bench BenchmarkChatStreamConcurrent -benchmem
func BenchmarkChatStreamConcurrent(b *testing.B) {
	g, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		b.Fatal(err)
	}
	reads := concurrentStream()
	for _, n := range []int{1, 100, 2000} {
		b.Run(fmt.Sprintf("streams-%d", n), func(b *testing.B) {
			m := metrics.New()
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				feeds := make([]chan []byte, n)
				var wg sync.WaitGroup
				errs := make(chan error, n)
				for i := range feeds {
					feeds[i] = make(chan []byte)
					src := pipeline.SourceFunc[[]byte](func(ctx context.Context, emit func([]byte) error) error {
						for r := range feeds[i] {
							if err := emit(r); err != nil {
								return err
							}
						}
						return nil
					})
					wg.Go(func() {
						w := responses.NewWriter(io.Discard, responses.Options{ResponseID: "resp_bench", Model: "m", CreatedAt: 1})
						obs := m.RunObserver(g)
						if err := pipeline.Run(context.Background(), g, src, w, pipeline.WithObserver(obs), pipeline.WithoutTiming()); err != nil {
							errs <- err
						}
						obs.Flush()
						if w.Terminal() != responses.EventCompleted {
							errs <- fmt.Errorf("stream ended with %q", w.Terminal())
						}
					})
				}
				for _, r := range reads {
					for _, f := range feeds {
						f <- r
					}
				}
				for _, f := range feeds {
					close(f)
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
			}
			deltas := float64(b.N) * float64(n) * float64(len(reads))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/deltas, "ns/read")
			b.ReportMetric(float64(processCPU()-cpu)/deltas, "cpu-ns/read")
		})
	}
}
