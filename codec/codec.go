// Package codec registers each wire harnessflow speaks as one value: its
// name, the path and credentials of its upstream requests, the response
// graphs that decode its answers (streaming, and unary when the wire has
// one), the request graph of its native route, how its model list and its
// streams are recognised, and its client side ([Inbound]: the proxy's
// routes for clients that speak the wire) (docs/architecture.md#wire-codecs). Responses,
// Chat Completions and Anthropic Messages are three registrations of this
// package; a program adds a wire with [Register], and every layer that
// chose by a wire's name — the harness layer's routing and response graph,
// the proxy's upstream request and model listing, translate's sniffing —
// reads the registered value instead.
package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/textcall"
	"github.com/harnessflow/harnessflow/wire"
)

// Codec is one wire: everything harnessflow needs to send a request on it
// and read the answer. Only Wire and Response are required.
type Codec struct {
	// Wire is the wire's name ("chat", "messages", "responses", …).
	Wire wire.Wire
	// Doc is one line for listings.
	Doc string
	// Path is the request path on an upstream's base URL when the shaped
	// request names none.
	Path string
	// ModelsPath is the path of the upstream's model list ("" for none).
	ModelsPath string
	// KeyHeader is the header the upstream reads its key from:
	// "Authorization" (sent as "Bearer KEY", or the client's Authorization
	// as it came) when empty, else the header that takes the bare key
	// ("x-api-key").
	KeyHeader string
	// Headers are set on every upstream request of the wire (before the
	// harness's own), e.g. a protocol version.
	Headers map[string]string
	// Response builds the graph that decodes a streamed answer into engine
	// events.
	Response func(Options) (*pipeline.Graph, error)
	// Unary builds the graph that decodes one non-streaming JSON answer;
	// nil when the wire's answers are always streamed.
	Unary func(Options) (*pipeline.Graph, error)
	// NativeRequest builds the request graph of the wire's native route
	// (no harness); nil when the wire has none.
	NativeRequest func(request.Options) (*pipeline.Graph, error)
	// NativeRoute names the native route in the routing matrix
	// (docs/routing.md#routing-matrix), e.g. "ChatCompletionsCompat".
	NativeRoute string
	// ModelEntry turns one entry of the upstream's model list ("data"
	// array) into an OpenAI-style entry ({"id":…,"object":"model",…}); nil
	// passes the entries as they are.
	ModelEntry func(raw json.RawMessage) (json.RawMessage, error)
	// SniffEvent names what an SSE event name shows of this wire ("" when
	// it is not one of the wire's); nil recognises none.
	SniffEvent func(name string) string
	// SniffData names what one streamed data object shows of this wire
	// ("" when nothing marks it as the wire's); nil recognises none.
	SniffData func(data []byte) string
	// SniffBody names what one non-streaming JSON answer shows of this
	// wire ("" when nothing marks it as the wire's); nil recognises none.
	SniffBody func(body []byte) string
	// Inbound, when set, serves clients that speak the wire.
	Inbound *Inbound
}

// Options configure the decoding of one upstream answer.
type Options struct {
	// ToolKinds maps tool names back to engine tool kinds (from the request
	// the answer is for).
	ToolKinds protocol.ToolKinds
	// Unary says the answer is one non-streaming JSON body; only wires with
	// a Unary graph accept it.
	Unary bool
	// MaxEventBytes caps one SSE line or event (0: the decoder's default).
	MaxEventBytes int
	// ToolFormat recovers tool calls and reasoning written in the text of
	// an answer (docs/text-tool-calls.md): "auto", a format's name, or "" /
	// "off" for nothing. Wires without text recovery ignore it.
	ToolFormat string
	// Model is the model name the answer is for (auto prefers its family's
	// format).
	Model string
	// ToolSchemas gives the tool schemas that type recovered arguments; it
	// is called at most once, and only when markup shows up.
	ToolSchemas func() textcall.Schemas
	// ThinkingOpen says the prompt opened a reasoning block, so the reply
	// starts inside it.
	ThinkingOpen bool
	// TextCalls, when set, is told of every text tool-call outcome.
	TextCalls func(format, outcome string)
	// Logger receives the debug records of markup given back as text; nil
	// logs nothing.
	Logger *slog.Logger
}

var (
	mu     sync.RWMutex
	codecs []*Codec // in registration order: the routing matrix's
)

