package tap_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/tap"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// chunks feeds data in random chunks.
func chunks(data []byte, seed uint64) pipeline.Source[[]byte] {
	rng := rand.New(rand.NewPCG(seed, 3))
	var parts [][]byte
	for len(data) > 0 {
		n := 1 + rng.IntN(min(len(data), 200))
		parts = append(parts, data[:n])
		data = data[n:]
	}
	return sources.Slice(parts)
}

func collect(t *testing.T, g *pipeline.Graph, src pipeline.Source[[]byte], mode pipeline.Mode) []protocol.ResponseEvent {
	t.Helper()
	sink := sinks.Collect[protocol.ResponseEvent]()
	if err := pipeline.Run(context.Background(), g, src, sink, pipeline.WithMode(mode)); err != nil {
		t.Fatalf("run: %v", err)
	}
	return sink.Items()
}

// A stream recorded by the tap during a live run replays, through the plain
// graph, to exactly the events of the live run.
func TestRecordReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	plain, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
			t.Run(filepath.Base(file)+"/"+mode.String(), func(t *testing.T) {
				w, path, err := tap.RecordFile(dir, "chat")
				if err != nil {
					t.Fatal(err)
				}
				g, err := plain.InsertBefore("sse.decode", tap.Node(w))
				if err != nil {
					t.Fatal(err)
				}
				live := collect(t, g, chunks(data, uint64(i)), mode)
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				recorded, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(recorded, data) {
					t.Fatalf("recording differs from the upstream bytes (%d vs %d bytes)", len(recorded), len(data))
				}
				replayed := collect(t, plain, sources.File(path), mode)
				if len(live) == 0 {
					t.Fatal("no events")
				}
				if diff := cmp.Diff(live, replayed); diff != "" {
					t.Errorf("replay differs from the live run (-live +replay):\n%s", diff)
				}
			})
		}
	}
}

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) <= f.after {
		f.after -= len(p)
		return len(p), nil
	}
	n := f.after
	f.after = 0
	return n, errors.New("disk full")
}

func TestWriteErrorIsFatal(t *testing.T) {
	g := pipeline.Must(pipeline.New("t", tap.Node(&failingWriter{after: 10})))
	err := pipeline.Run(context.Background(), g, sources.Slice([][]byte{[]byte("0123456"), []byte("789abc")}), sinks.Discard[[]byte]())
	var se *pipeline.StageError
	if !errors.As(err, &se) || se.Stage != tap.Name || se.Seq != 2 {
		t.Fatalf("err = %v", err)
	}
	if want := "tap: record writer at byte 10: disk full"; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to contain %q", err, want)
	}

	// A file's error names its path.
	dir := t.TempDir()
	w, path, err := tap.RecordFile(dir, "x")
	if err != nil {
		t.Fatal(err)
	}
	w.Close() // writes now fail
	g = pipeline.Must(pipeline.New("t", tap.Node(w)))
	err = pipeline.Run(context.Background(), g, sources.Slice([][]byte{[]byte("data")}), sinks.Discard[[]byte]())
	if err == nil || !strings.Contains(err.Error(), "tap: record "+path+" at byte 0") || !errors.Is(err, os.ErrClosed) {
		t.Errorf("err = %v", err)
	}
}

type flushWriter struct {
	bytes.Buffer
	flushed int
	err     error
}

func (f *flushWriter) Flush() error { f.flushed++; return f.err }

func TestFinishFlushes(t *testing.T) {
	w := &flushWriter{}
	g := pipeline.Must(pipeline.New("t", tap.Node(w)))
	sink := sinks.Collect[[]byte]()
	if err := pipeline.Run(context.Background(), g, sources.Slice([][]byte{[]byte("a"), []byte("b")}), sink); err != nil {
		t.Fatal(err)
	}
	if w.String() != "ab" || w.flushed != 1 || len(sink.Items()) != 2 {
		t.Errorf("wrote %q, flushed %d, passed %d", w.String(), w.flushed, len(sink.Items()))
	}
	w = &flushWriter{err: errors.New("nope")}
	g = pipeline.Must(pipeline.New("t", tap.Node(w)))
	if err := pipeline.Run(context.Background(), g, sources.Slice([][]byte{[]byte("a")}), sinks.Discard[[]byte]()); err == nil || !strings.Contains(err.Error(), "tap: flush writer: nope") {
		t.Errorf("err = %v", err)
	}
	st := tap.New(&bytes.Buffer{})
	_ = st.Push(context.Background(), []byte("abc"), func([]byte) {})
	if st.Written() != 3 {
		t.Errorf("Written = %d", st.Written())
	}
}

func TestRecordFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec", "sub")
	var paths []string
	for range 3 {
		w, path, err := tap.RecordFile(dir, "chat")
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		paths = append(paths, path)
	}
	name := regexp.MustCompile(`^chat-\d{8}T\d{6}\.\d{9}Z-\d{6}\.sse$`)
	for i, p := range paths {
		if filepath.Dir(p) != dir || !name.MatchString(filepath.Base(p)) {
			t.Errorf("path %q", p)
		}
		if i > 0 && p <= paths[i-1] {
			t.Errorf("names do not sort in creation order: %q after %q", p, paths[i-1])
		}
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("stat %s: %v %v", p, st.Mode(), err)
		}
	}
	for _, bad := range []string{"", "a/b", `a\b`, "..", "."} {
		if _, _, err := tap.RecordFile(dir, bad); err == nil {
			t.Errorf("prefix %q accepted", bad)
		}
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tap.RecordFile(filepath.Join(file, "dir"), "x"); err == nil || !strings.HasPrefix(err.Error(), "tap: recording directory") {
		t.Errorf("err = %v", err)
	}
}

// openFiles returns the files this process has open (Linux: /proc/self/fd).
func openFiles(t *testing.T) map[string]bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	open := map[string]bool{}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil {
			open[target] = true
		}
	}
	return open
}

// A Record node's file is created when the run opens the node, is open
// while chunks pass, and is closed when the run is over — a new file per
// run, none for a graph that is built but not run — in both modes.
func TestRecordNodeOpensAndClosesWithTheRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	var created []string
	plain, err := chatstream.Graph(chatstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := plain.InsertBefore("sse.decode", tap.Record(dir, "chat", func(path string) { created = append(created, path) }))
	if err != nil {
		t.Fatal(err)
	}
	// Watch the recording from inside the run, just after the tap.
	openDuringRun := map[string]bool{}
	g, err = g.InsertAfter(tap.Name, pipeline.StageNode("watch", pipeline.Func[[]byte, []byte](func(_ context.Context, b []byte, emit func([]byte)) error {
		if len(created) > 0 {
			openDuringRun[created[len(created)-1]] = openFiles(t)[created[len(created)-1]]
		}
		emit(b)
		return nil
	})))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("building the graph touched the recording directory: %v", err)
	}
	data, err := os.ReadFile("testdata/chat_reasoning.sse")
	if err != nil {
		t.Fatal(err)
	}
	for i, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async, pipeline.Fused} {
		live := collect(t, g, chunks(data, uint64(i)), mode)
		if len(created) != i+1 {
			t.Fatalf("run %d: %d recordings created, want one per run", i, len(created))
		}
		path := created[i]
		if !openDuringRun[path] {
			t.Errorf("run %d: %s was not open during the run", i, path)
		}
		if openFiles(t)[path] {
			t.Errorf("run %d: %s still open after the run", i, path)
		}
		recorded, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(recorded, data) {
			t.Fatalf("run %d: recording differs from the upstream bytes (%d vs %d bytes, %v)", i, len(recorded), len(data), err)
		}
		if replayed := collect(t, plain, sources.File(path), mode); !cmp.Equal(live, replayed) {
			t.Errorf("run %d: the recording does not replay to the live events", i)
		}
	}
}

// A recording that cannot be created fails the run before it starts, as an
// open error of the tap; the file of a failing run is closed all the same.
func TestRecordNodeErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		g := pipeline.Must(pipeline.New("t", tap.Record(filepath.Join(file, "dir"), "x", nil)))
		sink := sinks.Collect[[]byte]()
		err := pipeline.Run(context.Background(), g, sources.Slice([][]byte{[]byte("a")}), sink, pipeline.WithMode(mode))
		var se *pipeline.StageError
		if !errors.As(err, &se) || se.Stage != tap.Name || se.Lifecycle != pipeline.LifecycleOpen || len(sink.Items()) != 0 {
			t.Errorf("%s: bad directory: %v", mode, err)
		}

		var path string
		boom := errors.New("boom")
		g = pipeline.Must(pipeline.New("t", tap.Record(t.TempDir(), "x", func(p string) { path = p }),
			pipeline.StageNode("fail", pipeline.Func[[]byte, []byte](func(context.Context, []byte, func([]byte)) error { return boom }))))
		if err := pipeline.Run(context.Background(), g, sources.Slice([][]byte{[]byte("a")}), sinks.Discard[[]byte](), pipeline.WithMode(mode)); !errors.Is(err, boom) {
			t.Errorf("%s: %v", mode, err)
		}
		if path == "" || openFiles(t)[path] {
			t.Errorf("%s: recording %q of a failed run not closed", mode, path)
		}
	}
}
