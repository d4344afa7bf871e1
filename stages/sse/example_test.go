package sse_test

import (
	"context"
	"fmt"

	"github.com/harnessflow/harnessflow/stages/sse"
)

// Decoding a stream delivered in arbitrary chunks: the chunk boundaries (here
// inside a CRLF and inside a field) do not change the events.
func Example() {
	d := sse.New(sse.Options{})
	ctx := context.Background()
	emit := func(e sse.Event) {
		if e.Truncated {
			fmt.Printf("stream ended mid-event at byte %d\n", e.Offset)
			return
		}
		fmt.Printf("%s %q (byte %d)\n", e.Type, e.Data, e.Offset)
	}
	for _, chunk := range []string{
		"\uFEFF: keep-alive\r\ndata: {\"a\":1}\r",
		"\n\r\nevent: ping\nda",
		"ta\n\ndata: line 1\ndata: line 2\n\ndata: cut sho",
	} {
		if err := d.Push(ctx, []byte(chunk), emit); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := d.Finish(ctx, emit); err != nil {
		fmt.Println(err)
	}
	fmt.Println("truncated:", d.Truncated())
	// Output:
	// message "{\"a\":1}" (byte 17)
	// ping "" (byte 34)
	// message "line 1\nline 2" (byte 52)
	// stream ended mid-event at byte 79
	// truncated: true
}

// Keeping events beyond the emit call requires Own: Data and ID are borrowed.
func ExampleEvent_Own() {
	d := sse.New(sse.Options{})
	var kept []sse.Event
	buf := []byte("id: 1\ndata: first\n\n")
	_ = d.Push(context.Background(), buf, func(e sse.Event) { kept = append(kept, e.Own()) })
	copy(buf, "id: 2\ndata: XXXXX\n\n") // the caller reuses its read buffer
	fmt.Printf("%s %s\n", kept[0].ID, kept[0].Data)
	// Output: 1 first
}

// A line or event above MaxEventBytes fails the stream with its offset.
func ExampleTooLargeError() {
	d := sse.New(sse.Options{MaxEventBytes: 16})
	err := d.Push(context.Background(), []byte("data: ok\n\ndata: this line is too long\n"), func(sse.Event) {})
	fmt.Println(err)
	// Output: sse: event starting at byte 10 exceeds 16 bytes
}
