package logmw_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/logmw"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"

// chatBody is a chat stream whose text holds a secret split over two deltas.
func chatBody() string {
	var b strings.Builder
	for _, d := range []string{"key: ", secret[:14], secret[14:] + " done"} {
		fmt.Fprintf(&b, "data: {\"id\":\"r1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", d)
	}
	b.WriteString("data: {\"id\":\"r1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	return b.String()
}

// recorder is a slog.Handler keeping every record as text.
type recorder struct {
	mu    sync.Mutex
	level slog.Level
	lines []string
}

func (r *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= r.level }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Level.String() + " " + rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key != "elapsed" {
			b.WriteString(" " + a.String())
		}
		return true
	})
	r.mu.Lock()
	r.lines = append(r.lines, b.String())
	r.mu.Unlock()
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

func chatGraph(t *testing.T) *pipeline.Graph {
	t.Helper()
	g, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func run(t *testing.T, g *pipeline.Graph, mode pipeline.Mode) []protocol.ResponseEvent {
	t.Helper()
	sink := sinks.Collect[protocol.ResponseEvent]()
	if err := pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(chatBody()), sources.WithReadSize(64)), sink, pipeline.WithMode(mode)); err != nil {
		t.Fatal(err)
	}
	return sink.Items()
}

func TestEventsNeverLogSecrets(t *testing.T) {
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		for _, content := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/content=%v", mode, content), func(t *testing.T) {
				rec := &recorder{level: slog.LevelDebug}
				var opts []logmw.Option
				if content {
					opts = append(opts, logmw.WithContent(nil))
				}
				g, err := logmw.Wrap(chatGraph(t), slog.New(rec), logmw.Events, opts...)
				if err != nil {
					t.Fatal(err)
				}
				got := run(t, g, mode)
				if diff := cmp.Diff(run(t, chatGraph(t), mode), got); diff != "" {
					t.Errorf("logging changed the events (-want +got):\n%s", diff)
				}
				all := strings.Join(rec.lines, "\n")
				if strings.Contains(all, secret[:12]) || strings.Contains(all, secret[8:14]) || strings.Contains(all, secret[14:]) {
					t.Errorf("secret logged:\n%s", all)
				}
				if content != strings.Contains(all, `content={"type":"output_text.delta","delta":"[REDACTED:api_key] done"}`) {
					t.Errorf("content=%v but redacted content logged=%v:\n%s", content, !content, all)
				}
				for _, want := range []string{
					"DEBUG stage in node=sse.decode seq=1 bytes=64",
					"DEBUG stage out node=chat.finalize seq=",
					"type=output_text.delta bytes=",
					"INFO stage done node=chat.finalize in=",
					"INFO stage done node=sse.decode in=",
				} {
					if !strings.Contains(all, want) {
						t.Errorf("no %q in\n%s", want, all)
					}
				}
			})
		}
	}
}

func TestSummaryOnly(t *testing.T) {
	rec := &recorder{level: slog.LevelInfo}
	g, err := logmw.Wrap(chatGraph(t), slog.New(rec), logmw.Events) // Debug disabled: summary only
	if err != nil {
		t.Fatal(err)
	}
	run(t, g, pipeline.Fused)
	want := []string{
		"INFO stage done node=sse.decode in=%d in_bytes=%d out=5 out_bytes=",
		"INFO stage done node=chat.decode in=5",
		"INFO stage done node=chat.accumulate",
		"INFO stage done node=chat.finalize",
	}
	if len(rec.lines) != len(want) {
		t.Fatalf("records:\n%s", strings.Join(rec.lines, "\n"))
	}
	body := chatBody()
	want[0] = fmt.Sprintf(want[0], (len(body)+63)/64, len(body))
	for i, w := range want {
		if !strings.HasPrefix(rec.lines[i], w) {
			t.Errorf("record %d = %q, want prefix %q", i, rec.lines[i], w)
		}
	}
}

