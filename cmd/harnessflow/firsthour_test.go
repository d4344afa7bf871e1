package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
)

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Every command that takes a harness name refuses one this build does not
// serve, with the same message (the nearest name, every available one),
// and a harness on a wire it does not shape, with the flag that fixes it.
func TestUnknownHarnessRefusedEverywhere(t *testing.T) {
	req := filepath.Join("..", "..", "testdata", "requests", "codex_tools.json")
	stream := filepath.Join("..", "..", "testdata", "streams", "chat_reasoning.sse")
	unknown := `unknown harness "kimi_cli" (did you mean "kimi-cli"? available: ` + strings.Join(harnessNames(), ", ") + ")"
	cases := []struct {
		args []string
		want string // the first line of stderr
	}{
		{[]string{"shape", "--wire", "chat", "--harness", "kimi_cli", req}, "harnessflow shape: --harness: " + unknown},
		{[]string{"translate", "--wire", "chat", "--harness", "kimi_cli", stream}, "harnessflow translate: --harness: " + unknown},
		{[]string{"translate", "--wire", "chat", "--harness", "kimi_cli", "--request", req, stream}, "harnessflow translate: --harness: " + unknown},
		{[]string{"bench", "--harness", "kimi_cli", "--iterations", "1"}, "harnessflow bench: --harness: " + unknown},
		{[]string{"graph", "kimi_cli"}, "harnessflow graph: " + unknown},
		{[]string{"parse", "--harness", "kimi_cli"}, "harnessflow parse: --harness: " + unknown},
		{[]string{"shape", "--wire", "chat", "--harness", "nosuch", req}, `harnessflow shape: --harness: unknown harness "nosuch" (available: ` + strings.Join(harnessNames(), ", ") + ")"},
		// A harness on a wire it does not shape: the fix, not the native route.
		{[]string{"shape", "--wire", "chat", "--harness", "zcode", req}, `harnessflow shape: --harness: harness "zcode" does not shape chat requests (it shapes messages); use --wire messages`},
		{[]string{"translate", "--wire", "responses", "--harness", "kimi-cli", stream}, `harnessflow translate: --harness: harness "kimi-cli" does not shape responses requests (it shapes chat); use --wire chat`},
		{[]string{"bench", "--wire", "chat", "--harness", "zcode", "--iterations", "1"}, `harnessflow bench: --harness: harness "zcode" does not shape chat requests (it shapes messages); use --wire messages`},
		{[]string{"graph", "kimi-cli", "--wire", "responses"}, `harnessflow graph: harness "kimi-cli" does not shape responses requests (it shapes chat); use --wire chat`},
	}
	for _, c := range cases {
		code, out, errOut := cli(t, "", c.args...)
		if code != exitUsage || out != "" || firstLine(errOut) != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errOut, c.want)
		}
	}
	// A name of the routing table that no package of this build registers
	// gets the same message from graph and translate.
	for _, name := range harness.KnownNames() {
		if _, ok := harness.Lookup(name); ok {
			continue
		}
		_, _, g := cli(t, "", "graph", name)
		_, _, tr := cli(t, "", "translate", "--wire", "chat", "--harness", name, stream)
		want := `unknown harness "` + name + `" (not in this build; available: `
		if !strings.Contains(g, want) || strings.TrimPrefix(firstLine(g), "harnessflow graph: ") != strings.TrimPrefix(firstLine(tr), "harnessflow translate: --harness: ") {
			t.Errorf("%s: graph says %q, translate %q", name, g, tr)
		}
	}
	// zcode's graph defaults to the wire it shapes.
	if code, out, errOut := cli(t, "", "graph", "zcode"); code != exitOK || !strings.Contains(out, "anthropic") {
		t.Errorf("graph zcode: %d %q %q", code, out, errOut)
	}
}

