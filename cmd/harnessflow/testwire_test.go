package main

// A wire of the test's own, registered from this file alone: "lines". Its
// clients post {"model","prompt","stream"} to /v1/lines and read one line
// per event ("text: …", then "end: REASON"); its upstreams take the chat
// body at /lines/generate with the key in X-Lines-Key and answer in SSE
// events "say" (data: a piece of text) and "end". The serve command serves
// it both ways, by flags and by a --config file, with nothing outside this
// file edited (docs/architecture.md#wire-codecs).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/sse"
	"github.com/harnessflow/harnessflow/wire"
)

const linesWire wire.Wire = "lines"

var registerLines sync.Once

func linesCodec(t *testing.T) {
	t.Helper()
	registerLines.Do(func() {
		codec.MustRegister(codec.Codec{
			Wire:      linesWire,
			Doc:       "a test-only wire",
			Path:      "/lines/generate",
			KeyHeader: "X-Lines-Key",
			Headers:   map[string]string{"Lines-Version": "1"},
			// Its requests are chat bodies, sent to its own path.
			NativeRequest: func(o request.Options) (*pipeline.Graph, error) {
				g, err := request.NewChatGraph(o)
				if err != nil {
					return nil, err
				}
				return g.Append(pipeline.StageNode("lines.path", pipeline.Map(func(s request.Shaped) request.Shaped {
					s.Path = "/lines/generate"
					return s
				})))
			},
			NativeRoute: "LinesNative",
			Response: func(o codec.Options) (*pipeline.Graph, error) {
				return pipeline.New("lines-response", sse.Node(sse.Options{MaxEventBytes: o.MaxEventBytes}),
					pipeline.NewNode("lines.decode", func() pipeline.Stage[sse.Event, protocol.ResponseEvent] { return &linesDecoder{} }))
			},
			Inbound: &codec.Inbound{
				Paths:     []string{"/v1/lines"},
				What:      "lines",
				Decode:    decodeLines,
				NewWriter: func(out io.Writer, _ codec.WriterOptions) codec.InboundWriter { return &linesWriter{w: out} },
			},
		})
	})
}

// linesDecoder turns the upstream's "say" and "end" events into engine
// events: one assistant message, then completed.
type linesDecoder struct {
	started bool
	text    strings.Builder
}

func (d *linesDecoder) Push(_ context.Context, ev sse.Event, emit func(protocol.ResponseEvent)) error {
	switch ev.Type {
	case "say":
		if !d.started {
			d.started = true
			emit(protocol.Created())
			emit(protocol.Added(&protocol.Message{ID: "msg_1", Role: protocol.RoleAssistant, Content: []protocol.ContentItem{protocol.OutputText("")}}))
		}
		d.text.Write(ev.Data)
		emit(protocol.TextDelta(string(ev.Data)))
	case "end":
		emit(protocol.Done(&protocol.Message{ID: "msg_1", Role: protocol.RoleAssistant, Content: []protocol.ContentItem{protocol.OutputText(d.text.String())}}))
		emit(protocol.Completed("", nil))
	default:
		return fmt.Errorf("lines.decode: unknown event %q", ev.Type)
	}
	return nil
}

