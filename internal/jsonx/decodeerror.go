package jsonx

import (
	"errors"
	"strconv"
)

// DecodeError is the fatal error of a stream decoder (chat.decode,
// chat.unary, anthropic.decode, responses.decode): the data of one event is
// not well-formed JSON of the shape the decoder expects. The three stream
// packages export it under their own name (chatstream.DecodeError, ...).
type DecodeError struct {
	// Event is the type of the event: its SSE event name ("message" for
	// an unnamed event), or the JSON type it was read as. It is empty when
	// the data is a whole non-streaming response body (chat.unary).
	Event string
	// Offset is the byte offset of the event in the stream (0 for a body).
	Offset int64
	// DataOffset is the byte offset inside the event's data where the
	// problem was found (for a *SyntaxError, its Offset), or -1 when it is
	// not at one place.
	DataOffset int
	// Err is the cause: a *SyntaxError, or what else is wrong with the
	// data (an output item that does not decode, say).
	Err error
}

// NewDecodeError returns the DecodeError of the event at offset whose data
// failed with err; DataOffset is err's offset when err is a *SyntaxError.
func NewDecodeError(event string, offset int64, err error) *DecodeError {
	return &DecodeError{Event: event, Offset: offset, DataOffset: DataOffset(err), Err: err}
}

// DataOffset returns the Offset of the *SyntaxError in err's chain, or -1.
func DataOffset(err error) int {
	if se, ok := errors.AsType[*SyntaxError](err); ok {
		return se.Offset
	}
	return -1
}

// Error returns e.g. "content_block_delta event at byte 423: invalid JSON at
// data byte 80: unexpected end of data in string literal", or for a body
// "body: invalid JSON at data byte 47: ...".
func (e *DecodeError) Error() string {
	cause := "malformed data"
	if e.Err != nil {
		cause = e.Err.Error()
	}
	if e.Event == "" {
		if _, ok := errors.AsType[*NotJSONError](e.Err); ok {
			return cause // "body is not JSON: starts with …" names it already
		}
		return "body: " + cause
	}
	return e.Event + " event at byte " + strconv.FormatInt(e.Offset, 10) + ": " + cause
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }
