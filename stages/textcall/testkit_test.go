package textcall

import (
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// This file is the test kit every format's tests use: replay of one input
// whole, byte by byte and in random chunks (the events must be the same),
// golden archives, and a fuzz body.

var update = flag.Bool("update", false, "rewrite want.json in the golden archives of testdata/")

// coalesce merges adjacent events of the same text kind, so that the
// events of two replays cut differently can be compared.
func coalesce(events []Event) []Event {
	var out []Event
	for _, e := range events {
		if n := len(out); n > 0 && out[n-1].Kind == e.Kind && (e.Kind == Text || e.Kind == Reasoning || e.Kind == CallArgs) {
			out[n-1].Text += e.Text
			continue
		}
		if (e.Kind == Text || e.Kind == Reasoning || e.Kind == CallArgs) && e.Text == "" {
			continue
		}
		out = append(out, e)
	}
	return out
}

// feed runs a new parser over input cut into pieces of the given sizes
// (the rest whole), then closes it.
func feed(t testing.TB, newParser func() Parser, input string, sizes []int) []Event {
	t.Helper()
	p := newParser()
	var out []Event
	for _, n := range sizes {
		if n > len(input) {
			n = len(input)
		}
		out = p.Feed(out, input[:n])
		input = input[n:]
	}
	if input != "" {
		out = p.Feed(out, input)
	}
	return p.Close(out)
}

// ones returns n sizes of 1.
func ones(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// randomSizes cuts n bytes into random pieces of 1..max.
func randomSizes(rng *rand.Rand, n, max int) []int {
	var s []int
	for n > 0 {
		k := 1 + rng.IntN(max)
		s = append(s, k)
		n -= k
	}
	return s
}

// replay parses input whole, byte by byte and in random chunks, fails the
// test when the coalesced events differ, and returns them.
func replay(t testing.TB, newParser func() Parser, input string) []Event {
	t.Helper()
	whole := coalesce(feed(t, newParser, input, nil))
	if d := cmp.Diff(whole, coalesce(feed(t, newParser, input, ones(len(input))))); d != "" {
		t.Fatalf("byte-at-a-time replay differs from whole (-whole +bytes):\n%s\ninput: %q", d, input)
	}
	rng := rand.New(rand.NewPCG(uint64(len(input)), 7))
	for i := 0; i < 8; i++ {
		if d := cmp.Diff(whole, coalesce(feed(t, newParser, input, randomSizes(rng, len(input), 1+rng.IntN(16))))); d != "" {
			t.Fatalf("random-chunk replay %d differs from whole (-whole +chunks):\n%s\ninput: %q", i, d, input)
		}
	}
	return whole
}

// parserFor returns a factory of the named format's (or auto's) parsers.
func parserFor(t testing.TB, name string, cfg Config) func() Parser {
	t.Helper()
	if _, err := NewParser(name, cfg); err != nil {
		t.Fatal(err)
	}
	return func() Parser { p, _ := NewParser(name, cfg); return p }
}

// schemasFor reads a tools.json: a chat "tools" array.
func schemasFor(t testing.TB, data []byte) Schemas {
	t.Helper()
	if data == nil {
		return nil
	}
	s, err := SchemasFromChatTools(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// replyCase is one table case of a format: the reply the model wrote and
// what it amounts to.
type replyCase struct {
	name  string
	input string
	tools string // a chat tools array, for typing ("" none)
	model string
	want  Reply
}

// runReplyCases replays every case through format and compares the Reply.
func runReplyCases(t *testing.T, format string, cases []replyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tools []byte
			if c.tools != "" {
				tools = []byte(c.tools)
			}
			cfg := Config{Schemas: schemasFor(t, tools), Model: c.model}
			got, err := Collect(replay(t, parserFor(t, format, cfg), c.input))
			if err != nil {
				t.Fatal(err)
			}
			if d := diffReply(t, c.want, got); d != "" {
				t.Errorf("reply (-want +got):\n%s", d)
			}
		})
	}
}

// normalize compacts the arguments of r's calls so that white space in a
// table's expectations does not matter.
func normalize(t testing.TB, r Reply) Reply {
	t.Helper()
	calls := make([]Call, len(r.Calls))
	for i, c := range r.Calls {
		var v any
		if err := json.Unmarshal(c.Arguments, &v); err != nil {
			t.Fatalf("call %d arguments: %v", i, err)
		}
		b, _ := json.Marshal(v)
		c.Arguments = b
		calls[i] = c
	}
	r.Calls = calls
	return r
}

// runGoldens replays testdata/DIR/*.txtar through format: each archive
// holds input.txt (the model's reply; its final newline is dropped unless
// the comment says keep-final-newline), optionally tools.json (a chat tools
// array) and model.txt, and want.json (the Reply). A comment that says
// thinking-open reads the reply through a Reader whose prompt opened a
// reasoning block. -update rewrites want.json.
func runGoldens(t *testing.T, dir, format string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if len(paths) == 0 {
		t.Fatalf("no golden archives in testdata/%s", dir)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			file := func(name string) []byte {
				for _, f := range ar.Files {
					if f.Name == name {
						return f.Data
					}
				}
				return nil
			}
			input := string(file("input.txt"))
			if !strings.Contains(string(ar.Comment), "keep-final-newline") {
				input = strings.TrimSuffix(input, "\n")
			}
			cfg := Config{Schemas: schemasFor(t, file("tools.json")), Model: strings.TrimSpace(string(file("model.txt")))}
			var got Reply
			if strings.Contains(string(ar.Comment), "thinking-open") {
				// The prompt opened a reasoning block: read through a Reader.
				got = replayReader(t, ReaderOptions{Format: format, Config: cfg, ThinkingOpen: true}, input)
			} else if got, err = Collect(replay(t, parserFor(t, format, cfg), input)); err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.MarshalIndent(got, "", "  ")
			gotJSON = append(gotJSON, '\n')
			if *update {
				var files []txtar.File
				for _, f := range ar.Files {
					if f.Name != "want.json" {
						files = append(files, f)
					}
				}
				ar.Files = append(files, txtar.File{Name: "want.json", Data: gotJSON})
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := file("want.json")
			if want == nil {
				t.Fatal("no want.json (run with -update)")
			}
			var w Reply
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatalf("want.json: %v", err)
			}
			if d := diffReply(t, w, got); d != "" {
				t.Errorf("reply (-want +got):\n%s", d)
			}
		})
	}
}

