package responses_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3/packages/ssestream"
	oai "github.com/openai/openai-go/v3/responses"
	"golang.org/x/tools/txtar"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/responses"
)

var update = flag.Bool("update", false, "rewrite want.sse in testdata/writer/*.txtar from the writer's output")

// fixedOptions make the output deterministic.
var fixedOptions = responses.Options{ResponseID: "resp_test", CreatedAt: 1700000000}

func decodeEvents(t *testing.T, name string, data []byte) []protocol.ResponseEvent {
	t.Helper()
	var evs []protocol.ResponseEvent
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var ev protocol.ResponseEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%s: events.jsonl line %d: %v", name, i+1, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func writeSSE(t *testing.T, evs []protocol.ResponseEvent) []byte {
	t.Helper()
	var buf bytes.Buffer
	s := responses.NewWriter(&buf, fixedOptions)
	for _, ev := range evs {
		if err := s.Accept(ev); err != nil {
			t.Fatalf("accept %s: %v", ev.Type, err)
		}
	}
	if !s.Ended() {
		t.Fatal("no terminal event written")
	}
	return buf.Bytes()
}

// TestResponsesSSEGolden: ResponseEvents in (events.jsonl) → SSE bytes out
// (want.sse).
func TestWriterGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "writer", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden archives (err %v)", err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			arc, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var in []byte
			want := -1
			for i, f := range arc.Files {
				switch f.Name {
				case "events.jsonl":
					in = f.Data
				case "want.sse":
					want = i
				default:
					t.Fatalf("unexpected file %q", f.Name)
				}
			}
			if in == nil || want < 0 {
				t.Fatal("need events.jsonl and want.sse")
			}
			got := writeSSE(t, decodeEvents(t, p, in))
			checkWellFormed(t, got)
			checkOpenAIGo(t, got)
			if *update {
				arc.Files[want].Data = got
				if err := os.WriteFile(p, txtar.Format(arc), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(string(arc.Files[want].Data), string(got)); diff != "" {
				t.Errorf("SSE mismatch (-want +got; go test ./wire/responses -run Golden -update to accept):\n%s", diff)
			}
		})
	}
}

type sseEvent struct {
	name string
	data map[string]any
}

func parseSSE(t *testing.T, b []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	for i, block := range strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n") {
		lines := strings.Split(block, "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			t.Fatalf("event %d is not one event line and one data line: %q", i, block)
		}
		var data map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "data: ")), &data); err != nil {
			t.Fatalf("event %d: bad JSON: %v", i, err)
		}
		out = append(out, sseEvent{name: strings.TrimPrefix(lines[0], "event: "), data: data})
	}
	return out
}

// flushCounter counts flushes and the bytes written before each.
type flushCounter struct {
	bytes.Buffer
	flushes []int
}

func (f *flushCounter) Flush() error { f.flushes = append(f.flushes, f.Len()); return nil }

func TestWriterFlushesEveryEvent(t *testing.T) {
	var w flushCounter
	s := responses.NewWriter(&w, fixedOptions)
	for _, ev := range []protocol.ResponseEvent{protocol.Created(), protocol.TextDelta("a"), protocol.TextDelta("b"), protocol.Completed("r", nil)} {
		if err := s.Accept(ev); err != nil {
			t.Fatal(err)
		}
	}
	if len(w.flushes) != s.Events() || s.Events() == 0 {
		t.Fatalf("%d flushes for %d events", len(w.flushes), s.Events())
	}
	for i, n := range w.flushes {
		if i > 0 && n <= w.flushes[i-1] {
			t.Errorf("flush %d after no new bytes", i)
		}
	}
	if w.flushes[len(w.flushes)-1] != w.Len() {
		t.Error("bytes written after the last flush")
	}
}

type brokenWriter struct{ n int }

func (f *brokenWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("broken pipe")
	}
	f.n--
	return len(p), nil
}

func TestWriterWriteError(t *testing.T) {
	s := responses.NewWriter(&brokenWriter{n: 2}, fixedOptions)
	if err := s.Accept(protocol.Created()); err != nil {
		t.Fatalf("created: %v", err)
	}
	err := s.Accept(protocol.TextDelta("x"))
	if err == nil || !strings.Contains(err.Error(), "broken pipe") || !strings.Contains(err.Error(), "response.output_item.added") {
		t.Fatalf("err = %v", err)
	}
	if err2 := s.Accept(protocol.TextDelta("y")); err2 != err {
		t.Errorf("later Accept = %v, want the first error", err2)
	}
	if s.Fail(&protocol.StreamError{Kind: protocol.ErrKindProtocol}) != err || s.Err() != err {
		t.Error("Fail after a write error must return it")
	}
}

