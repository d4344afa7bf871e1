package messagesin

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/harnessflow/harnessflow/protocol"
	"golang.org/x/tools/txtar"
)

// updating reports whether -update (the flag stages/streamtest defines,
// linked into this test binary) asks to rewrite the want sections.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestDecodeGoldens decodes each testdata/decode/*.txtar's request.json
// and compares the neutral request (want.json) or the error (error.txt).
func TestDecodeGoldens(t *testing.T) {
	files, _ := filepath.Glob("testdata/decode/*.txtar")
	if len(files) == 0 {
		t.Fatal("no goldens")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar := readArchive(t, file)
			body := section(t, ar, "request.json")
			var got []byte
			name := "want.json"
			if r, err := Decode(body); err != nil {
				name, got = "error.txt", []byte(err.Error()+"\n")
			} else {
				got = indent(t, mustJSON(t, r.Responses))
			}
			compareSection(t, file, ar, name, got)
		})
	}
}

// TestWriterGoldens runs each testdata/writer/*.txtar's events.jsonl
// through a streaming writer (stream.sse) and a non-streaming one
// (message.json).
func TestWriterGoldens(t *testing.T) {
	files, _ := filepath.Glob("testdata/writer/*.txtar")
	if len(files) == 0 {
		t.Fatal("no goldens")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar := readArchive(t, file)
			evs := readEvents(t, section(t, ar, "events.jsonl"))
			var sse bytes.Buffer
			w := NewWriter(&sse, Options{MessageID: "msg_test", Model: "claude-test"})
			unary := NewWriter(nil, Options{MessageID: "msg_test", Model: "claude-test"})
			for _, ev := range evs {
				if err := w.Accept(ev); err != nil {
					t.Fatal(err)
				}
				if err := unary.Accept(ev); err != nil {
					t.Fatal(err)
				}
			}
			if !w.Ended() {
				t.Fatal("the stream did not end")
			}
			if w.Events() != unary.Events() {
				t.Fatalf("streaming writer wrote %d events, non-streaming counted %d", w.Events(), unary.Events())
			}
			compareSection(t, file, ar, "stream.sse", sse.Bytes())
			if w.Failure() == nil {
				compareSection(t, file, ar, "message.json", indent(t, unary.AppendMessage(nil)))
			}
		})
	}
}

func readArchive(t *testing.T, file string) *txtar.Archive {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return ar
}

func section(t *testing.T, ar *txtar.Archive, name string) []byte {
	t.Helper()
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("no section %s", name)
	return nil
}

func compareSection(t *testing.T, file string, ar *txtar.Archive, name string, got []byte) {
	t.Helper()
	for i, f := range ar.Files {
		if f.Name != name {
			continue
		}
		if updating() {
			ar.Files[i].Data = got
			writeArchive(t, file, ar)
			return
		}
		if diff := cmp.Diff(string(f.Data), string(got)); diff != "" {
			t.Fatalf("%s differs (-want +got; -update rewrites):\n%s", name, diff)
		}
		return
	}
	if !updating() {
		t.Fatalf("%s: no section %s (-update adds it)", file, name)
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: got})
	writeArchive(t, file, ar)
}

func writeArchive(t *testing.T, file string, ar *txtar.Archive) {
	t.Helper()
	if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

func readEvents(t *testing.T, data []byte) []protocol.ResponseEvent {
	t.Helper()
	var evs []protocol.ResponseEvent
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var ev protocol.ResponseEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}