// Register adds c to the registry. A codec without a name or a response
// graph, a name registered twice, or a name that is not a lowercase word
// is an error.
func Register(c Codec) error {
	if c.Wire == "" || strings.Trim(string(c.Wire), "abcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
		return fmt.Errorf("codec: register %q: a wire's name is a lowercase word", c.Wire)
	}
	if c.Response == nil {
		return fmt.Errorf("codec: register %q: no response graph", c.Wire)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, o := range codecs {
		if o.Wire == c.Wire {
			return fmt.Errorf("codec: register %q: registered twice", c.Wire)
		}
	}
	codecs = append(codecs, &c)
	return nil
}

// MustRegister is [Register] for package initialisation: it panics on an
// error, which is a programming mistake.
func MustRegister(c Codec) {
	if err := Register(c); err != nil {
		panic(err)
	}
}

// Lookup returns the codec of a wire.
func Lookup(w wire.Wire) (*Codec, bool) {
	mu.RLock()
	defer mu.RUnlock()
	for _, c := range codecs {
		if c.Wire == w {
			return c, true
		}
	}
	return nil, false
}

// All returns the registered wires in registration order (the built-in
// ones first: responses, chat, messages).
func All() []wire.Wire {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]wire.Wire, len(codecs))
	for i, c := range codecs {
		out[i] = c.Wire
	}
	return out
}

// Parse returns the registered wire named s; anything else is an error
// naming the choices.
func Parse(s string) (wire.Wire, error) {
	if _, ok := Lookup(wire.Wire(s)); ok {
		return wire.Wire(s), nil
	}
	return "", fmt.Errorf("unknown wire %q: want %s", s, Choices())
}

// Choices names the registered wires for a message or a flag's help, in
// registration order: "responses, chat or messages".
func Choices() string {
	names := make([]string, 0, 4)
	for _, w := range All() {
		names = append(names, string(w))
	}
	choices := strings.Join(names, ", ")
	if i := strings.LastIndex(choices, ", "); i >= 0 && len(names) > 1 {
		choices = choices[:i] + " or " + choices[i+2:]
	}
	return choices
}

// Graph builds the response graph of wire w: upstream bytes → engine events.
// Unary on a wire without a unary graph and an unknown wire are errors.
func Graph(w wire.Wire, opts Options) (*pipeline.Graph, error) {
	c, ok := Lookup(w)
	if !ok {
		return nil, fmt.Errorf("codec: response graph: unknown wire %q", w)
	}
	if opts.Unary {
		if c.Unary == nil {
			return nil, fmt.Errorf("codec: --unary is supported on the %s wire only, not %q", unaryWires(), w)
		}
		return c.Unary(opts)
	}
	return c.Response(opts)
}

// unaryWires names the wires with a unary answer ("chat").
func unaryWires() string {
	mu.RLock()
	defer mu.RUnlock()
	var names []string
	for _, c := range codecs {
		if c.Unary != nil {
			names = append(names, string(c.Wire))
		}
	}
	return strings.Join(names, ", ")
}

// HasUnary reports whether the wire's answers may be one JSON body.
func (c *Codec) HasUnary() bool { return c != nil && c.Unary != nil }

// SetKey sets an upstream request's credentials on h: auth is the
// Authorization value to send ("Bearer KEY", or a client's as it came, ""
// for none) and clientKey a client's own key header, used when the wire
// reads a bare key and auth carries none.
func (c *Codec) SetKey(h http.Header, auth, clientKey string) {
	if c.KeyHeader == "" || strings.EqualFold(c.KeyHeader, "Authorization") {
		if auth != "" {
			h.Set("Authorization", auth)
		}
		return
	}
	if key, ok := strings.CutPrefix(auth, "Bearer "); ok {
		h.Set(c.KeyHeader, key)
	} else if clientKey != "" {
		h.Set(c.KeyHeader, clientKey)
	}
}

// SetHeaders sets the wire's own headers on h.
func (c *Codec) SetHeaders(h http.Header) {
	for k, v := range c.Headers {
		h.Set(k, v)
	}
}

