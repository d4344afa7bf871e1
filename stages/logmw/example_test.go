package logmw_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/logmw"
)

// Logging one node of the chat response graph, by name: every event it
// emits (type and size, never the text), then a summary. The API key in the
// stream is not logged.
func Example() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "elapsed" {
				return slog.Attr{} // keep the output stable
			}
			return a
		},
	}))
	g, err := chatstream.Graph(chatstream.Options{})
	if err == nil {
		g, err = g.Wrap("chat.finalize", logmw.Middleware(logger, logmw.Events))
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	err = pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(body)), sinks.Discard[protocol.ResponseEvent]())
	fmt.Println(err)
	// Output:
	// level=DEBUG msg="stage in" node=chat.finalize seq=1 type=chatstream.Step
	// level=DEBUG msg="stage out" node=chat.finalize seq=1 type=created
	// level=DEBUG msg="stage in" node=chat.finalize seq=2 type=chatstream.Step
	// level=DEBUG msg="stage out" node=chat.finalize seq=2 type=output_item.added item=message
	// level=DEBUG msg="stage in" node=chat.finalize seq=3 type=chatstream.Step
	// level=DEBUG msg="stage out" node=chat.finalize seq=3 type=output_text.delta bytes=44
	// level=DEBUG msg="stage in" node=chat.finalize seq=4 type=chatstream.Step
	// level=DEBUG msg="stage out" node=chat.finalize seq=4 type=output_item.done item=message
	// level=DEBUG msg="stage in" node=chat.finalize seq=5 type=chatstream.Step
	// level=DEBUG msg="stage out" node=chat.finalize seq=5 type=completed
	// level=INFO msg="stage done" node=chat.finalize in=5 in_bytes=0 out=5 out_bytes=44
	// <nil>
}
