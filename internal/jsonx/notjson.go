package jsonx

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// notJSONStart is how many bytes of the data a NotJSONError quotes.
const notJSONStart = 16

// NotJSONError is data that is not JSON at all — its first byte cannot
// start a JSON value (an HTML error page, a plain-text line, a log line
// mixed into the stream) — so that the error names what was found instead
// of where a parse stopped. It wraps the *SyntaxError at offset 0.
type NotJSONError struct {
	// What names the data: "data line", "body".
	What string
	// Start is the data's first bytes (at most 16, cut at a character
	// boundary).
	Start string
	// Truncated reports whether the data is longer than Start.
	Truncated bool
	// Err is the syntax error.
	Err *SyntaxError
}

// Error returns e.g. `data line is not JSON: starts with "hello world, thi"…`.
func (e *NotJSONError) Error() string {
	msg := e.What + " is not JSON: starts with " + strconv.Quote(e.Start)
	if e.Truncated {
		msg += "…"
	}
	return msg
}

// Unwrap returns the syntax error.
func (e *NotJSONError) Unwrap() error { return e.Err }

// NotJSON returns a *NotJSONError for err when err is a *SyntaxError at
// offset 0 of data — nothing of it reads as JSON — and err unchanged
// otherwise. data is the document as the scanner read it (leading
// whitespace already trimmed); what names it ("data line", "body").
func NotJSON(what string, data []byte, err error) error {
	se, ok := errors.AsType[*SyntaxError](err)
	if !ok || se.Offset != 0 || len(data) == 0 {
		return err
	}
	n := min(len(data), notJSONStart)
	// Back up to the start of the character the cut falls in — at most
	// utf8.UTFMax-1 bytes: bytes that are no character at all (invalid
	// UTF-8) are cut where they are (Quote escapes them).
	if n < len(data) {
		for k := n; k > n-utf8.UTFMax && k > 0; k-- {
			if utf8.RuneStart(data[k]) {
				n = k
				break
			}
		}
	}
	return &NotJSONError{What: what, Start: string(data[:n]), Truncated: n < len(data), Err: se}
}

// NotJSONLine is NotJSON for the trimmed data of an SSE event ("data
// line"), for decoders that keep the syntax error of data that starts like
// JSON (an array, a string, a broken object): only data whose first byte
// cannot start any JSON value (an HTML error page, a plain-text line)
// becomes a *NotJSONError, so the error says what arrived rather than only
// where reading stopped.
func NotJSONLine(data []byte, err error) error {
	var sc Scanner
	sc.Reset(data)
	if sc.Kind() != KindNone {
		return err
	}
	return NotJSON("data line", data, err)
}