// Models reads an upstream's model list (a JSON object with a "data"
// array) into OpenAI-style entries.
func (c *Codec) Models(data []byte) ([]json.RawMessage, error) {
	var body struct {
		Data *[]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(data, &body); err != nil || body.Data == nil {
		return nil, errors.New(`not a JSON object with a "data" array`)
	}
	if c.ModelEntry == nil {
		return *body.Data, nil
	}
	out := make([]json.RawMessage, 0, len(*body.Data))
	for i, raw := range *body.Data {
		e, err := c.ModelEntry(raw)
		if err != nil {
			return nil, fmt.Errorf("data[%s]: %w", strconv.Itoa(i), err)
		}
		out = append(out, e)
	}
	return out, nil
}

// Sniff names the wire a recorded stream's SSE event name or data object
// shows, and what showed it; "" when none says.
func Sniff(event string, data []byte) (wire.Wire, string) {
	mu.RLock()
	defer mu.RUnlock()
	for _, c := range codecs {
		if event != "" && c.SniffEvent != nil {
			if what := c.SniffEvent(event); what != "" {
				return c.Wire, what
			}
		}
		if data != nil && c.SniffData != nil {
			if what := c.SniffData(data); what != "" {
				return c.Wire, what
			}
		}
	}
	return "", ""
}

// SniffBody names the wire a non-streaming JSON answer shows, and what
// showed it; "" when none says.
func SniffBody(body []byte) (wire.Wire, string) {
	mu.RLock()
	defer mu.RUnlock()
	for _, c := range codecs {
		if c.SniffBody != nil {
			if what := c.SniffBody(body); what != "" {
				return c.Wire, what
			}
		}
	}
	return "", ""
}

// Inbound is the client side of a wire: what the proxy needs to serve a
// client that speaks it (docs/inbound.md). Its request is decoded into
// the engine's and served by the same turn as a Responses request; only
// the decoder, the writer of the answer and the shape of the error
// answers are the wire's.
type Inbound struct {
	// Paths are the request paths the wire is served on
	// ("/v1/chat/completions", "/chat/completions"); the proxy serves each
	// under /h/{harness} too.
	Paths []string
	// What names the wire's requests in error messages ("Chat
	// Completions").
	What string
	// Decode reads a client's request body. A bad body's error may be an
	// *inboundjson.Error naming the JSON path.
	Decode func(body []byte) (InboundRequest, error)
	// NewWriter returns the writer of the answer: the wire's stream to out,
	// or with a nil out only the non-streaming body.
	NewWriter func(out io.Writer, o WriterOptions) InboundWriter
	// Shape wraps the wire's handlers: the credentials its clients send
	// their own way, error answers in the wire's shape; nil leaves both.
	Shape func(http.HandlerFunc) http.HandlerFunc
	// PassThrough sends a client's request upstream as it came when the
	// upstream speaks the same wire and no harness is named.
	PassThrough bool
}

// InboundRequest is a decoded client request of an inbound wire.
type InboundRequest struct {
	// Responses is the engine request.
	Responses *protocol.ResponsesRequest
	// Stream is the client's "stream".
	Stream bool
	// Thinking says the client asked for reasoning (a routing condition).
	Thinking bool
	// IncludeUsage says a streaming client asked for the usage (chat's
	// stream_options.include_usage).
	IncludeUsage bool
}

// WriterOptions configure the writer of one answer.
type WriterOptions struct {
	// ResponseID is the turn's response id ("resp_…"); the wire's own id
	// is derived from it.
	ResponseID string
	// Model is the model the client asked for.
	Model string
	// IncludeUsage is InboundRequest.IncludeUsage.
	IncludeUsage bool
	// Flush, when set, is called after every event written.
	Flush func() error
}

// InboundWriter writes engine events as one answer of an inbound wire.
type InboundWriter interface {
	// Accept writes one event.
	Accept(protocol.ResponseEvent) error
	// Fail ends a stream whose run failed.
	Fail(*protocol.StreamError) error
	// Ended reports whether the answer has ended.
	Ended() bool
	// Err is the first write error.
	Err() error
	// Events counts the events written.
	Events() int
	// AppendBody appends the non-streaming answer's body.
	AppendBody([]byte) []byte
}

// Inbounds returns the registered codecs with an inbound side, in
// registration order.
func Inbounds() []*Codec {
	mu.RLock()
	defer mu.RUnlock()
	var out []*Codec
	for _, c := range codecs {
		if c.Inbound != nil {
			out = append(out, c)
		}
	}
	return out
}

// TrimResponseID returns a response id without its "resp_" prefix.
func TrimResponseID(id string) string {
	if len(id) > 5 && id[:5] == "resp_" {
		return id[5:]
	}
	return id
}
