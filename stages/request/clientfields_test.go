package request

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// clientDirective reads a golden archive's client-field directive k: v
// into f (see the golden format in golden_test.go); other keys are
// ignored.
func clientDirective(f *ClientFields, k, v string) {
	switch k {
	case "client-fields":
		f.Send = v == "send"
	case "token-field":
		f.TokenField = TokenField(v)
	case "model-max-output-tokens":
		f.MaxOutputTokens, _ = strconv.ParseInt(v, 10, 64)
	case "prompt-cache-key":
		f.PromptCacheKey = v == "true"
	case "metadata":
		f.Metadata = v == "true"
	case "unsupported":
		f.Unsupported = strings.Split(v, ",")
	}
}

// messagesGraph is the Messages graph the client-field goldens run: the
// native system text and history, request.options of the Messages wire,
// and the plain Messages encoder.
func messagesGraph(opts Options) (*pipeline.Graph, error) {
	return pipeline.New("request.messages.test",
		SystemNode(), HistoryNode(opts, NativePolicy()), MessagesOptionsNode(opts), MessagesEncodeNode(MessagesStyle{}))
}

// TestMessagesClientFieldsGolden runs the archives of
// testdata/messages (the golden format of golden_test.go, body.json being
// the Messages body) through messagesGraph, fused and async.
func TestMessagesClientFieldsGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "messages", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden archives in testdata/messages (err %v)", err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			arc, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var opts Options
			for _, line := range strings.Split(string(arc.Comment), "\n") {
				k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
				clientDirective(&opts.ClientFields, k, strings.TrimSpace(v))
			}
			req := new(protocol.ResponsesRequest)
			if err := json.Unmarshal(file(arc, "request.json"), req); err != nil {
				t.Fatalf("request.json: %v", err)
			}
			run := func(mode pipeline.Mode) (Shaped, string, error) {
				var buf bytes.Buffer
				o := opts
				o.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug,
					ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
						if a.Key == slog.TimeKey && len(groups) == 0 {
							return slog.Attr{}
						}
						return a
					}}))
				g, err := messagesGraph(o)
				if err != nil {
					t.Fatal(err)
				}
				out, err := Shape(context.Background(), g, req, pipeline.WithMode(mode))
				return out, buf.String(), err
			}
			got, log, err := run(pipeline.Fused)
			async, alog, aerr := run(pipeline.Async)
			if fmt.Sprint(err) != fmt.Sprint(aerr) || !bytes.Equal(got.Body, async.Body) || log != alog {
				t.Errorf("fused and async runs differ:\nfused: %v %s\nasync: %v %s", err, got.Body, aerr, async.Body)
			}
			if *update {
				if err != nil {
					removeFile(arc, "body.json")
					setFile(arc, "error.txt", []byte(err.Error()+"\n"))
				} else {
					removeFile(arc, "error.txt")
					setFile(arc, "body.json", indent(t, got.Body))
				}
				if log != "" {
					setFile(arc, "log.txt", []byte(log))
				} else {
					removeFile(arc, "log.txt")
				}
				if err := os.WriteFile(p, txtar.Format(arc), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := file(arc, "error.txt"); want != nil {
				if err == nil {
					t.Fatalf("no error, want %q; body:\n%s", strings.TrimSpace(string(want)), got.Body)
				}
				if d := cmp.Diff(strings.TrimSpace(string(want)), err.Error()); d != "" {
					t.Errorf("error (-want +got):\n%s", d)
				}
				return
			}
			if err != nil {
				t.Fatalf("shape: %v", err)
			}
			if got.Path != "/messages" {
				t.Errorf("path %q, want /messages", got.Path)
			}
			if d := cmp.Diff(jsonValue(t, "body.json", file(arc, "body.json")), jsonValue(t, "body", got.Body)); d != "" {
				t.Errorf("body (-want +got):\n%s", d)
			}
			if d := cmp.Diff(string(file(arc, "log.txt")), log); d != "" {
				t.Errorf("debug log (-want +got):\n%s", d)
			}
		})
	}
}