func TestWriterFail(t *testing.T) {
	var buf bytes.Buffer
	s := responses.NewWriter(&buf, fixedOptions)
	if err := s.Accept(protocol.TextDelta("half")); err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(&protocol.StreamError{Kind: protocol.ErrKindProtocol, Message: "stage chat.decode: bad JSON"}); err != nil {
		t.Fatal(err)
	}
	n := s.Events()
	if err := s.Fail(&protocol.StreamError{Kind: "again"}); err != nil || s.Events() != n {
		t.Errorf("second Fail wrote events (%v)", err)
	}
	evs := parseSSE(t, buf.Bytes())
	last := evs[len(evs)-1]
	if last.name != "response.failed" {
		t.Fatalf("last event %s", last.name)
	}
	resp := last.data["response"].(map[string]any)
	want := map[string]any{"code": "protocol", "message": "stage chat.decode: bad JSON"}
	if diff := cmp.Diff(want, resp["error"]); diff != "" || resp["status"] != "failed" || resp["id"] != "resp_test" {
		t.Errorf("failed response %v (%s)", resp, diff)
	}
	for _, ev := range evs {
		if ev.name == "response.completed" || ev.name == "response.output_item.done" {
			t.Errorf("unexpected %s in a failed stream", ev.name)
		}
	}
}

func TestWriterGeneratedIDAndModel(t *testing.T) {
	var buf bytes.Buffer
	s := responses.NewWriter(&buf, responses.Options{Model: "req-model"})
	if !strings.HasPrefix(s.ResponseID(), "resp_") || len(s.ResponseID()) != 5+24 {
		t.Errorf("id %q", s.ResponseID())
	}
	if other := responses.NewResponseID(); other == s.ResponseID() {
		t.Error("ids repeat")
	}
	for _, ev := range []protocol.ResponseEvent{protocol.Created(), protocol.ServerModel("served-model"), protocol.TextDelta("x"), protocol.Completed("r", nil)} {
		if err := s.Accept(ev); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(&buf)
	var models []any
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "data: ") {
			var d map[string]any
			if err := json.Unmarshal([]byte(line[6:]), &d); err != nil {
				t.Fatal(err)
			}
			if r, ok := d["response"].(map[string]any); ok {
				models = append(models, r["model"])
				if r["id"] != s.ResponseID() {
					t.Errorf("response id %v", r["id"])
				}
			}
		}
	}
	if diff := cmp.Diff([]any{"req-model", "req-model", "served-model"}, models); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}

// The writer never modifies the items it is handed.
func TestWriterDoesNotModifyItems(t *testing.T) {
	msg := &protocol.Message{Role: protocol.RoleAssistant, Content: []protocol.ContentItem{protocol.OutputText("hi")}}
	call := &protocol.FunctionCall{Name: "f", Arguments: "{}", CallID: "c"}
	before, _ := protocol.MarshalItem(msg)
	beforeCall, _ := protocol.MarshalItem(call)
	var buf bytes.Buffer
	s := responses.NewWriter(&buf, fixedOptions)
	for _, ev := range []protocol.ResponseEvent{protocol.Added(msg), protocol.Done(msg), protocol.Done(call), protocol.Completed("r", nil)} {
		if err := s.Accept(ev); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := protocol.MarshalItem(msg)
	afterCall, _ := protocol.MarshalItem(call)
	if string(before) != string(after) || string(beforeCall) != string(afterCall) {
		t.Errorf("items modified:\n%s\n%s\n%s\n%s", before, after, beforeCall, afterCall)
	}
}

// checkOpenAIGo decodes a stream with the official openai-go v3 Responses
// stream types (an oracle of the format): every event must parse, the
// terminal one must carry the response id and, when completed, every done
// item in its output.
func checkOpenAIGo(t *testing.T, b []byte) {
	t.Helper()
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(b))}
	stream := ssestream.NewStream[oai.ResponseStreamEventUnion](ssestream.NewDecoder(resp), nil)
	defer stream.Close()
	var last oai.ResponseStreamEventUnion
	var done []oai.ResponseOutputItemUnion
	n := 0
	for stream.Next() {
		last = stream.Current()
		if last.SequenceNumber != int64(n) {
			t.Errorf("openai-go: event %d has sequence_number %d", n, last.SequenceNumber)
		}
		n++
		if last.Type == "response.output_item.done" {
			done = append(done, last.AsResponseOutputItemDone().Item)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("openai-go: %v", err)
	}
	switch last.Type {
	case "response.completed", "response.incomplete", "response.failed":
	default:
		t.Fatalf("openai-go: last event %q", last.Type)
	}
	if last.Response.ID != "resp_test" {
		t.Errorf("openai-go: response id %q", last.Response.ID)
	}
	if last.Type == "response.completed" {
		if len(last.Response.Output) != len(done) {
			t.Fatalf("openai-go: %d output items, %d done", len(last.Response.Output), len(done))
		}
		for i, it := range last.Response.Output {
			if it.ID != done[i].ID || it.Type != done[i].Type {
				t.Errorf("openai-go: output %d is %s %s, done %s %s", i, it.Type, it.ID, done[i].Type, done[i].ID)
			}
		}
	}
	if last.Type == "response.failed" && last.Response.Error.Message == "" {
		t.Error("openai-go: failed response without an error message")
	}
	if last.Type == "response.incomplete" && last.Response.IncompleteDetails.Reason == "" {
		t.Error("openai-go: incomplete response without a reason")
	}
}