func decodeLines(body []byte) (codec.InboundRequest, error) {
	var b struct {
		Model  string `json:"model"`
		Prompt string `json:"prompt"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return codec.InboundRequest{}, err
	}
	if b.Prompt == "" {
		return codec.InboundRequest{}, fmt.Errorf("no prompt")
	}
	req := &protocol.ResponsesRequest{Model: b.Model, Stream: b.Stream,
		Input: []protocol.ResponseItem{&protocol.Message{Role: protocol.RoleUser, Content: []protocol.ContentItem{protocol.InputText(b.Prompt)}}}}
	return codec.InboundRequest{Responses: req, Stream: b.Stream}, nil
}

// linesWriter writes "text: DELTA" per text delta and "end: STATUS".
type linesWriter struct {
	w      io.Writer
	body   strings.Builder
	events int
	ended  bool
	err    error
}

func (l *linesWriter) line(s string) {
	l.events++
	if l.w == nil {
		l.body.WriteString(s + "\n")
		return
	}
	if _, err := io.WriteString(l.w, s+"\n"); err != nil && l.err == nil {
		l.err = err
	}
}

func (l *linesWriter) Accept(ev protocol.ResponseEvent) error {
	switch ev.Type {
	case protocol.EventOutputTextDelta:
		l.line("text: " + ev.Delta)
	case protocol.EventCompleted:
		l.ended = true
		l.line("end: completed")
	}
	return l.err
}

func (l *linesWriter) Fail(e *protocol.StreamError) error {
	l.ended = true
	l.line("end: failed " + e.Message)
	return l.err
}
func (l *linesWriter) Ended() bool                { return l.ended }
func (l *linesWriter) Err() error                 { return l.err }
func (l *linesWriter) Events() int                { return l.events }
func (l *linesWriter) AppendBody(b []byte) []byte { return append(b, l.body.String()...) }

// TestTestOnlyWire runs the serve command in front of a lines upstream,
// once with --upstream-wire lines and once with a --config file whose
// upstream says wire = "lines", and asks it as a Responses client, a lines
// client (streamed and not) and a Chat Completions client. Every upstream
// request must reach the wire's path with the key in its header (never in
// Authorization) and the wire's own header, and carry the chat conversion.
func TestTestOnlyWire(t *testing.T) {
	linesCodec(t)
	t.Setenv("HF_LINES_KEY", "sk-lines")
	var mu sync.Mutex
	var got []*http.Request
	var bodies []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, bodies = append(got, r), append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: say\ndata: hello \n\nevent: say\ndata: from lines\n\nevent: end\ndata: \n\n")
	}))
	defer upstream.Close()
	config := filepath.Join(t.TempDir(), "lines.toml")
	if err := os.WriteFile(config, []byte("[upstreams.lines]\nbase_url = \""+upstream.URL+"\"\nwire = \"lines\"\napi_key_env = \"HF_LINES_KEY\"\n\n"+
		"[[models]]\nname = \"*\"\nupstreams = [\"lines\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	requests := []struct{ name, path, body, want string }{
		// A Responses client (Codex's wire) on a lines upstream.
		{"responses in", "/v1/responses", `{"model":"m","input":"hi","stream":true}`, "response.output_text.delta"},
		// A lines client, streamed and not.
		{"lines in", "/v1/lines", `{"model":"m","prompt":"hi","stream":true}`, "text: hello \ntext: from lines\nend: completed\n"},
		{"lines in, unary", "/v1/lines", `{"model":"m","prompt":"hi"}`, "text: hello \ntext: from lines\nend: completed\n"},
		// A Chat Completions client.
		{"chat in", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`, `"content":"from lines"`},
	}
	for _, setup := range []struct {
		name string
		args []string
	}{
		{"flags", []string{"--upstream", upstream.URL, "--upstream-wire", "lines", "--api-key-env", "HF_LINES_KEY"}},
		{"config", []string{"--config", config}},
	} {
		r := start(t, runServe, append([]string{"--listen", "127.0.0.1:0"}, setup.args...)...)
		base := r.address(t)
		for _, tc := range requests {
			t.Run(setup.name+"/"+tc.name, func(t *testing.T) {
				resp, err := http.Post(base+tc.path, "application/json", strings.NewReader(tc.body))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 || !strings.Contains(string(b), tc.want) {
					t.Fatalf("POST %s: %s\n%s\nwant %q in it", tc.path, resp.Status, b, tc.want)
				}
				if tc.path == "/v1/responses" {
					if text := responsesText(string(b)); text != "hello from lines" {
						t.Errorf("text %q, want %q", text, "hello from lines")
					}
				}
			})
		}
		if code := r.stop(t); code != 0 {
			t.Errorf("serve %s exited with %d: %s", setup.name, code, r.stderr.String())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := 2 * len(requests); len(got) != want {
		t.Fatalf("upstream got %d requests, want %d", len(got), want)
	}
	for i, r := range got {
		if r.URL.Path != "/lines/generate" || r.Header.Get("X-Lines-Key") != "sk-lines" || r.Header.Get("Authorization") != "" || r.Header.Get("Lines-Version") != "1" {
			t.Errorf("upstream request %d: %s key %q auth %q version %q", i, r.URL.Path, r.Header.Get("X-Lines-Key"), r.Header.Get("Authorization"), r.Header.Get("Lines-Version"))
		}
		if !strings.Contains(bodies[i], `"messages":[{"role":"user","content":"hi"}]`) {
			t.Errorf("upstream body %d is not the chat conversion: %s", i, bodies[i])
		}
	}
}

// responsesText joins the text deltas of a Responses SSE body.
func responsesText(body string) string {
	var text strings.Builder
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		var ev struct{ Type, Delta string }
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && json.Unmarshal([]byte(d), &ev) == nil && ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
	}
	return text.String()
}
