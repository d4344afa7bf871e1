package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
)

func cli(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func events(t *testing.T, jsonl string) []protocol.ResponseEvent {
	t.Helper()
	var evs []protocol.ResponseEvent
	for _, line := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		var ev protocol.ResponseEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestHelp(t *testing.T) {
	code, out, _ := cli(t, "", "--help")
	if code != exitOK || !strings.Contains(out, "translate") || !strings.Contains(out, "graph") {
		t.Fatalf("code %d, out %q", code, out)
	}
	if code, _, errOut := cli(t, "", "frobnicate"); code != exitUsage || !strings.Contains(errOut, "unknown command") {
		t.Fatalf("unknown command: %d %q", code, errOut)
	}
	if code, _, _ := cli(t, "", "translate", "--help"); code != exitOK {
		t.Fatalf("translate --help: %d", code)
	}
}

func TestTranslateRecordedStreams(t *testing.T) {
	tests := []struct {
		wire, file string
		calls      []string
	}{
		{"chat", "chat_parallel_tools.sse", []string{"read_file", "grep", "list_dir"}},
		{"messages", "anthropic_tool_use.sse", []string{"bash"}},
		{"responses", "responses_tools.sse", nil},
	}
	for _, tt := range tests {
		for _, mode := range []string{"fused", "async"} {
			t.Run(tt.file+"/"+mode, func(t *testing.T) {
				code, out, errOut := cli(t, "", "translate", "--wire", tt.wire, "--mode", mode, "../../testdata/streams/"+tt.file)
				if code != exitOK {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				evs := events(t, out)
				if last := evs[len(evs)-1]; last.Type != protocol.EventCompleted {
					t.Fatalf("last event %s", last.Type)
				}
				var calls []string
				for _, ev := range evs {
					if fc, ok := ev.Item.(*protocol.FunctionCall); ok && ev.Type == protocol.EventOutputItemDone {
						calls = append(calls, fc.Name)
					}
				}
				if tt.calls != nil && strings.Join(calls, ",") != strings.Join(tt.calls, ",") {
					t.Fatalf("calls %v, want %v", calls, tt.calls)
				}
			})
		}
	}
}

func TestTranslateStdinAndErrors(t *testing.T) {
	stream := "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	code, out, _ := cli(t, stream, "translate", "--wire", "chat", "-")
	if code != exitOK || !strings.Contains(out, `"delta":"hi"`) {
		t.Fatalf("stdin: %d %q", code, out)
	}

	bad := "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {\"id\": broken\n\n"
	code, _, errOut := cli(t, bad, "translate", "--wire", "chat")
	if code != exitUsage {
		t.Fatalf("malformed: exit %d", code)
	}
	if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "stdin") || !strings.Contains(errOut, "byte") {
		t.Fatalf("malformed input should give one line naming input and offset, got %q", errOut)
	}

	for _, args := range [][]string{
		{"translate", "x.sse"},                                      // no --wire
		{"translate", "--wire", "smoke", "x.sse"},                   // bad wire
		{"translate", "--wire", "chat", "--mode", "turbo"},          // bad mode
		{"translate", "--wire", "messages", "--harness", "minimal"}, // no route
		{"translate", "--wire", "chat", "does-not-exist.sse"},
	} {
		if code, _, errOut := cli(t, "", args...); code != exitUsage || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

func TestGraphAndHarnesses(t *testing.T) {
	code, out, _ := cli(t, "", "harnesses")
	if code != exitOK || !strings.Contains(out, "native") {
		t.Fatalf("harnesses: %d %q", code, out)
	}
	for format, marker := range map[string]string{"text": "chat.finalize", "mermaid": "flowchart LR", "dot": "digraph"} {
		code, out, errOut := cli(t, "", "graph", "native", "--format", format)
		if code != exitOK || !strings.Contains(out, marker) || !strings.Contains(out, "sse.decode") {
			t.Fatalf("graph --format %s: %d %q %q", format, code, out, errOut)
		}
	}
	code, out, _ = cli(t, "", "graph", "native", "--direction", "request")
	if code != exitOK || !strings.Contains(out, "request.history") {
		t.Fatalf("request graph: %d %q", code, out)
	}
	// The graph is the one of the route: native has none on messages.
	code, _, errOut := cli(t, "", "graph", "native", "--wire", "messages")
	if code != exitUsage || !strings.Contains(errOut, `wire_api = "messages" requires a harness-native transport`) {
		t.Fatalf("messages graph: %d %q", code, errOut)
	}
	code, out, _ = cli(t, "", "graph", "minimal", "--direction", "request")
	if code != exitOK || !strings.Contains(out, "request.history") {
		t.Fatalf("minimal request graph: %d %q", code, out)
	}
	for _, args := range [][]string{
		{"graph"},
		{"graph", "nope"},
		{"graph", "native", "--format", "png"},
		{"graph", "native", "--direction", "sideways"},
	} {
		if code, _, _ := cli(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

func TestTranslateExtensions(t *testing.T) {
	stream := "data: {\"choices\":[{\"delta\":{\"content\":\"key sk-proj-Ab3dEf6h\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"Ij9kLm2nOp5qRs8tUv1wXy4z ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	dir := t.TempDir()
	code, out, errOut := cli(t, stream, "translate", "--wire", "chat", "--redact", "--record", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "Ij9kLm2nOp5qRs8t") || !strings.Contains(out, "[REDACTED:api_key] ok") {
		t.Fatalf("secret not redacted:\n%s", out)
	}
	// The recording replays to the same events as the live run.
	_, path, ok := strings.Cut(strings.TrimSpace(errOut), "recording upstream bytes to ")
	if !ok {
		t.Fatalf("no recording path in %q", errOut)
	}
	code, replay, errOut := cli(t, "", "translate", "--wire", "chat", "--redact", path)
	if code != exitOK || replay != out {
		t.Fatalf("replay differs (exit %d, %s):\n%s\nvs live:\n%s", code, errOut, replay, out)
	}
	if code, _, errOut := cli(t, stream, "translate", "--wire", "chat", "--redact-pattern", "("); code != exitUsage || !strings.Contains(errOut, "--redact-pattern") {
		t.Fatalf("bad pattern: %d %q", code, errOut)
	}
}
