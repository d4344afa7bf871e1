package scripted_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/scripted"
)

// streamedContent reads a streamed chat answer: its content fragments, and
// whether any chunk had tool_calls; and the finish reason.
func streamedContent(t *testing.T, body []byte) (frags []string, toolCalls bool, finish string) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   *string           `json:"content"`
					ToolCalls []json.RawMessage `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil && *ch.Delta.Content != "" {
				frags = append(frags, *ch.Delta.Content)
			}
			toolCalls = toolCalls || len(ch.Delta.ToolCalls) > 0
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	return frags, toolCalls, finish
}

// cutInside reports whether a fragment boundary falls strictly inside an
// occurrence of marker in the joined text.
func cutInside(frags []string, marker string) bool {
	joined := strings.Join(frags, "")
	var cuts []int
	n := 0
	for _, f := range frags {
		n += len(f)
		cuts = append(cuts, n)
	}
	for start := 0; ; {
		i := strings.Index(joined[start:], marker)
		if i < 0 {
			return false
		}
		i += start
		for _, c := range cuts {
			if c > i && c < i+len(marker) {
				return true
			}
		}
		start = i + 1
	}
}

func TestTextToolFormats(t *testing.T) {
	execTool := tool("exec_command", `{"type":"object","properties":{"cmd":{"type":"string"},"yield_time_ms":{"type":"number"}},"required":["cmd"]}`)
	patchTool := tool("apply_patch", `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`)
	patch := "*** Begin Patch\n*** Add File: hello.txt\n+hello from harnessflow\n*** End Patch\n"
	cases := []struct {
		name, format, user string
		want               string // the tool-call text the content ends with
	}{
		{"hermes shell", scripted.TextToolsHermes, "hi",
			"<tool_call>\n{\"name\": \"exec_command\", \"arguments\": {\"cmd\":\"echo hello from harnessflow\"}}\n</tool_call>"},
		{"qwen3_coder shell", scripted.TextToolsQwen3Coder, "hi",
			"<tool_call>\n<function=exec_command>\n<parameter=cmd>\necho hello from harnessflow\n</parameter>\n</function>\n</tool_call>"},
		{"hermes patch", scripted.TextToolsHermes, "apply a patch",
			"<tool_call>\n{\"name\": \"apply_patch\", \"arguments\": {\"input\":" + jsonString(patch) + "}}\n</tool_call>"},
		{"qwen3_coder patch", scripted.TextToolsQwen3Coder, "apply a patch",
			"<tool_call>\n<function=apply_patch>\n<parameter=input>\n" + patch + "\n</parameter>\n</function>\n</tool_call>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := scripted.NewWithOptions(nil, scripted.Options{TextToolFormat: c.format})
			if err != nil {
				t.Fatal(err)
			}
			body := chatRequest(true, []string{execTool, patchTool}, msg("user", c.user))
			w := serve(t, h, http.MethodPost, "/v1/chat/completions", body)
			frags, toolCalls, finish := streamedContent(t, w.Body.Bytes())
			joined := strings.Join(frags, "")
			if toolCalls || finish != "stop" {
				t.Errorf("tool_calls deltas %v, finish %q: want none and stop", toolCalls, finish)
			}
			if !strings.HasSuffix(joined, c.want) {
				t.Errorf("content:\n%q\nwant it to end with\n%q", joined, c.want)
			}
			for _, marker := range []string{"<tool_call>", "</tool_call>"} {
				if !cutInside(frags, marker) {
					t.Errorf("no fragment boundary inside %s: %q", marker, frags)
				}
			}
			// The unary answer carries the same text.
			u := unaryChat(t, h, chatRequest(false, []string{execTool, patchTool}, msg("user", c.user)))
			if len(u.calls) != 0 || !strings.HasSuffix(u.content, c.want) {
				t.Errorf("unary answer %+v", u)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestRejectTools: a request with tools is refused as a server without
// tool support refuses it; one without tools whose prompt lists them is
// answered with a call written as text.
func TestRejectTools(t *testing.T) {
	execTool := tool("exec_command", `{"type":"object","properties":{"cmd":{"type":"string"}}}`)
	h, err := scripted.NewWithOptions(nil, scripted.Options{RejectTools: true, TextToolFormat: scripted.TextToolsQwen3Coder})
	if err != nil {
		t.Fatal(err)
	}
	w := serve(t, h, http.MethodPost, "/v1/chat/completions", chatRequest(true, []string{execTool}, user))
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"message":"tools are not supported"`) {
		t.Errorf("chat with tools: %d %s", w.Code, w.Body)
	}
	mw := serve(t, h, http.MethodPost, "/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"Bash","input_schema":{"type":"object"}}]}`)
	if mw.Code != http.StatusBadRequest || !strings.Contains(mw.Body.String(), "tools are not supported") {
		t.Errorf("messages with tools: %d %s", mw.Code, mw.Body)
	}
	prompts := []struct{ name, system, want string }{
		{"hermes listing", "You may call these tools.\n<tools>\n" +
			`{"type": "function", "function": {"name": "exec_command", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}}` +
			"\n</tools>\nCall them like this: <tool_call>…</tool_call>",
			"<parameter=cmd>\necho hello from harnessflow\n</parameter>"},
		{"xml listing", "Tools:\n<tools>\n<function>\n<name>shell</name>\n<description>Runs a command.</description>\n<parameters>\n" +
			"<parameter>\n<name>command</name>\n<type>array</type>\n</parameter>\n</parameters>\n</function>\n</tools>",
			"<function=shell>\n<parameter=command>\n[\"echo\",\"hello\",\"from\",\"harnessflow\"]\n</parameter>"},
	}
	for _, p := range prompts {
		t.Run(p.name, func(t *testing.T) {
			r := unaryChat(t, h, chatRequest(false, nil, msg("system", p.system), msg("user", "hi")))
			if len(r.calls) != 0 || !strings.Contains(r.content, p.want) {
				t.Errorf("answer %+v, want text holding %q", r, p.want)
			}
		})
	}
	// The call's output comes back as text: the final answer quotes it.
	listing := "<tools>\n" + `{"name": "exec_command", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}` + "\n</tools>"
	r := unaryChat(t, h, chatRequest(false, nil, msg("system", listing), msg("user", "hi"),
		msg("assistant", "<tool_call>\n{\"name\": \"exec_command\", \"arguments\": {\"cmd\": \"echo hi\"}}\n</tool_call>"),
		msg("user", "<tool_response>\nout-456\n</tool_response>")))
	if strings.Contains(r.content, "<tool_call>") || !strings.Contains(r.content, "out-456") {
		t.Errorf("after a text tool result: %+v, want a final text quoting it", r)
	}
	// Without a listing there is nothing to call: the greeting.
	r = unaryChat(t, h, chatRequest(false, nil, msg("user", "hi")))
	if len(r.calls) != 0 || strings.Contains(r.content, "<tool_call>") {
		t.Errorf("no tools anywhere: %+v", r)
	}
	if _, err := scripted.NewWithOptions(nil, scripted.Options{TextToolFormat: "xml"}); err == nil || !strings.Contains(err.Error(), "hermes or qwen3_coder") {
		t.Errorf("unknown format: %v", err)
	}
}