func TestDisabledIsFree(t *testing.T) {
	g := chatGraph(t)
	quiet := slog.New(&recorder{level: slog.LevelError + 1})
	for _, tc := range []struct {
		lg    *slog.Logger
		level logmw.Level
	}{{quiet, logmw.Events}, {nil, logmw.Events}, {slog.New(&recorder{}), logmw.Off}} {
		g2, err := logmw.Wrap(g, tc.lg, tc.level)
		if err != nil || g2 != g {
			t.Errorf("Wrap(%v) = %p, %v; want the graph itself", tc.level, g2, err)
		}
		if logmw.Enabled(tc.lg, tc.level) {
			t.Errorf("Enabled(%v) = true", tc.level)
		}
	}
	// The middleware hands back the stage itself when nothing is enabled.
	var inner pipeline.AnyStage = nopStage{}
	if got := logmw.Middleware(quiet, logmw.Events)(pipeline.NodeInfo{Name: "x"}, inner); got != inner {
		t.Errorf("disabled middleware decorated the stage")
	}
}

type nopStage struct{}

func (nopStage) Push(context.Context, any, func(any)) error { return nil }
func (nopStage) Finish(context.Context, func(any)) error    { return nil }

func TestFailureLogged(t *testing.T) {
	rec := &recorder{level: slog.LevelInfo}
	boom := pipeline.NewNode("boom", func() pipeline.Stage[string, string] {
		return pipeline.Func[string, string](func(_ context.Context, s string, emit func(string)) error {
			if strings.HasPrefix(s, "bad") {
				return errors.New("cannot take " + s)
			}
			emit(s)
			return nil
		})
	})
	g, err := pipeline.Must(pipeline.New("t", boom)).WrapAll(logmw.Middleware(slog.New(rec), logmw.Summary))
	if err != nil {
		t.Fatal(err)
	}
	err = pipeline.Run(context.Background(), g, sources.Slice([]string{"ok", "bad " + secret}), sinks.Discard[string]())
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{`WARN stage failed node=boom seq=2 finish=false in=2 out=1 error=cannot take bad [REDACTED:api_key]`}
	if diff := cmp.Diff(want, rec.lines); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestHeaders(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+secret)
	h.Set("X-Api-Key", secret)
	h.Set("Cookie", "session=abc")
	h.Set("Content-Type", "application/json")
	h.Set("X-Note", "key "+secret)
	var buf bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == "elapsed" {
			return slog.Attr{}
		}
		return a
	}}))
	g := pipeline.Must(pipeline.New("h", pipeline.StageNode("pass", pipeline.Map(func(h http.Header) http.Header { return h }))))
	g, err := logmw.Wrap(g, lg, logmw.Events, logmw.WithContent(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Run(context.Background(), g, sources.Slice([]http.Header{h}), sinks.Discard[http.Header]()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, secret[:12]) || strings.Contains(out, "session=abc") {
		t.Errorf("secret logged:\n%s", out)
	}
	for _, want := range []string{"headers.Authorization=[REDACTED]", "headers.X-Api-Key=[REDACTED]", "headers.Cookie=[REDACTED]",
		"headers.Content-Type=application/json", `headers.X-Note="key [REDACTED:api_key]"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if !logmw.IsSensitiveHeader("authorization") || logmw.IsSensitiveHeader("content-type") {
		t.Errorf("IsSensitiveHeader")
	}
}

func TestLevelString(t *testing.T) {
	if got := fmt.Sprint(logmw.Off, logmw.Summary, logmw.Events, logmw.Level(9)); got != "off summary events Level(9)" {
		t.Errorf("got %q", got)
	}
}

func TestContentFlush(t *testing.T) {
	rec := &recorder{level: slog.LevelDebug}
	g := pipeline.Must(pipeline.New("s", pipeline.StageNode("id", pipeline.Map(func(s string) string { return s }))))
	g, err := logmw.Wrap(g, slog.New(rec), logmw.Events, logmw.WithContent(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Run(context.Background(), g, sources.Slice([]string{"see sk-", "abc"}), sinks.Discard[string]()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"DEBUG stage in node=id seq=1 bytes=7 content=see ",
		"DEBUG stage out node=id seq=1 bytes=7 content=see ",
		"DEBUG stage in node=id seq=2 bytes=3",
		"DEBUG stage out node=id seq=2 bytes=3",
		"DEBUG stage in node=id flush=true content=sk-abc",
		"DEBUG stage out node=id flush=true content=sk-abc",
		"INFO stage done node=id in=2 in_bytes=10 out=2 out_bytes=10",
	}
	if diff := cmp.Diff(want, rec.lines); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
