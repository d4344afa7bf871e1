package tap_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/tap"
)

// Recording the upstream bytes of a live run, inserted by name before
// sse.decode, then replaying the recording through the plain graph.
func Example() {
	dir, err := os.MkdirTemp("", "record")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	upstream := "data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n" +
		"data: {\"id\":\"r1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

	plain, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	f, path, err := tap.RecordFile(dir, "chat")
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := plain.InsertBefore("sse.decode", tap.Node(f))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(g.Names(), " → "))
	live := pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(upstream)), sinks.JSONLines(os.Stdout, false))
	fmt.Println("live:", live, "close:", f.Close())

	// What `harnessflow translate --wire chat FILE` does with the recording:
	replay := pipeline.Run(context.Background(), plain, sources.File(path), sinks.JSONLines(os.Stdout, false))
	fmt.Println("replay:", replay)
	// Output:
	// tap.record → sse.decode → chat.decode → chat.accumulate → chat.finalize
	// {"type":"created"}
	// {"type":"output_item.added","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":""}]}}
	// {"type":"output_text.delta","delta":"hi"}
	// {"type":"output_item.done","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":"hi"}]}}
	// {"type":"completed","response_id":"r1","finish_reason":"stop"}
	// live: <nil> close: <nil>
	// {"type":"created"}
	// {"type":"output_item.added","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":""}]}}
	// {"type":"output_text.delta","delta":"hi"}
	// {"type":"output_item.done","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":"hi"}]}}
	// {"type":"completed","response_id":"r1","finish_reason":"stop"}
	// replay: <nil>
}
