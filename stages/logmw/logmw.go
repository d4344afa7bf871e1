// Package logmw is a logging middleware for pipeline graphs, built on
// log/slog. It wraps one node (Graph.Wrap) or every node (Graph.WrapAll, or
// Wrap here) and logs what passes through, never what it says unless asked:
//
//   - at Summary level, one record per node when its input ends (slog Info:
//     elements and bytes in and out, wall time since its first input), and
//     one record when the node fails (slog Warn);
//   - at Events level, also one record per element in and out (slog Debug):
//     the node, the input's sequence number, the element's type and size.
//
// Element content is logged only with WithContent, only for elements whose
// text can be redacted reliably, and then through a redact.Redactor:
// ResponseEvents (as event JSON) and strings. The redaction is streaming,
// per node and direction, exactly as the redact.response stage does it, so
// a secret split across two deltas is not logged in two halves; content
// held back is logged with the record that releases it (or with the
// summary). Raw wire bytes ([]byte chunks, SSE events) are never logged:
// a secret split across two SSE events cannot be recognised in them. Values
// of the Authorization, Proxy-Authorization, X-Api-Key, Api-Key, Cookie and
// Set-Cookie headers are never logged, content or not.
//
// # Cost when disabled
//
// The middleware asks the logger once per run and node whether the levels it
// needs are enabled; if none is, it returns the node's stage undecorated.
// The engine still routes a wrapped node through its untyped middleware
// adapter, so Wrap (which leaves the graph untouched when the logger is
// disabled at build time) is the zero-cost way to add logging.
package logmw

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/redact"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// Level selects how much is logged.
type Level int

const (
	// Off logs nothing: Middleware returns stages undecorated.
	Off Level = iota
	// Summary logs one record per node at the end of its input (slog
	// Info) and one per failure (slog Warn).
	Summary
	// Events logs Summary plus one record per element in and out (slog Debug).
	Events
)

// String returns "off", "summary" or "events".
func (l Level) String() string {
	switch l {
	case Off:
		return "off"
	case Summary:
		return "summary"
	case Events:
		return "events"
	}
	return "Level(" + strconv.Itoa(int(l)) + ")"
}

// The slog levels of the records.
const (
	EventLevel   = slog.LevelDebug
	SummaryLevel = slog.LevelInfo
	FailureLevel = slog.LevelWarn
)

// Option configures the middleware.
type Option func(*config)

type config struct {
	content  bool
	redactor *redact.Redactor
}

// WithContent adds the content of ResponseEvents and strings to their Events
// records, redacted by r (redact.Default() when r is nil); see the package
// documentation.
func WithContent(r *redact.Redactor) Option {
	return func(c *config) {
		c.content = true
		c.redactor = r
	}
}

// Middleware returns a pipeline.Middleware that logs each node it wraps to
// logger at the given level.
//
//	g, err = g.WrapAll(logmw.Middleware(logger, logmw.Events))
func Middleware(logger *slog.Logger, level Level, opts ...Option) pipeline.Middleware {
	cfg := &config{}
	for _, o := range opts {
		o(cfg)
	}
	if cfg.content && cfg.redactor == nil {
		cfg.redactor = redact.Default()
	}
	return func(node pipeline.NodeInfo, next pipeline.AnyStage) pipeline.AnyStage {
		if logger == nil || level <= Off {
			return next
		}
		ctx := context.Background()
		events := level >= Events && logger.Enabled(ctx, EventLevel)
		summary := logger.Enabled(ctx, SummaryLevel)
		failures := logger.Enabled(ctx, FailureLevel)
		if !events && !summary && !failures {
			return next
		}
		l := &logged{next: next, node: node.Name, lg: logger, cfg: cfg, events: events, summary: summary, failures: failures}
		l.emitFn = l.emitOut
		if events && cfg.content {
			l.cin, l.cout = &contentLog{r: cfg.redactor}, &contentLog{r: cfg.redactor}
		}
		return l
	}
}

// Wrap returns g with every node logged (see Middleware), or g itself when
// level is Off or logger has none of the needed levels enabled: disabled
// logging then costs nothing at all.
func Wrap(g *pipeline.Graph, logger *slog.Logger, level Level, opts ...Option) (*pipeline.Graph, error) {
	if !Enabled(logger, level) {
		return g, nil
	}
	return g.WrapAll(Middleware(logger, level, opts...))
}