// translate refuses, with exit status 2 and one line saying what it found
// and the flag that reads it, input that is not SSE, not one JSON body with
// --unary, or a stream of another wire.
func TestTranslateNamesTheInput(t *testing.T) {
	streams := filepath.Join("..", "..", "testdata", "streams")
	cases := []struct {
		name  string
		args  []string
		stdin string
		want  []string // parts of the one error line
	}{
		{"html page", []string{"--wire", "chat"}, "<!DOCTYPE html>\n<html><body>login</body></html>\n", []string{"stdin: not an SSE stream: line 1 starts \"<!DOCTYPE html>\"", "an HTML or XML page", "--unary"}},
		{"readme", []string{"--wire", "chat", filepath.Join("..", "..", "README.md")}, "", []string{"README.md: not an SSE stream: line 1 starts \"# harnessflow\" (text)"}},
		{"json body without --unary", []string{"--wire", "chat"}, `{"id":"c1","object":"chat.completion","choices":[]}`, []string{"(JSON, not SSE); for one non-streaming response body use --unary"}},
		{"{bad", []string{"--wire", "chat"}, "{bad\n", []string{`line 1 starts "{bad" (JSON, not SSE)`, "--unary"}},
		{"comment then html", []string{"--wire", "messages"}, ": keep-alive\n\n<html>\n", []string{"line 3 starts \"<html>\""}},
		{"messages as chat", []string{"--wire", "chat", filepath.Join(streams, "anthropic_tool_use.sse")}, "", []string{"this is a messages stream (its first event is message_start), not chat: use --wire messages"}},
		{"responses as chat", []string{"--wire", "chat", filepath.Join(streams, "responses_tools.sse")}, "", []string{"this is a responses stream (its first event is response.created), not chat: use --wire responses"}},
		{"chat as messages", []string{"--wire", "messages", filepath.Join(streams, "chat_parallel_tools.sse")}, "", []string{"this is a chat stream", "not messages: use --wire chat"}},
		{"chat as responses", []string{"--wire", "responses", filepath.Join(streams, "chat_reasoning.sse")}, "", []string{"not responses: use --wire chat"}},
		{"messages data without event lines", []string{"--wire", "responses"}, "data: {\"type\":\"message_start\",\"message\":{}}\n\n", []string{`this is a messages stream (its first data is "type":"message_start"), not responses: use --wire messages`}},
		{"sse with --unary", []string{"--wire", "chat", "--unary"}, "data: {\"choices\":[]}\n\n", []string{"this is an SSE stream", "drop --unary"}},
		{"html with --unary", []string{"--wire", "chat", "--unary"}, "<html></html>", []string{"not a JSON response body", "an HTML or XML page"}},
		{"messages body as chat", []string{"--wire", "chat", "--unary"}, `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}]}`, []string{`this is a messages response body ("type":"message"), not chat: --unary reads chat bodies only`}},
		{"responses body as chat", []string{"--wire", "chat", "--unary"}, `{"id":"r","object":"response","output":[]}`, []string{`this is a responses response body ("object":"response"), not chat: --unary reads chat bodies only`}},
		{"empty --unary", []string{"--wire", "chat", "--unary"}, "", []string{"empty input"}},
	}
	for _, c := range cases {
		code, out, errOut := cli(t, c.stdin, append([]string{"translate"}, c.args...)...)
		if code != exitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "harnessflow translate: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line", c.name, code, out, errOut)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr %q lacks %q", c.name, errOut, w)
			}
		}
	}
	// The right wire still translates, from a file and from stdin, with
	// the SSE fields and comments that may come before the first data.
	data, err := os.ReadFile(filepath.Join(streams, "anthropic_tool_use.sse"))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{string(data), ": proxy comment\nretry: 1000\n\n" + string(data), "\uFEFF" + string(data)} {
		code, out, errOut := cli(t, in, "translate", "--wire", "messages")
		if code != exitOK || !strings.Contains(out, `"type":"completed"`) {
			t.Errorf("messages stream: exit %d, stderr %q", code, errOut)
		}
	}
	code, out, errOut := cli(t, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`, "translate", "--wire", "chat", "--unary")
	if code != exitOK || !strings.Contains(out, `"type":"completed"`) {
		t.Errorf("unary chat body: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// Usage errors: one line naming the problem, then a short usage (not the
// whole flag list); --help prints the whole usage with exit status 0.
func TestUsageErrorsNameTheProblem(t *testing.T) {
	cases := []struct {
		args []string
		want string // the first line
	}{
		{[]string{"translate", "x.sse"}, "harnessflow translate: missing --wire (the input's wire: responses, chat or messages)"},
		{[]string{"translate", "--wire", "chat", "a.sse", "b.sse"}, `harnessflow translate: unexpected argument "b.sse" (one input at most)`},
		{[]string{"translate", "--wire", "chat", "--frob"}, "harnessflow translate: unknown flag --frob"},
		{[]string{"translate", "--wire"}, "harnessflow translate: flag --wire needs a value"},
		{[]string{"shape", "req.json"}, "harnessflow shape: missing --wire (the upstream's wire: responses, chat or messages)"},
		{[]string{"shape", "--wire", "chat", "a", "b"}, `harnessflow shape: unexpected argument "b" (one input at most)`},
		{[]string{"parse"}, "harnessflow parse: missing --harness (one of: " + strings.Join(parserNames(), ", ") + ")"},
		{[]string{"graph"}, "harnessflow graph: missing NAME (a harness: " + strings.Join(harnessNames(), ", ") + ")"},
		{[]string{"graph", "native", "minimal"}, `harnessflow graph: unexpected argument "minimal" (one harness name)`},
		{[]string{"harnesses", "extra"}, `harnessflow harnesses: unexpected argument "extra" (this command takes none)`},
		{[]string{"serve", "extra"}, `harnessflow serve: unexpected argument "extra" (this command takes none)`},
		{[]string{"serve", "--nope"}, "harnessflow serve: unknown flag --nope"},
		{[]string{"mock-upstream", "extra"}, `harnessflow mock-upstream: unexpected argument "extra" (this command takes none)`},
		{[]string{"bench", "extra"}, `harnessflow bench: unexpected argument "extra" (bench takes flags only)`},
		{[]string{"bench", "--iterations", "x"}, `harnessflow bench: invalid value "x" for flag --iterations: parse error`},
		{[]string{"version", "extra"}, `harnessflow version: unexpected argument "extra" (this command takes none)`},
	}
	for _, c := range cases {
		code, out, errOut := cli(t, "", c.args...)
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != exitUsage || out != "" || lines[0] != c.want || len(lines) > 5 || !strings.HasPrefix(lines[1], "Usage: harnessflow ") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, %q and a short usage", c.args, code, errOut, c.want)
		}
	}
	for _, cmd := range [][]string{{"harnesses"}, {"translate"}, {"shape"}, {"parse"}, {"graph"}, {"serve"}, {"mock-upstream"}, {"bench"}} {
		code, _, errOut := cli(t, "", append(cmd, "--help")...)
		if code != exitOK || !strings.HasPrefix(errOut, "Usage: harnessflow "+strings.Join(cmd, " ")) || strings.Count(errOut, "\n") < 4 {
			t.Errorf("%v --help: exit %d, %q", cmd, code, errOut)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errOut := cli(t, "", args...)
		if code != exitOK || !strings.HasPrefix(out, "harnessflow ") || strings.Count(out, "\n") != 1 || errOut != "" {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errOut)
		}
	}
}

// parse names the harnesses that have a text-protocol parser.
func TestParseNamesTheParsers(t *testing.T) {
	code, _, errOut := cli(t, "reply", "parse", "--harness", "minimal")
	want := "harnessflow parse: --harness: minimal writes its tool calls as function calls and has no text-protocol parser; the harnesses with one: " + strings.Join(parserNames(), ", ") + "\n"
	if code != exitUsage || errOut != want {
		t.Errorf("exit %d, %q; want %q", code, errOut, want)
	}
	for _, name := range []string{harness.NameSWEAgent, harness.NameMiniSWEAgent, harness.NameTerminus2} {
		if !strings.Contains(want, name) {
			t.Errorf("%s has no parser listed", name)
		}
	}
	code, _, errOut = cli(t, "", "parse", "--help")
	if code != exitOK || !strings.Contains(errOut, "terminus-2 json (default) or xml") {
		t.Errorf("parse --help: %q", errOut)
	}
}

// A port in use names --listen.
func TestPortInUseSuggestsListen(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for name, run := range map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{"serve": runServe, "mock-upstream": runMockUpstream} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"--listen", busy.Addr().String()}, nil, &out, &errb)
		if code != exitError || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "address already in use") ||
			!strings.Contains(errb.String(), "pick another address with --listen") {
			t.Errorf("%s: exit %d, stderr %q", name, code, errb.String())
		}
	}
}

// bench: --iterations 0 and a short --chunks are refused; a corpus
// directory contributes only the streams of --wire (the others named); a
// file of another wire is refused; bench proxy, now a command of its own,
// is pointed at in one line.
func TestBenchRefusals(t *testing.T) {
	streams := filepath.Join("..", "..", "testdata", "streams")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--iterations", "0"}, "harnessflow bench: --iterations 0: want at least 1 (leave it out to measure for --duration)"},
		{[]string{"--duration", "0s"}, "harnessflow bench: --duration 0s: want a positive duration"},
		{[]string{"--chunks", "199"}, "harnessflow bench: --chunks 199: want at least 200"},
		{[]string{"--wire", "chat", "--corpus", filepath.Join(streams, "anthropic_tool_use.sse"), "--iterations", "1"},
			"is a messages stream (its first event is message_start), not chat: use --wire messages"},
	} {
		code, _, errOut := benchCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(firstLine(errOut), c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errOut, c.want)
		}
	}
	code, out, errOut := benchCLI(t, "--wire", "chat", "--corpus", streams, "--iterations", "1", "--mode", "fused", "--vs", "none")
	if code != exitOK {
		t.Fatalf("mixed corpus: exit %d: %s", code, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(streams, "*.sse"))
	chat := fmt.Sprint(len(files) - 2) // all but the messages and the responses stream
	if !strings.Contains(errOut, "skipping the streams of other wires than chat: anthropic_tool_use.sse (messages), responses_tools.sse (responses)") ||
		!strings.Contains(out, "("+chat+" chat stream(s))") || !strings.Contains(out, chat+" input(s)") {
		t.Errorf("mixed corpus: stderr %q\n%s", errOut, out)
	}
	for _, args := range [][]string{{"bench", "proxy"}, {"bench", "proxy", "--streams", "1000"}} {
		code, out, errOut := cli(t, "", args...)
		if code != exitUsage || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "harnessflow-load") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming harnessflow-load", args, code, out, errOut)
		}
	}
	_, _, help := cli(t, "", "bench", "--help")
	if strings.Contains(help, "-chunks go test") || !strings.Contains(help, "at least 200") || !strings.Contains(help, "-wide") {
		t.Errorf("bench --help:\n%s", help)
	}
}