// fuzzFormat is the body of a format's fuzz target: any input, cut
// anywhere, gives the same events as whole, never breaks the event
// contract, and never loses text: when nothing was recovered and nothing
// is reasoning, the text given back is the input (for formats that only
// take markup out, preserves is true).
func fuzzFormat(f *testing.F, format string, preserves bool, seeds ...string) {
	for _, s := range seeds {
		f.Add(s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, input string, seed uint64) {
		newParser := func() Parser { p, _ := NewParser(format, Config{}); return p }
		whole := coalesce(feed(t, newParser, input, nil))
		rng := rand.New(rand.NewPCG(seed, 3))
		if d := cmp.Diff(whole, coalesce(feed(t, newParser, input, randomSizes(rng, len(input), 1+rng.IntN(8))))); d != "" {
			t.Fatalf("chunked replay differs (-whole +chunks):\n%s", d)
		}
		rep, err := Collect(whole)
		if err != nil {
			t.Fatal(err)
		}
		if preserves && len(rep.Calls) == 0 && rep.Reasoning == "" && rep.Content != input {
			t.Fatalf("text lost: got %q from %q", rep.Content, input)
		}
	})
}

// fmtCall is a recovered call for the tables.
func fmtCall(name, args string) Call { return Call{Name: name, Arguments: json.RawMessage(args)} }

// diffReply compares two replies with the arguments compacted (a nil
// Calls wants none).
func diffReply(t testing.TB, want, got Reply) string {
	t.Helper()
	if want.Calls == nil {
		want.Calls = []Call{}
	}
	return cmp.Diff(normalize(t, want), normalize(t, got))
}

// readReply parses input through a Reader with opts, fed in pieces of the
// given sizes (the rest whole), and returns the reply and the reader.
func readReply(t testing.TB, opts ReaderOptions, input string, sizes []int) (Reply, *Reader) {
	t.Helper()
	r, err := NewReader(opts)
	if err != nil {
		t.Fatal(err)
	}
	var events []Event
	for _, n := range sizes {
		n = min(n, len(input))
		events = r.Content(events, input[:n])
		input = input[n:]
	}
	got, err := Collect(r.Close(r.Content(events, input)))
	if err != nil {
		t.Fatal(err)
	}
	return got, r
}

// autoReply parses input with auto (told the model name) through a
// Reader, checks that auto gives the same events whole, byte by byte and
// in chunks, and returns the format auto chose ("" none) and the reply.
func autoReply(t testing.TB, model, input string) (string, Reply) {
	t.Helper()
	replay(t, parserFor(t, Auto, Config{Model: model}), input)
	rep, r := readReply(t, ReaderOptions{Format: Auto, Config: Config{Model: model}}, input, nil)
	return r.Chosen(), rep
}

// checkQuiet feeds input in pieces of the given sizes and fails when
// Quiet says a piece passes unchanged but Feed does otherwise. It returns
// the events and the input left after the pieces.
func checkQuiet(t testing.TB, p Parser, input string, sizes []int) ([]Event, string) {
	t.Helper()
	var all []Event
	for _, n := range sizes {
		n = min(n, len(input))
		piece := input[:n]
		input = input[n:]
		quiet := p.Quiet(piece)
		got := p.Feed(nil, piece)
		if quiet && piece != "" && (len(got) != 1 || got[0].Kind != Text || got[0].Text != piece) {
			t.Fatalf("Quiet(%q) but Feed gave %+v", piece, got)
		}
		all = append(all, got...)
	}
	return all, input
}

// assertStreamed checks that out begins a call and carries its first
// argument fragment.
func assertStreamed(t *testing.T, out []Event, name, id, args string) {
	t.Helper()
	var got strings.Builder
	begun := false
	for _, e := range out {
		switch e.Kind {
		case CallBegin:
			begun = e.Name == name && e.ID == id
		case CallArgs:
			got.WriteString(e.Text)
		case CallEnd, Malformed:
			t.Fatalf("call ended before its end marker: %+v", out)
		}
	}
	if !begun || got.String() != args {
		t.Fatalf("want call %s (%s) with arguments %q so far, got %+v", name, id, args, out)
	}
}