// Enabled reports whether logging at level to logger would write anything.
func Enabled(logger *slog.Logger, level Level) bool {
	if logger == nil || level <= Off {
		return false
	}
	ctx := context.Background()
	return (level >= Events && logger.Enabled(ctx, EventLevel)) ||
		logger.Enabled(ctx, SummaryLevel) || logger.Enabled(ctx, FailureLevel)
}

// logged is one run's logging decorator of one node.
type logged struct {
	next                      pipeline.AnyStage
	node                      string
	lg                        *slog.Logger
	cfg                       *config
	events, summary, failures bool
	cin, cout                 *contentLog // WithContent: per direction

	ctx               context.Context
	down              func(any)
	emitFn            func(any)
	seq               uint64
	in, out           uint64
	inBytes, outBytes int64
	start             time.Time
}

func (l *logged) Push(ctx context.Context, in any, emit func(any)) error {
	l.seq++
	l.in++
	if l.seq == 1 {
		l.start = time.Now()
	}
	n := size(in)
	l.inBytes += int64(n)
	if l.events {
		l.record(ctx, "stage in", in, n, l.cin)
	}
	l.ctx, l.down = ctx, emit
	err := l.next.Push(ctx, in, l.emitFn)
	if err != nil {
		l.fail(ctx, err, false)
	}
	return err
}

func (l *logged) Finish(ctx context.Context, emit func(any)) error {
	l.ctx, l.down = ctx, emit
	err := l.next.Finish(ctx, l.emitFn)
	if err != nil {
		l.fail(ctx, err, true)
		return err
	}
	if l.cin != nil {
		for _, c := range []struct {
			msg string
			log *contentLog
		}{{"stage in", l.cin}, {"stage out", l.cout}} {
			if text := c.log.flush(ctx); text != "" {
				l.lg.LogAttrs(ctx, EventLevel, c.msg, slog.String("node", l.node), slog.Bool("flush", true), slog.String("content", text))
			}
		}
	}
	if l.summary {
		var elapsed time.Duration
		if !l.start.IsZero() {
			elapsed = time.Since(l.start)
		}
		l.lg.LogAttrs(ctx, SummaryLevel, "stage done",
			slog.String("node", l.node),
			slog.Uint64("in", l.in), slog.Int64("in_bytes", l.inBytes),
			slog.Uint64("out", l.out), slog.Int64("out_bytes", l.outBytes),
			slog.Duration("elapsed", elapsed))
	}
	return nil
}

func (l *logged) emitOut(v any) {
	l.out++
	n := size(v)
	l.outBytes += int64(n)
	if l.events {
		l.record(l.ctx, "stage out", v, n, l.cout)
	}
	l.down(v)
}

func (l *logged) fail(ctx context.Context, err error, finish bool) {
	if !l.failures {
		return
	}
	r := l.cfg.redactor
	if r == nil {
		r = redact.Default()
	}
	msg := r.String(err.Error())
	l.lg.LogAttrs(ctx, FailureLevel, "stage failed",
		slog.String("node", l.node), slog.Uint64("seq", l.seq), slog.Bool("finish", finish),
		slog.Uint64("in", l.in), slog.Uint64("out", l.out), slog.String("error", msg))
}

func (l *logged) record(ctx context.Context, msg string, v any, n int, cl *contentLog) {
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs, slog.String("node", l.node), slog.Uint64("seq", l.seq))
	attrs = append(attrs, describe(v, n)...)
	if cl != nil {
		if c := cl.text(ctx, v); c != "" {
			attrs = append(attrs, slog.String("content", c))
		}
	}
	l.lg.LogAttrs(ctx, EventLevel, msg, attrs...)
}

// size is the payload size of an element in bytes, as far as it is known.
func size(v any) int {
	switch x := v.(type) {
	case []byte:
		return len(x)
	case string:
		return len(x)
	case sse.Event:
		return len(x.Data)
	case protocol.ResponseEvent:
		return len(x.Delta)
	}
	return 0
}

