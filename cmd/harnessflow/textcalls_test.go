package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const qwenReply = "<think>Need to list.</think>\nListing now.\n<tool_call>\n<function=exec_command>\n<parameter=cmd>\nls -l\n</parameter>\n<parameter=yield_time_ms>\n1000\n</parameter>\n</function>\n</tool_call>"

func TestParseToolFormat(t *testing.T) {
	type reply struct {
		Content   string `json:"content"`
		Reasoning string `json:"reasoning"`
		Calls     []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			ID        string          `json:"id"`
		} `json:"calls"`
	}
	for _, c := range []struct {
		name string
		args []string
		want string // the call's arguments
	}{
		// Without schemas a raw value stays a string; with the request's
		// tools, yield_time_ms is a number.
		{"untyped", []string{"parse", "--tool-format", "qwen3_coder"}, `{"cmd":"ls -l","yield_time_ms":"1000"}`},
		{"typed", []string{"parse", "--tool-format", "auto", "--tools", "../../testdata/requests/codex_tools.json"}, `{"cmd":"ls -l","yield_time_ms":1000}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := cli(t, qwenReply, c.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var r reply
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if r.Content != "Listing now.\n" || r.Reasoning != "Need to list." || len(r.Calls) != 1 || r.Calls[0].Name != "exec_command" || string(r.Calls[0].Arguments) != c.want || r.Calls[0].ID != "" {
				t.Errorf("reply = %s", out)
			}
		})
	}
}

func TestParseToolFormatErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"parse", "--tool-format", "nope"}, `--tool-format: unknown tool format "nope" (want auto, off or one of: `},
		{[]string{"parse", "--tool-format", "off"}, "--tool-format: off reads nothing"},
		{[]string{"parse", "--tool-format", "hermes", "--harness", "swe-agent"}, "--harness and --tool-format: give one"},
		{[]string{"parse", "--tool-format", "hermes", "--tools", "no/such/file.json"}, "--tools no/such/file.json:"},
		{[]string{"translate", "--wire", "chat", "--tool-format", "hermez", "-"}, `--tool-format: unknown tool format "hermez"`},
		{[]string{"serve", "--tool-format", "hermez"}, `--tool-format: unknown tool format "hermez"`},
		{[]string{"shape", "--wire", "chat", "--tools-in-prompt", "--tool-format", "kimi_k2", "../../testdata/requests/codex_tools.json"}, "--tools-in-prompt: "},
	} {
		code, _, errOut := cli(t, "x", c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

func TestTranslateToolFormat(t *testing.T) {
	const stream = "../../testdata/text-tool-calls/chat_qwen3_coder.sse"
	code, out, errOut := cli(t, "", "translate", "--wire", "chat", stream)
	if code != 0 || strings.Contains(out, `"function_call"`) || !strings.Contains(out, `\u003ctool_call\u003e`) && !strings.Contains(out, "<tool_call>") {
		t.Fatalf("off by default: exit %d, %s\n%s", code, errOut, out)
	}
	for _, format := range []string{"auto", "qwen3_coder"} {
		code, out, errOut = cli(t, "", "translate", "--wire", "chat", "--tool-format", format, "--request", "../../testdata/requests/codex_tools.json", stream)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		for _, want := range []string{
			`"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls -l\"}","call_id":"call_chatcmpl-q1_0"`,
			`"text":"I will list the files.\n"`,
			`"finish_reason":"tool_calls"`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: events lack %s:\n%s", format, want, out)
			}
		}
	}
}

// parse --thinking-open (or a --model whose caps entry says so) reads a
// reply that starts inside the reasoning the prompt opened.
func TestParseThinkingOpen(t *testing.T) {
	const reply = "Check the tree first.</think>\n\n<tool_call>\n{\"name\": \"exec_command\", \"arguments\": {\"cmd\": \"ls\"}}\n</tool_call>"
	for _, args := range [][]string{
		{"parse", "--tool-format", "hermes", "--thinking-open"},
		{"parse", "--tool-format", "auto", "--model", "Qwen/QwQ-32B"},
	} {
		code, out, errOut := cli(t, reply, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if !strings.Contains(out, `"content":""`) || !strings.Contains(out, `"reasoning":"Check the tree first."`) || !strings.Contains(out, `"name":"exec_command"`) {
			t.Errorf("%v: %s", args, out)
		}
	}
	if _, out, _ := cli(t, reply, "parse", "--tool-format", "hermes"); !strings.Contains(out, `"content":"Check the tree first.\u003c/think\u003e`) && !strings.Contains(out, `"content":"Check the tree first.</think>`) {
		t.Errorf("without the flag the reasoning is text: %s", out)
	}
}
