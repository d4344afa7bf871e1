package responses_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/responses"
)

// Past Options.MaxText the writer ends the stream with response.failed
// (answer_too_large) and Accept returns a *TextLimitError once — whether
// the text came in deltas or in a done item without them; within it the
// stream completes.
func TestMaxText(t *testing.T) {
	big := strings.Repeat("x", 600)
	for _, tt := range []struct {
		name   string
		events []protocol.ResponseEvent
		cut    bool
	}{
		{"deltas within", []protocol.ResponseEvent{protocol.TextDelta("hello"), protocol.Completed("", nil)}, false},
		{"deltas over", []protocol.ResponseEvent{protocol.TextDelta(big[:400]), protocol.TextDelta(big[:400]), protocol.Completed("", nil)}, true},
		{"a done item over", []protocol.ResponseEvent{protocol.Done(protocol.AssistantMessage(big)), protocol.Completed("", nil)}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w := responses.NewWriter(&out, responses.Options{MaxText: 500})
			var limitErrs int
			for _, ev := range tt.events {
				if err := w.Accept(ev); err != nil {
					var le *responses.TextLimitError
					if !errors.As(err, &le) || le.Limit != 500 {
						t.Fatalf("Accept: %v", err)
					}
					limitErrs++
				}
			}
			if tt.cut {
				if limitErrs != 1 || w.Terminal() != responses.EventFailed || w.Failure() == nil || w.Failure().Code != responses.CodeAnswerTooLarge {
					t.Fatalf("limit errors %d, terminal %q, failure %+v", limitErrs, w.Terminal(), w.Failure())
				}
				return
			}
			if limitErrs != 0 || w.Terminal() != responses.EventCompleted {
				t.Fatalf("limit errors %d, terminal %q", limitErrs, w.Terminal())
			}
		})
	}
}