// TestTextToolsLlamaAndThinking: llama3_json answers with the bare JSON
// calls and nothing else; qwen3_thinking starts every answer inside the
// reasoning block the prompt opened (closed by </think>, cut across
// fragments), then the text and the hermes calls.
func TestTextToolsLlamaAndThinking(t *testing.T) {
	execTool := tool("exec_command", `{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}`)
	hermesCall := "<tool_call>\n{\"name\": \"exec_command\", \"arguments\": {\"cmd\":\"echo hello from harnessflow\"}}\n</tool_call>"
	// The default script's first turn has reasoning: it comes first in
	// the content.
	const think = "I can run commands here. I will run a harmless one first.</think>\n\nLet me run a quick command.\n\n"
	for _, c := range []struct {
		format, prefix, suffix string
		exact                  bool
		cut                    string
	}{
		{scripted.TextToolsLlama3JSON, "", `{"name": "exec_command", "parameters": {"cmd":"echo hello from harnessflow"}}`, true, `"parameters"`},
		{scripted.TextToolsQwen3Thinking, think, hermesCall, false, "</think>"},
	} {
		t.Run(c.format, func(t *testing.T) {
			h, err := scripted.NewWithOptions(nil, scripted.Options{TextToolFormat: c.format})
			if err != nil {
				t.Fatal(err)
			}
			w := serve(t, h, http.MethodPost, "/v1/chat/completions", chatRequest(true, []string{execTool}, msg("user", "hi")))
			frags, toolCalls, finish := streamedContent(t, w.Body.Bytes())
			joined := strings.Join(frags, "")
			if toolCalls || finish != "stop" {
				t.Errorf("tool_calls deltas %v, finish %q: want none and stop", toolCalls, finish)
			}
			if !strings.HasPrefix(joined, c.prefix) || !strings.HasSuffix(joined, c.suffix) || (c.exact && joined != c.suffix) {
				t.Errorf("content:\n%q\nwant %q … %q", joined, c.prefix, c.suffix)
			}
			if !cutInside(frags, c.cut) {
				t.Errorf("no fragment boundary inside %s: %q", c.cut, frags)
			}
			u := unaryChat(t, h, chatRequest(false, []string{execTool}, msg("user", "hi")))
			if len(u.calls) != 0 || u.content != joined {
				t.Errorf("unary answer %+v, want the streamed content", u)
			}
		})
	}
	if err := (scripted.Options{TextToolFormat: "llama4"}).Check(); err == nil || !strings.Contains(err.Error(), "llama3_json") {
		t.Errorf("Check of an unknown format: %v", err)
	}
}
