package harness

import (
	"bytes"
	"context"
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// Exchange is the transport-free side of one turn: the planned turn (or,
// for a tool run without a harness, the wire's protocol layer alone),
// whether the upstream answers with a stream, and the options its response
// graph is built with. serve (whose HTTP side sends the turn and answers
// the client), its follow-up rounds, translate, bench, graph and the
// harness test kit all open one with [Open] and build the response graph
// with [Exchange.Graph] (docs/architecture.md#one-turn).
type Exchange struct {
	// Turn is the planned (or only prepared) turn; nil when the exchange
	// is the wire's protocol layer alone.
	Turn *Turn
	// Wire is the upstream wire.
	Wire Wire
	// Unary says the upstream answers with one JSON body rather than a
	// stream. It is decided here only: Open sets it from the shaped body
	// (a chat body without "stream": true), Answered corrects it from the
	// answer's Content-Type, and a caller that knows better (translate
	// --unary) sets it.
	Unary bool
	// Options are the response graph's options; their Unary is replaced
	// by the field above.
	Options ResponseOptions

	streams bool // the shaped body has "stream": true
}

// Opening says which turn [Open] opens.
type Opening struct {
	// Harness is the harness name ("" for native).
	Harness string
	// Request is the client's request; nil for none: the turn is then
	// prepared for an empty request and not shaped (no tool kinds).
	Request *protocol.ResponsesRequest
	// Header is the client's headers (may be nil).
	Header http.Header
	// Fallback says what stands in for a turn that cannot be planned.
	Fallback Fallback
}

// Fallback is what [Open] does when the turn cannot be planned as asked.
type Fallback uint8

const (
	// FallbackNone returns the planning error.
	FallbackNone Fallback = iota
	// FallbackLayer reads the answer with the wire's protocol layer alone
	// when neither a harness nor a request is given (translate).
	FallbackLayer
	// FallbackNoRoute reads the answer with the wire's protocol layer
	// alone when no harness is given and the wire has no native route
	// (bench on the messages wire).
	FallbackNoRoute
	// FallbackPrepare, with no request, plans an empty streaming request
	// so that Unary is what the harness's bodies ask for, and prepares
	// the turn unshaped when the harness cannot shape it (graph).
	FallbackPrepare
)

// Open opens the exchange of one turn: Plan for a request, Prepare without
// one, or the stand-in o.Fallback names. Its error is the planning error
// as Plan or Prepare returned it.
func Open(ctx context.Context, cfg Config, o Opening) (*Exchange, error) {
	e := &Exchange{Wire: cfg.wire()}
	var err error
	switch {
	case o.Request != nil:
		if e.Turn, err = Plan(ctx, cfg, o.Harness, o.Request, o.Header); err != nil {
			return nil, err
		}
		e.shaped()
	case o.Fallback == FallbackLayer && o.Harness == "":
		e.Options.ToolFormat = cfg.ToolFormat
	case o.Fallback == FallbackPrepare:
		if e.Turn, err = Plan(ctx, cfg, o.Harness, &protocol.ResponsesRequest{Stream: true}, o.Header); err != nil {
			if e.Turn, err = Prepare(cfg, o.Harness, nil, o.Header); err != nil {
				return nil, err
			}
		}
		// An unshaped turn has no body: on chat it reads as one JSON
		// body, as graph has always drawn it.
		e.shaped()
	default:
		if e.Turn, err = Prepare(cfg, o.Harness, nil, o.Header); err != nil {
			var re *RouteError
			if o.Fallback != FallbackNoRoute || o.Harness != "" || !errors.As(err, &re) {
				return nil, err
			}
			e.Options.ToolFormat = cfg.ToolFormat
		}
	}
	return e, nil
}

// shaped reads the shaped body once: whether it asks for a stream, and so
// whether a chat answer is one JSON body.
func (e *Exchange) shaped() {
	e.streams = BodyStreams(e.Turn.Shaped.Body)
	c, _ := codec.Lookup(e.Wire)
	e.Unary = c.HasUnary() && !e.streams
}

// AsksStream reports whether the shaped request body has "stream": true
// (what the upstream is asked for; Unary is what it answers with).
func (e *Exchange) AsksStream() bool { return e.streams }

// LayerAlone reports whether the response graph is the wire's protocol
// layer alone: no turn, or a harness without a post node or bridge.
func (e *Exchange) LayerAlone() bool {
	return e.Turn == nil || (e.Turn.Spec.Post == nil && e.Turn.Spec.Bridge == nil)
}

// Answered settles Unary from the Content-Type of the upstream's answer:
// text/event-stream is a stream whatever was asked; application/json on
// the chat wire is one body (a server that ignored "stream"); anything
// else leaves what the request asked for.
func (e *Exchange) Answered(contentType string) {
	ct, _, _ := mime.ParseMediaType(contentType)
	switch strings.ToLower(ct) {
	case "text/event-stream":
		e.Unary = false
	case "application/json":
		c, _ := codec.Lookup(e.Wire)
		e.Unary = c.HasUnary()
	}
}

// Graph builds the exchange's response graph — the turn's (protocol layer,
// harness.post, harness.bridge) or the protocol layer alone — with
// Options, Unary and then edits applied in order (pipeline.Apply). A stage
// an edit adds that needs a lifetime per run implements pipeline.Resource.
func (e *Exchange) Graph(edits ...pipeline.Edit) (*pipeline.Graph, error) {
	opts := e.Options
	opts.Unary = e.Unary
	var g *pipeline.Graph
	var err error
	if e.Turn == nil {
		g, err = ProtocolGraph(e.Wire, opts)
	} else {
		g, err = e.Turn.ResponseGraph(opts)
	}
	if err != nil {
		return nil, err
	}
	return pipeline.Apply(g, edits...)
}

// BodyStreams reports whether a JSON request body has "stream": true (as
// encoding/json would read it into a *bool field: the key matched without
// regard to case, the last one wins, a document that is not valid JSON or
// a value that is not a boolean is false). It reads the top level only,
// skipping the other values without decoding them: a long conversation's
// body is scanned once, not decoded.
func BodyStreams(body []byte) bool {
	var sc jsonx.Scanner
	stream, typeErr := false, false
	ok := sc.ParseObject(body, func(key []byte) bool {
		if bytes.EqualFold(key, []byte("stream")) {
			switch sc.Kind() {
			case jsonx.KindTrue:
				stream = true
			case jsonx.KindFalse, jsonx.KindNull:
				stream = false
			default:
				typeErr = true
			}
		}
		return sc.Skip()
	})
	return ok && !typeErr && stream
}
