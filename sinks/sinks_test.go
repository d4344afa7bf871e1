package sinks_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
)

func TestJSONLines(t *testing.T) {
	var buf bytes.Buffer
	s := sinks.JSONLines(&buf, false)
	evs := []protocol.ResponseEvent{
		protocol.Created(),
		protocol.TextDelta("hi \"there\"\n"),
		protocol.Completed("r1", &protocol.TokenUsage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5}),
	}
	for _, ev := range evs {
		if err := s.Accept(ev); err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len() != 0 {
		t.Fatal("buffered sink wrote before Flush")
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"created"}
{"type":"output_text.delta","delta":"hi \"there\"\n"}
{"type":"completed","response_id":"r1","token_usage":{"input_tokens":3,"cached_input_tokens":0,"output_tokens":2,"reasoning_output_tokens":0,"total_tokens":5}}
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestJSONLinesWriteError(t *testing.T) {
	s := sinks.JSONLines(failWriter{}, true)
	if err := s.Accept(protocol.Created()); err == nil {
		t.Fatal("write error not reported")
	}
}

type owned struct{ b []byte }

func (o owned) Own() owned { return owned{append([]byte(nil), o.b...)} }

func TestCollectorOwns(t *testing.T) {
	c := sinks.Collect[owned]()
	buf := []byte("abc")
	_ = c.Accept(owned{buf})
	copy(buf, "xyz")
	if got := string(c.Items()[0].b); got != "abc" {
		t.Fatalf("collector kept a borrowed value: %q", got)
	}
}

func TestChanSinkCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := sinks.Chan(ctx, make(chan int))
	if err := s.Accept(1); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}
