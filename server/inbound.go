package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/internal/inboundjson"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire"
	"github.com/harnessflow/harnessflow/wire/responses"
)

// The inbound wires other than the Responses API's (docs/inbound.md) are
// the registered codecs with an Inbound side (codec.Inbounds): a Messages
// or Chat Completions client's request is decoded into the neutral
// request and served by the same turn as a Responses request (routing,
// fallbacks, client keys, admission, bounds, metrics, logs); only the
// decoder, the writer of the answer and the shape of the error answers are
// the wire's.

// inbound is the client's wire of an exchange that is not the Responses
// API's, and what its decoder said of the request.
type inbound struct {
	codec        *codec.Codec // the client's wire
	body         []byte       // the client's body (a pass-through request goes upstream as it is)
	thinking     bool         // the client asked for reasoning (a routing condition, inbound_route.go)
	stream       bool
	includeUsage bool
}

// clientSink is the writer of the answer to the client that conclude and
// concludeClient drive: a *responses.Writer, or an *inboundSink.
type clientSink interface {
	Accept(protocol.ResponseEvent) error
	Events() int
	Ended() bool
	Terminal() string
	Err() error
	Fail(*protocol.StreamError) error
	Failure() *protocol.StreamError
	AppendResponse([]byte) []byte
}

// inboundSink writes the answer in the client's wire and keeps the
// Responses writer's account of it (its record: no output): how the stream
// ended, the text bound, what conclude reads.
type inboundSink struct {
	*responses.Writer // the record
	enc               codec.InboundWriter
	unary             bool
}

// Accept gives ev to the record, then to the client's writer.
func (k *inboundSink) Accept(ev protocol.ResponseEvent) error {
	if err := k.Writer.Accept(ev); err != nil {
		return err
	}
	return k.enc.Accept(ev)
}

// Fail ends both.
func (k *inboundSink) Fail(e *protocol.StreamError) error {
	_ = k.Writer.Fail(e) // the record writes nothing
	return k.enc.Fail(e)
}

// Events are the events the client got.
func (k *inboundSink) Events() int { return k.enc.Events() }

// Err is the client's write error.
func (k *inboundSink) Err() error { return k.enc.Err() }

// roundsInProxy reports whether the proxy serves x's follow-up rounds
// itself (proxyRounds, docs/architecture.md#follow-ups): with
// Config.Followups "proxy", and for a client of an inbound wire whose turn
// has a harness.post node, whatever the mode — a Messages or Chat
// Completions client has no way to record the follow-up user message and
// sample again, and would take the round's end for the end of the turn
// (docs/inbound.md#follow-ups). A turn without a post node never asks for
// a follow-up: it streams as it comes.
func (s *Server) roundsInProxy(x *exchange, ex *harness.Exchange) bool {
	if s.cfg.Followups == FollowupsProxy {
		return true
	}
	return x.in != nil && ex.Turn != nil && ex.Turn.Spec.Post != nil
}

// inboundShellHint follows the error of a harness that found no shell
// tool of the client's, for a Messages or Chat Completions client, with
// every name the bridge looks for: such a client's shell is not Codex's
// (docs/inbound.md#harness-routes).
func inboundShellHint(x *exchange, err error) string {
	if x.in == nil || !errors.Is(err, harness.ErrNoClientShell) {
		return ""
	}
	return " — harnessflow: the bridge takes a function named exec_command, or " + strings.Join(bridge.ShellNames(), ", ") +
		" with a command parameter, or any function with a string cmd, as the client's shell"
}

// routeInbound registers the routes of every inbound codec (each path
// also under /h/{harness}), and Messages' count_tokens.
func (s *Server) routeInbound(mux *http.ServeMux) {
	for _, c := range codec.Inbounds() {
		h := s.authenticate(s.handleInbound(c))
		if c.Inbound.Shape != nil {
			h = c.Inbound.Shape(h)
		}
		for _, p := range c.Inbound.Paths {
			mux.HandleFunc("POST "+p, h)
			mux.HandleFunc("POST /h/{harness}"+p, h)
		}
	}
	count := codec.MessagesErrors(s.authenticate(s.countTokens))
	for _, p := range []string{"/v1/messages/count_tokens", "/messages/count_tokens", "/h/{harness}/v1/messages/count_tokens", "/h/{harness}/messages/count_tokens"} {
		mux.HandleFunc("POST "+p, count)
	}
}

// handleInbound serves a request of an inbound wire as handleResponses
// serves a Responses request.
func (s *Server) handleInbound(c *codec.Codec) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		x := &exchange{start: time.Now(), harness: r.PathValue("harness"), in: &inbound{codec: c}}
		rw := &reasonWriter{ResponseWriter: w}
		defer s.logRequest(r, x)
		defer s.endStream(x)
		x.status, x.outcome = s.proxy(rw, r, x)
		x.reason = s.reasonFor(r, rw.reason)
	}
}