func TestReadClientValues(t *testing.T) {
	for _, tc := range []struct {
		name, extra string
		want        string // fmt of the values, or the error
	}{
		{"none", `{}`, "max=<nil> t= p= logprobs=<nil> user= sid= meta="},
		{"nulls", `{"max_output_tokens":null,"temperature":null,"user":null,"metadata":null}`, "max=<nil> t= p= logprobs=<nil> user= sid= meta="},
		{"all", `{"max_output_tokens":7,"temperature":0,"top_p":1e-1,"top_logprobs":0,"user":"u\"1","safety_identifier":"s","metadata":{}}`,
			`max=7 t=0 p=1e-1 logprobs=0 user=u"1 sid=s meta={}`},
		{"out of range is kept", `{"max_output_tokens":-3,"temperature":9}`, "max=-3 t=9 p= logprobs=<nil> user= sid= meta="},
		{"huge number is a number", `{"temperature":1e400,"top_p":-0.5}`, "max=<nil> t=1e400 p=-0.5 logprobs=<nil> user= sid= meta="},
		{"max float", `{"max_output_tokens":5.0}`, "max_output_tokens: want an integer, got 5.0"},
		{"max bool", `{"max_output_tokens":true}`, "max_output_tokens: want an integer, got true"},
		{"temperature string number", `{"temperature":"0.5"}`, `temperature: want a number, got "0.5"`},
		{"top_p object", `{"top_p":{"v":1}}`, `top_p: want a number, got {"v":1}`},
		{"safety_identifier number", `{"safety_identifier":12}`, "safety_identifier: want a string, got 12"},
		{"metadata string", `{"metadata":"x"}`, `metadata: want a JSON object, got "x"`},
		{"long value cut", `{"user":["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]}`, `user: want a string, got ["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var extra protocol.Extra
			if err := json.Unmarshal([]byte(tc.extra), &extra); err != nil {
				t.Fatal(err)
			}
			v, err := readClientValues(&protocol.ResponsesRequest{Extra: extra})
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				n := func(p *int64) string {
					if p == nil {
						return "<nil>"
					}
					return strconv.FormatInt(*p, 10)
				}
				got = fmt.Sprintf("max=%s t=%s p=%s logprobs=%s user=%s sid=%s meta=%s", n(v.maxOutput), v.temperature, v.topP,
					n(v.topLogprobs), v.user, v.safetyID, v.metadata)
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// FuzzClientFields feeds arbitrary requests through both mappings: no
// panic, and a body that encodes is valid JSON.
func FuzzClientFields(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "messages", "*.txtar"))
	more, _ := filepath.Glob(filepath.Join("testdata", "client_fields*.txtar"))
	for _, p := range append(paths, more...) {
		if arc, err := txtar.ParseFile(p); err == nil {
			f.Add(file(arc, "request.json"))
		}
	}
	f.Add([]byte(`{"model":"m","input":[],"max_output_tokens":1e3,"temperature":-0,"metadata":{"a":[1]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := protocol.DecodeRequest(data)
		if err != nil {
			return
		}
		fields := ClientFields{Send: true, MaxOutputTokens: 100, Metadata: true, PromptCacheKey: true}
		s := NewShaping(req)
		if err := ApplyClientFields(s, fields, slog.New(slog.DiscardHandler)); err == nil {
			s.Body.Model = req.Model
			if b, err := s.Body.MarshalJSON(); err == nil && !json.Valid(b) {
				t.Fatalf("chat body not valid JSON: %s", b)
			}
		}
		s = NewShaping(req)
		if err := ApplyMessagesClientFields(s, fields, slog.New(slog.DiscardHandler)); err == nil {
			if b, err := s.MessagesBody.AppendJSON(nil); err == nil && !json.Valid(b) {
				t.Fatalf("messages body not valid JSON: %s", b)
			}
		}
	})
}
