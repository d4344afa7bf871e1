package server

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
)

// Bounded answers (README "Shared deployments").
//
// What one upstream answer may make the proxy hold and read is bounded
// three ways, each settable per upstream (serveconfig) and by flag:
//
//   - AnswerLimits.Text: the text, tool-call arguments and reasoning one
//     response holds (the Responses writer's Options.MaxText). It is what
//     memory grows with: the writer keeps each text once.
//   - AnswerLimits.Body: the decompressed bytes of one answer body, so that
//     an answer of tiny deltas — or of no content at all — cannot run on
//     for ever.
//   - AnswerLimits.Ratio: decompressed bytes per compressed byte of a gzip
//     body, checked once past ratioFloor decompressed bytes: a "zip bomb"
//     is stopped after a megabyte, not after a gigabyte of inflating.
//
// Past the text bound the client gets response.failed with code
// answer_too_large; past the body or ratio bound response.failed with code
// upstream_answer_too_large (or HTTP 502 when nothing was sent yet). Either
// way the run stops and the upstream connection is closed.

// Defaults of the answer bounds.
const (
	// DefaultMaxAnswerBytes is about eight million tokens of text: far over
	// any model's output, small enough for a shared proxy.
	DefaultMaxAnswerBytes = 32 << 20
	// DefaultMaxBodyBytes leaves room for a chat stream's framing, about
	// 150 bytes per delta, around an answer of DefaultMaxAnswerBytes.
	DefaultMaxBodyBytes = 256 << 20
	// DefaultMaxCompressionRatio is several times what gzip achieves on a
	// model's SSE stream.
	DefaultMaxCompressionRatio = 100
)

// ratioFloor is how many decompressed bytes a body may have before its
// compression ratio is checked: small bodies compress well.
const ratioFloor = 1 << 20

// AnswerLimits bound one upstream answer. In Config and
// serveconfig.Upstream 0 means the default and a negative value no bound;
// in force (answerLimits) 0 means no bound.
type AnswerLimits struct {
	Text  int64 // bytes of text, arguments and reasoning held
	Body  int64 // decompressed body bytes
	Ratio int64 // decompressed bytes per compressed byte
}

// inForce maps configured limits over defaults def to those in force.
func (l AnswerLimits) inForce(def AnswerLimits) AnswerLimits {
	pick := func(v, d int64) int64 {
		switch {
		case v < 0:
			return 0
		case v == 0:
			return d
		}
		return v
	}
	return AnswerLimits{Text: pick(l.Text, def.Text), Body: pick(l.Body, def.Body), Ratio: pick(l.Ratio, def.Ratio)}
}

// defaultLimits is Config.AnswerLimits over the package's defaults.
func (c Config) defaultLimits() AnswerLimits {
	return c.AnswerLimits.inForce(AnswerLimits{Text: DefaultMaxAnswerBytes, Body: DefaultMaxBodyBytes, Ratio: DefaultMaxCompressionRatio})
}

// answerTooLargeError is an upstream body that passed a bound of
// AnswerLimits while it was read.
type answerTooLargeError struct {
	// Bound is "body" or "compression ratio".
	Bound string
	// Limit is the bound's value.
	Limit int64
}

// Error says which bound and what it is.
func (e *answerTooLargeError) Error() string {
	if e.Bound == boundRatio {
		return fmt.Sprintf("the upstream's gzip answer inflates more than %d times (max_compression_ratio)", e.Limit)
	}
	return fmt.Sprintf("the upstream's answer passed %d bytes (max_body_bytes)", e.Limit)
}

const (
	boundBytes = "body"
	boundRatio = "compression ratio"
)

// codeAnswerTooLarge is the stream error code of an answerTooLargeError.
const codeAnswerTooLarge = "upstream_answer_too_large"

// answerFailure returns the stream error of a run that ended on an
// answerTooLargeError, nil for any other error.
func answerFailure(err error) *protocol.StreamError {
	e, ok := errors.AsType[*answerTooLargeError](err)
	if !ok {
		return nil
	}
	return &protocol.StreamError{Kind: protocol.ErrKindProtocol, Code: codeAnswerTooLarge, Message: "harnessflow ended the answer: " + e.Error()}
}

// boundedBody reads an upstream body within AnswerLimits.Body and Ratio,
// inflating a gzip body itself (the proxy asks for gzip, so Go's transport
// leaves the body as it came and the compressed bytes can be counted).
type boundedBody struct {
	raw    io.ReadCloser // the body as received (an idleBody)
	wire   *countReader  // raw, counted: compressed bytes
	inflat io.Reader     // what is read: the inflated body, or wire
	gz     *gzip.Reader  // nil: not gzip (or not yet opened)
	lim    AnswerLimits
	n      int64 // decompressed bytes read
	err    error // sticky: a bound passed
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// boundBody wraps resp.Body within lim, inflating it when its
// Content-Encoding is gzip. An encoding the proxy did not ask for is an
// error.
func boundBody(resp *http.Response, lim AnswerLimits) error {
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	b := &boundedBody{raw: resp.Body, lim: lim}
	b.wire = &countReader{r: resp.Body}
	b.inflat = b.wire
	switch enc {
	case "", "identity":
	case "gzip", "x-gzip":
		// Opened at the first Read: NewReader reads the header, which may
		// wait on the upstream.
		b.inflat = nil
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
	default:
		return fmt.Errorf("the upstream answered with Content-Encoding %q, which harnessflow did not ask for (it asks for gzip)", enc)
	}
	resp.Body = b
	return nil
}

// Read reads the (inflated) body, failing with an *answerTooLargeError once
// a bound is passed.
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.inflat == nil {
		gz, err := gzip.NewReader(b.wire)
		if err != nil {
			return 0, fmt.Errorf("upstream gzip body: %w", err)
		}
		b.gz, b.inflat = gz, gz
	}
	if b.lim.Body > 0 && int64(len(p)) > b.lim.Body-b.n+1 {
		p = p[:b.lim.Body-b.n+1] // read at most one byte past the bound
	}
	n, err := b.inflat.Read(p)
	b.n += int64(n)
	switch {
	case b.lim.Body > 0 && b.n > b.lim.Body:
		b.err = &answerTooLargeError{Bound: boundBytes, Limit: b.lim.Body}
	case b.gz != nil && b.lim.Ratio > 0 && b.n > ratioFloor && b.n > b.lim.Ratio*max(b.wire.n, 1):
		b.err = &answerTooLargeError{Bound: boundRatio, Limit: b.lim.Ratio}
	}
	if b.err != nil {
		return 0, b.err
	}
	if b.gz != nil && err != nil && err != io.EOF {
		err = fmt.Errorf("upstream gzip body: %w", err)
	}
	return n, err
}

// Close closes the body as received.
func (b *boundedBody) Close() error { return b.raw.Close() }
