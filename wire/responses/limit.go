package responses

import (
	"fmt"

	"github.com/harnessflow/harnessflow/protocol"
)

// CodeAnswerTooLarge is the response.failed code of a response that passed
// its writer's Options.MaxText.
const CodeAnswerTooLarge = "answer_too_large"

// TextLimitError is what Accept returns once a response passed
// Options.MaxText (after writing its response.failed).
type TextLimitError struct {
	// Limit is Options.MaxText.
	Limit int
}

// Error names the limit.
func (e *TextLimitError) Error() string {
	return fmt.Sprintf("the answer passed the limit of %d bytes of text, tool-call arguments and reasoning that one response may hold", e.Limit)
}

// overLimit ends the stream with response.failed for a TextLimitError and
// returns it, so that the run stops.
func (s *Writer) overLimit() error {
	e := &TextLimitError{Limit: s.maxText}
	if err := s.failed(&protocol.StreamError{Kind: protocol.ErrKindProtocol, Code: CodeAnswerTooLarge,
		Message: "harnessflow ended the answer: " + e.Error() + " (serve --max-answer-bytes)"}); err != nil {
		return err
	}
	return e
}
