package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/harnessflow/harnessflow/protocol"
)

// bodyBlock is the size of the blocks a body without Content-Length is read
// in.
const bodyBlock = 1 << 20

// readBody reads the client's request body, at most Config.MaxRequestBytes.
// A body whose Content-Length is over the limit is refused before a byte of
// it is read; a body without one is read in blocks and given up on as soon
// as it passes the limit, so a rejected body never costs more than the
// limit, and an accepted one is read into a buffer of its exact size. Both
// refusals are a *http.MaxBytesError.
//
// The body must arrive within Config.BodyTimeout (a read deadline on the
// connection, lifted once it has: a stream's connection must stay
// readable, the server watches it for the client going away); a body that
// does not is a *bodyTimeoutError.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	limit := s.cfg.MaxRequestBytes
	if r.ContentLength > limit {
		w.Header().Set("Connection", "close") // the rest of the body is not read
		return nil, &http.MaxBytesError{Limit: limit}
	}
	if d := s.cfg.bodyTimeout(); d > 0 {
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(d)) != nil { // a recorder cannot: no deadline
			return s.readBodyBytes(w, r, limit)
		}
		body, err := s.readBodyBytes(w, r, limit)
		if err != nil && isTimeout(err) {
			// The deadline stays: the server must not wait for the rest
			// when it closes the body.
			w.Header().Set("Connection", "close")
			return nil, &bodyTimeoutError{After: d}
		}
		_ = rc.SetReadDeadline(time.Time{})
		return body, err
	}
	return s.readBodyBytes(w, r, limit)
}

// abandonBody makes the server close the connection of a request answered
// without its body, at once: net/http reads up to 256 KiB of an unread body
// before it closes the connection, which a client sending a byte a second
// would make last for days. Call it after the answer is written.
func abandonBody(w http.ResponseWriter) {
	w.Header().Set("Connection", "close") // for an answer not written yet
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// bodyTimeoutError is a request body that did not arrive within
// Config.BodyTimeout: HTTP 408.
type bodyTimeoutError struct{ After time.Duration }

func (e *bodyTimeoutError) Error() string {
	return fmt.Sprintf("the request body did not arrive within %s (serve --body-timeout)", e.After)
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// readBodyBytes reads the body of readBody, at most limit bytes.
func (s *Server) readBodyBytes(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if r.ContentLength >= 0 {
		buf := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, fmt.Errorf("read %d-byte body: %w", r.ContentLength, err)
		}
		return buf, nil
	}
	var blocks [][]byte
	total := 0
	for {
		b := make([]byte, bodyBlock)
		n, err := io.ReadFull(body, b)
		if n > 0 {
			blocks = append(blocks, b[:n])
			total += n
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]byte, 0, total)
	for _, b := range blocks {
		out = append(out, b...)
	}
	return out, nil
}

// requireModel gives a request without a model Config.DefaultModel, or
// returns the answer HTTP 400 (OpenAI's missing-parameter error).
func (s *Server) requireModel(req *protocol.ResponsesRequest) *answerError {
	if req.Model != "" {
		return nil
	}
	if m := s.defaultModel(); m != "" {
		req.Model = m
		return nil
	}
	e := failure(http.StatusBadRequest, "invalid_request_error", "missing_required_parameter",
		`Missing required parameter: 'model' (the request names no model and harnessflow has no default model).`, outcomeBadRequest, nil)
	e.param = paramJSON("model")
	return e
}