// decodeRequest decodes the client's body in its wire: a Responses
// request, or a Messages or Chat Completions request converted to one. A
// bad body is HTTP 400 with the JSON path as the error's param.
func (s *Server) decodeRequest(x *exchange, body []byte) (*protocol.ResponsesRequest, *answerError) {
	var (
		req  *protocol.ResponsesRequest
		err  error
		what = "invalid Responses request: "
	)
	if x != nil && x.in != nil {
		// The other wires' bodies are bounded before they are decoded too
		// (requestbounds.go): their messages and tools.
		if over := protocol.CheckArrays(body, protocol.ArrayBound{Key: "messages", Limit: s.cfg.maxInputItems()},
			protocol.ArrayBound{Key: "tools", Limit: maxTools}); over != nil {
			return nil, s.overBound(over)
		}
	}
	switch {
	case x == nil || x.in == nil:
		req, err = protocol.DecodeRequestWithin(body, s.cfg.requestLimits())
	default:
		in := x.in.codec.Inbound
		what = "invalid " + in.What + " request: "
		x.in.body = body
		var d codec.InboundRequest
		if d, err = in.Decode(body); err == nil {
			req, x.in.stream, x.in.thinking, x.in.includeUsage = d.Responses, d.Stream, d.Thinking, d.IncludeUsage
		}
	}
	if over, ok := errors.AsType[*protocol.ArrayLimitError](err); ok {
		return nil, s.overBound(over)
	}
	if err != nil {
		e := failure(http.StatusBadRequest, "invalid_request_error", "", what+err.Error(), outcomeBadRequest, err)
		if je, ok := errors.AsType[*inboundjson.Error](err); ok && je.Path != "" {
			e.param = paramJSON(je.Path)
		}
		return nil, e
	}
	return req, nil
}

// startInbound starts the answer of an inbound wire: the SSE headers now
// for a streaming client, and the sink writing the wire's events (or
// building its body).
func (s *Server) startInbound(w http.ResponseWriter, x *exchange, opts responses.Options) clientSink {
	k := &inboundSink{Writer: responses.NewWriter(nil, opts), unary: !x.in.stream}
	var out io.Writer // nil for a non-streaming client: the writer only builds the body
	var flush func() error
	if !k.unary {
		hdr := w.Header()
		hdr.Set("Content-Type", "text/event-stream")
		hdr.Set("Cache-Control", "no-cache")
		hdr.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		sendHeaders(w)
		out, flush = w, http.NewResponseController(w).Flush
	}
	k.enc = x.in.codec.Inbound.NewWriter(out, codec.WriterOptions{ResponseID: opts.ResponseID, Model: opts.Model, IncludeUsage: x.in.includeUsage, Flush: flush})
	return k
}

// concludeInbound ends an inbound wire's answer after conclude: a failure
// the record saw reaches the client's writer too; a non-streaming client
// gets the wire's body, or an error answer.
func (s *Server) concludeInbound(w http.ResponseWriter, x *exchange, k *inboundSink, status int, outcome string) (int, string) {
	if f := k.Writer.Failure(); f != nil && !k.enc.Ended() {
		_ = k.enc.Fail(f)
	}
	if !k.unary {
		return status, outcome
	}
	return s.answerUnary(w, x, k.Writer, outcome, k.enc.AppendBody) // unary.go
}

// countTokens answers POST /v1/messages/count_tokens with an estimate:
// the converted request's JSON bytes over four, said to be an estimate by
// the X-Harnessflow-Estimate header (no upstream counts with another
// model's tokenizer).
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	messages, _ := codec.Lookup(wire.Messages)
	x := &exchange{start: time.Now(), harness: r.PathValue("harness"), in: &inbound{codec: messages}}
	rw := &reasonWriter{ResponseWriter: w}
	defer s.logRequest(r, x)
	x.status, x.outcome = s.countTokensAnswer(rw, r, x)
	x.reason = s.reasonFor(r, rw.reason)
}

// estimateBytesPerToken is the count_tokens estimate's divisor.
const estimateBytesPerToken = 4

func (s *Server) countTokensAnswer(w http.ResponseWriter, r *http.Request, x *exchange) (int, string) {
	body, err := s.readBody(w, r)
	if err != nil {
		return s.answer(w, x, failure(http.StatusBadRequest, "invalid_request_error", "", "read request body: "+err.Error(), outcomeBadRequest, err))
	}
	req, e := s.decodeRequest(x, body)
	if e != nil {
		return s.answer(w, x, e)
	}
	neutral, err := json.Marshal(req)
	if err != nil {
		return s.answer(w, x, failure(http.StatusBadRequest, "invalid_request_error", "", "invalid Messages request: "+err.Error(), outcomeBadRequest, err))
	}
	n := (len(neutral) + estimateBytesPerToken - 1) / estimateBytesPerToken
	out := `{"input_tokens":` + strconv.Itoa(n) + "}\n"
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("X-Harnessflow-Estimate", "input_tokens is an estimate: the converted request's JSON bytes / "+strconv.Itoa(estimateBytesPerToken))
	hdr.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(out))
	return http.StatusOK, outcomeCompleted
}