// describe returns the type and size of an element; never its content.
func describe(v any, n int) []slog.Attr {
	switch x := v.(type) {
	case []byte, string:
		return []slog.Attr{slog.Int("bytes", n)}
	case sse.Event:
		if x.Truncated {
			return []slog.Attr{slog.Bool("truncated", true), slog.Int64("offset", x.Offset)}
		}
		return []slog.Attr{slog.String("type", x.Type), slog.Int("bytes", n)}
	case protocol.ResponseEvent:
		attrs := []slog.Attr{slog.String("type", string(x.Type))}
		if x.Delta != "" {
			attrs = append(attrs, slog.Int("bytes", n))
		}
		if x.Item != nil {
			attrs = append(attrs, slog.String("item", x.Item.ItemType()))
		}
		if x.Error != nil {
			attrs = append(attrs, slog.String("error_kind", x.Error.Kind))
		}
		return attrs
	case *protocol.ResponsesRequest:
		if x == nil {
			return []slog.Attr{slog.String("type", "request"), slog.Bool("nil", true)}
		}
		return []slog.Attr{slog.String("type", "request"), slog.String("model", x.Model),
			slog.Int("items", len(x.Input)), slog.Int("tools", len(x.Tools))}
	case http.Header:
		return []slog.Attr{HeaderAttr("headers", x)}
	case *http.Request:
		if x == nil {
			return []slog.Attr{slog.String("type", "http.request"), slog.Bool("nil", true)}
		}
		return []slog.Attr{slog.String("method", x.Method), slog.String("path", x.URL.Path), HeaderAttr("headers", x.Header)}
	}
	return []slog.Attr{slog.String("type", typeName(v))}
}

// contentLog redacts the content of one direction of one node, streaming.
type contentLog struct {
	r      *redact.Redactor
	events *redact.ResponseStage
	str    *redact.Stream
	buf    []byte
}

// text returns the redacted content that v releases ("" when held back or
// when v's type is not logged).
func (c *contentLog) text(ctx context.Context, v any) string {
	switch x := v.(type) {
	case protocol.ResponseEvent:
		if c.events == nil {
			c.events = redact.NewResponseStage(c.r)
		}
		c.buf = c.buf[:0]
		_ = c.events.Push(ctx, x, c.appendEvent) // never fails
		return string(c.buf)
	case string:
		if c.str == nil {
			c.str = c.r.Stream()
		}
		return c.str.Push(x)
	}
	return ""
}

// flush returns what is still held back.
func (c *contentLog) flush(ctx context.Context) string {
	c.buf = c.buf[:0]
	if c.events != nil {
		_ = c.events.Finish(ctx, c.appendEvent)
	}
	if c.str != nil {
		if len(c.buf) > 0 {
			c.buf = append(c.buf, '\n')
		}
		c.buf = append(c.buf, c.str.Flush()...)
	}
	return string(c.buf)
}

func (c *contentLog) appendEvent(ev protocol.ResponseEvent) {
	if len(c.buf) > 0 {
		c.buf = append(c.buf, '\n')
	}
	if b, err := ev.AppendJSON(c.buf); err == nil {
		c.buf = b
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// sensitive lists headers whose values are never logged.
var sensitive = map[string]bool{
	"Authorization":       true,
	"Proxy-Authorization": true,
	"X-Api-Key":           true,
	"Api-Key":             true,
	"Cookie":              true,
	"Set-Cookie":          true,
}

// IsSensitiveHeader reports whether the values of header name are never logged.
func IsSensitiveHeader(name string) bool { return sensitive[http.CanonicalHeaderKey(name)] }

// HeaderAttr returns a log attribute for HTTP headers: every header name,
// with the values of sensitive headers (IsSensitiveHeader) replaced by
// "[REDACTED]" and the others passed through redact.Default().
func HeaderAttr(key string, h http.Header) slog.Attr {
	attrs := make([]slog.Attr, 0, len(h))
	for _, name := range slices.Sorted(maps.Keys(h)) {
		vals := h[name]
		if IsSensitiveHeader(name) {
			attrs = append(attrs, slog.String(name, "[REDACTED]"))
			continue
		}
		attrs = append(attrs, slog.String(name, redact.Default().String(strings.Join(vals, ", "))))
	}
	return slog.Attr{Key: key, Value: slog.GroupValue(attrs...)}
}
