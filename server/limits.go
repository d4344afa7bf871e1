package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"

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
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	limit := s.cfg.MaxRequestBytes
	if r.ContentLength > limit {
		w.Header().Set("Connection", "close") // the rest of the body is not read
		return nil, &http.MaxBytesError{Limit: limit}
	}
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
