package operator

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
)

func TestNewErrors(t *testing.T) {
	for _, tt := range []struct {
		name, kind string
		opts       map[string]any
		want       string // "" for no error
	}{
		{"redact, no options", KindRedact, nil, ""},
		{"redact with patterns", KindRedact, map[string]any{"patterns": []any{`ACME-[0-9]{6}`}}, ""},
		{"unknown kind", "redakt", nil, `operator: unknown stage kind "redakt" (want one of log-events, record, redact)`},
		{"unknown option", KindRedact, map[string]any{"pattern": []any{"x+"}}, `operator: stage "redact": unknown option "pattern" (want patterns)`},
		{"an option of no kind", KindLogEvents, map[string]any{"level": "debug"}, `operator: stage "log-events": unknown option "level" (it takes none)`},
		{"patterns not a list", KindRedact, map[string]any{"patterns": "x+"}, `operator: stage "redact": option "patterns": want a list of strings, got a string`},
		{"a pattern not a string", KindRedact, map[string]any{"patterns": []any{"x+", int64(3)}}, `operator: stage "redact": option "patterns": element 2: want a string, got a number`},
		{"a bad regexp", KindRedact, map[string]any{"patterns": []any{"("}}, `operator: stage "redact": option "patterns": `},
		{"record without dir", KindRecord, nil, `operator: stage "record": option "dir": want the directory to record into`},
		{"record dir not a string", KindRecord, map[string]any{"dir": true}, `operator: stage "record": option "dir": want a string, got a boolean`},
		{"record", KindRecord, map[string]any{"dir": "/tmp"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.kind, tt.opts)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.want == "" && s.Kind().Name != tt.kind:
				t.Errorf("kind %q", s.Kind().Name)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestKinds(t *testing.T) {
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.Name+": "+k.Anchor.String())
		if k.Doc == "" {
			t.Errorf("kind %s has no doc", k.Name)
		}
	}
	if got := strings.Join(names, "; "); got != "log-events: around every node; record: prepend; redact: append" {
		t.Errorf("kinds %s", got)
	}
	if _, ok := Lookup("redact"); !ok {
		t.Error("no redact")
	}
	if _, ok := Lookup("nosuch"); ok {
		t.Error("nosuch found")
	}
}

// The built-in stages, put by their edits into a chat graph, redact the
// answer, record the upstream bytes and log the events.
func TestEdits(t *testing.T) {
	dir := t.TempDir()
	var stages []*Stage
	for _, k := range []struct {
		kind string
		opts map[string]any
	}{{KindRedact, map[string]any{"patterns": []string{`ACME-[0-9]{6}`}}}, {KindRecord, map[string]any{"dir": dir}}, {KindLogEvents, nil}} {
		s, err := New(k.kind, k.opts)
		if err != nil {
			t.Fatal(err)
		}
		stages = append(stages, s)
	}
	g, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if g, err = pipeline.Apply(g, Edits(Stream{Wire: "chat", Log: &log}, stages...)...); err != nil {
		t.Fatal(err)
	}
	names := g.Names()
	if names[0] != "tap.record" || names[len(names)-1] != "redact.response" {
		t.Errorf("nodes %v", names)
	}
	body := `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"key ACME-123456 here"},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	var out []protocol.ResponseEvent
	if err := pipeline.Run(context.Background(), g, sources.Reader(strings.NewReader(body)), sinks.Func(func(ev protocol.ResponseEvent) error { out = append(out, ev); return nil })); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, ev := range out {
		text.WriteString(ev.Delta)
	}
	if got := text.String(); strings.Contains(got, "ACME-123456") || !strings.Contains(got, "[REDACTED:custom]") {
		t.Errorf("text %q", got)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "chat-*"))
	if len(files) != 1 {
		t.Fatalf("recordings %v", files)
	}
	if data, _ := os.ReadFile(files[0]); string(data) != body {
		t.Errorf("recorded %q", data)
	}
	if l := log.String(); !strings.Contains(l, "recording upstream bytes to "+files[0]) || !strings.Contains(l, "node=redact.response") {
		t.Errorf("log %s", l)
	}
}

// An anchor naming a node the graph lacks fails the edit, naming the stage.
func TestEditUnknownAnchor(t *testing.T) {
	Register(Kind{Name: "test-before", Doc: "test", Anchor: Anchor{Place: Before, Node: "nosuch"},
		New: func(*Options) (Maker, error) {
			return Maker{Node: func(Stream) pipeline.Node {
				return pipeline.StageNode("t", pipeline.Map(func(ev protocol.ResponseEvent) protocol.ResponseEvent { return ev }))
			}}, nil
		}})
	s, err := New("test-before", nil)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := chatstream.Graph(chatstream.Options{})
	if _, err := s.Edit(Stream{})(g); err == nil || !strings.Contains(err.Error(), `stage "test-before" (before nosuch)`) {
		t.Errorf("error %v", err)
	}
}
