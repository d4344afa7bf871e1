package request

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"golang.org/x/tools/txtar"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

var update = flag.Bool("update", false, "rewrite body.json, tool_kinds.json, log.txt and error.txt in testdata/*.txtar")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A golden archive (testdata/NAME.txtar) holds:
//
//	comment lines        what the case pins down, and optional directives:
//	                       base-url: URL               Options.BaseURL
//	                       provider: NAME              Options.Provider
//	                       reasoning-control: NAME     Options.ReasoningControl
//	                       send-effort: true           Options.SendEffort
//	                       client-fields: send         Options.ClientFields.Send, and with it
//	                       token-field: NAME           .TokenField
//	                       model-max-output-tokens: N  .MaxOutputTokens
//	                       prompt-cache-key: true      .PromptCacheKey
//	                       metadata: true              .Metadata
//	                       unsupported: A,B            .Unsupported
//	                       base-instructions: true     Options.BaseInstructions
//	-- request.json --   the engine request (Responses JSON)
//	-- body.json --      the chat body (compared as JSON values)
//	-- tool_kinds.json --
//	-- log.txt --        (optional) the debug records, one per line
//	-- error.txt --      instead of body.json and tool_kinds.json: the error
type golden struct {
	path string
	arc  *txtar.Archive
	opts Options
	req  *protocol.ResponsesRequest
	err  error // decoding request.json failed
}

func loadGoldens(t testing.TB) []golden {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden archives in testdata (err %v)", err)
	}
	var gs []golden
	for _, p := range paths {
		arc, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		g := golden{path: p, arc: arc}
		for _, line := range strings.Split(string(arc.Comment), "\n") {
			k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
			v = strings.TrimSpace(v)
			switch k {
			case "base-url":
				g.opts.BaseURL = v
			case "provider":
				g.opts.Provider = Provider(v)
			case "reasoning-control":
				g.opts.ReasoningControl = ReasoningControl(v)
			case "send-effort":
				g.opts.SendEffort = v == "true"
			case "base-instructions":
				g.opts.BaseInstructions = v == "true"
			default:
				clientDirective(&g.opts.ClientFields, k, v)
			}
		}
		data := file(arc, "request.json")
		if data == nil {
			t.Fatalf("%s: no request.json", p)
		}
		g.req = new(protocol.ResponsesRequest)
		if err := json.Unmarshal(data, g.req); err != nil {
			g.err = err
		}
		gs = append(gs, g)
	}
	return gs
}

func file(arc *txtar.Archive, name string) []byte {
	for _, f := range arc.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

func setFile(arc *txtar.Archive, name string, data []byte) {
	for i, f := range arc.Files {
		if f.Name == name {
			arc.Files[i].Data = data
			return
		}
	}
	arc.Files = append(arc.Files, txtar.File{Name: name, Data: data})
}

func removeFile(arc *txtar.Archive, name string) {
	files := arc.Files[:0]
	for _, f := range arc.Files {
		if f.Name != name {
			files = append(files, f)
		}
	}
	arc.Files = files
}

// result is what one golden produced.
type result struct {
	shaped Shaped
	log    string
	err    error
}

// shapeGolden runs the golden's request through the native chat graph.
func shapeGolden(g golden, mode pipeline.Mode) result {
	if g.err != nil {
		return result{err: g.err}
	}
	var logBuf bytes.Buffer
	opts := g.opts
	opts.Logger = slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	gr, err := NewChatGraph(opts)
	if err != nil {
		return result{err: err}
	}
	shaped, err := Shape(context.Background(), gr, g.req, pipeline.WithMode(mode))
	return result{shaped: shaped, log: logBuf.String(), err: err}
}

func indent(t *testing.T, v any) []byte {
	t.Helper()
	var raw []byte
	switch v := v.(type) {
	case json.RawMessage:
		raw = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		t.Fatalf("indent %s: %v", raw, err)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// jsonValue decodes JSON for a semantic comparison.
func jsonValue(t *testing.T, what string, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, data)
	}
	return v
}

func TestGolden(t *testing.T) {
	for _, g := range loadGoldens(t) {
		t.Run(strings.TrimSuffix(filepath.Base(g.path), ".txtar"), func(t *testing.T) {
			got := shapeGolden(g, pipeline.Fused)

			// The async mode must produce exactly the same result.
			async := shapeGolden(g, pipeline.Async)
			if fmt.Sprint(got.err) != fmt.Sprint(async.err) || !bytes.Equal(got.shaped.Body, async.shaped.Body) ||
				!cmp.Equal(got.shaped.ToolKinds, async.shaped.ToolKinds) || got.log != async.log {
				t.Errorf("fused and async runs differ:\nfused: %v %s\nasync: %v %s", got.err, got.shaped.Body, async.err, async.shaped.Body)
			}

			if *update {
				if got.err != nil {
					removeFile(g.arc, "body.json")
					removeFile(g.arc, "tool_kinds.json")
					setFile(g.arc, "error.txt", []byte(got.err.Error()+"\n"))
				} else {
					removeFile(g.arc, "error.txt")
					setFile(g.arc, "body.json", indent(t, got.shaped.Body))
					setFile(g.arc, "tool_kinds.json", indent(t, got.shaped.ToolKinds))
				}
				if got.log != "" {
					setFile(g.arc, "log.txt", []byte(got.log))
				} else {
					removeFile(g.arc, "log.txt")
				}
				if err := os.WriteFile(g.path, txtar.Format(g.arc), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}

			if want := file(g.arc, "error.txt"); want != nil {
				if got.err == nil {
					t.Fatalf("no error, want %q; body:\n%s", strings.TrimSpace(string(want)), got.shaped.Body)
				}
				if d := cmp.Diff(strings.TrimSpace(string(want)), got.err.Error()); d != "" {
					t.Errorf("error (-want +got):\n%s", d)
				}
				return
			}
			if got.err != nil {
				t.Fatalf("shape: %v", got.err)
			}
			if got.shaped.Path != "/chat/completions" || got.shaped.TitleRequest != nil {
				t.Errorf("path %q, title request %s; want /chat/completions and none", got.shaped.Path, got.shaped.TitleRequest)
			}
			if !json.Valid(got.shaped.Body) {
				t.Fatalf("body is not valid JSON:\n%s", got.shaped.Body)
			}
			wantBody := jsonValue(t, "body.json", file(g.arc, "body.json"))
			if d := cmp.Diff(wantBody, jsonValue(t, "body", got.shaped.Body)); d != "" {
				t.Errorf("body (-want +got):\n%s", d)
			}
			kinds, err := json.Marshal(got.shaped.ToolKinds)
			if err != nil {
				t.Fatal(err)
			}
			wantKinds := jsonValue(t, "tool_kinds.json", file(g.arc, "tool_kinds.json"))
			if d := cmp.Diff(wantKinds, jsonValue(t, "tool kinds", kinds)); d != "" {
				t.Errorf("tool_kinds (-want +got):\n%s", d)
			}
			if d := cmp.Diff(string(file(g.arc, "log.txt")), got.log); d != "" {
				t.Errorf("debug log (-want +got):\n%s", d)
			}
		})
	}
}
