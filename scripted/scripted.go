// Package scripted is a deterministic Chat Completions model server for
// offline use and tests: `harnessflow serve` runs it in-process when no
// upstream is configured, and `harnessflow mock-upstream` serves it alone.
//
// It answers POST /v1/chat/completions (and /chat/completions): streamed as
// SSE chunks ending with "data: [DONE]" (and a usage chunk when the request
// sets stream_options.include_usage), or as one chat.completion JSON when
// "stream" is false. Text, reasoning and tool-call arguments are cut into
// small fragments so that every answer exercises a real stream parser.
// POST /v1/messages (and /messages) answers the same script as an Anthropic
// Messages server (see messages.go). GET /v1/models lists the one model (in
// Anthropic's shape when the request has an anthropic-version header).
//
// # Scripts
//
// What it answers is a [Script], a JSON file:
//
//	{
//	  "model": "scripted",          // model name in answers ("" → the request's)
//	  "chunk_size": 8,              // bytes per streamed fragment (default 8)
//	  "delay_ms": 0,                // pause between chunks
//	  "protocols": false,           // answer text-protocol harnesses in their formats
//	  "turns": [
//	    {"when": {"tools": true, "tool_result": false},
//	     "reasoning": "optional reasoning text",
//	     "text": "optional text",
//	     "tool_calls": [{"name": "", "command": "echo hi"}]},
//	    {"when": {"tool_result": true}, "text": "The tool said: {{tool_output}}"},
//	    {"when": {"user_contains": "fail"}, "status": 429, "error": "slow down"},
//	    {"text": "Hello! You said: {{user}}"}
//	  ]
//	}
//
// For each request the turns are tried in order; the first one whose "when"
// matches (a turn without "when" matches every request) and that can be
// played answers. Conditions, all of which must hold:
//
//   - "tools": the request has tools (true) or has none (false);
//   - "tool_result": a tool result follows the last user message (true) or
//     none does (false);
//   - "user_contains": the last user message contains the string;
//   - "assistant_turns": exactly this many assistant messages follow the
//     last user message (use it to script a fixed sequence of calls);
//   - "has_tool": the request offers a tool of this name;
//   - "tool_result_contains": the last tool result after the last user
//     message contains the string;
//   - "user_matches": the last user message matches this regular
//     expression;
//   - "body": the request body has each of these top-level fields with
//     this JSON value (null: absent) — to check what a proxy passed on.
//
// A turn answers with reasoning and/or text and/or tool calls (finish
// reason "tool_calls" when it has calls, else "stop", or its own
// "finish_reason"), or with an HTTP error ("status" 4xx/5xx and an "error"
// message in an OpenAI error body). A tool call names its tool, or leaves
// "name" empty to call the first shell-like tool of the request, in the
// request's order: a client shell tool the harnesses' bridge knows
// (exec_command, shell, shell_command, local_shell, bash, run_shell_command)
// or a registered harness's native shell tool (Bash, exec_shell, …); a turn
// whose nameless call finds no such tool cannot be played and is skipped. "arguments" gives the arguments as a
// JSON object; without it, "command" is shaped to the tool's parameter
// schema: a "cmd" string, a "command" array (["bash","-lc",CMD] split as
// argv when the command has no shell syntax) or string, and short
// placeholders for other required string parameters. Texts may use
// {{tool_output}} (the last tool result, its "Output:" section when it has
// one, at most 500 bytes), {{user}} (the last user message), {{model}} and
// {{capture}} (what the turn's "capture" regular expression finds in the
// last tool result or, without one, the last user message: its first
// group, trimmed — for harnesses that send tool output back as text).
// A request no turn answers gets a fixed apology text.
//
// With "protocols" the model recognises the requests of the harnesses that
// read commands out of the reply text (swe-agent, mini-swe-agent,
// terminus-2) and answers them in their formats (see protocols.go).
//
// [Default] is the built-in script, with "protocols": with tools and no
// tool result yet, a short reasoning, a sentence and a call of the first
// shell-like tool running `echo hello from harnessflow` (on a text
// protocol, that command in the protocol's reply) — or, when the user asks
// to apply a patch and the request has an apply_patch tool, a call of it
// adding the file the message names ("file NAME", else hello.txt); once a
// tool result is present, a final text quoting it (on a text protocol, its
// final reply); without tools, a fixed greeting.
//
// Answers are deterministic: ids are derived from a hash of the request,
// "created" is fixed, and usage counts are computed from the sizes of the
// request and the answer.
package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Script is what the scripted model answers (see the package doc for the
// JSON format).
type Script struct {
	// Model is the model name in answers; "" uses the request's model (or
	// "harnessflow-scripted").
	Model string `json:"model,omitempty"`
	// ChunkSize is the size in bytes of a streamed text or argument
	// fragment (default 8).
	ChunkSize int `json:"chunk_size,omitempty"`
	// DelayMS is a pause between streamed chunks, in milliseconds.
	DelayMS int `json:"delay_ms,omitempty"`
	// Protocols makes the model answer the text-protocol harnesses in
	// their own formats (see protocols.go): a nameless tool call becomes
	// the protocol's command reply and a turn without calls its final
	// reply, and an observation counts as a tool result.
	Protocols bool `json:"protocols,omitempty"`
	// Turns are tried in order for every request.
	Turns []Turn `json:"turns"`
}

// Turn is one scripted answer and the condition under which it is given.
type Turn struct {
	// When must match the request; nil matches every request.
	When *Match `json:"when,omitempty"`
	// Reasoning is streamed as reasoning_content before the text.
	Reasoning string `json:"reasoning,omitempty"`
	// Text is the assistant text (placeholders: {{tool_output}}, {{user}},
	// {{model}}).
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls the answer makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// FinishReason overrides the finish reason ("tool_calls" with calls,
	// else "stop").
	FinishReason string `json:"finish_reason,omitempty"`
	// Status, when non-zero, answers with this HTTP error status (400-599)
	// and an OpenAI error body holding Error.
	Status int `json:"status,omitempty"`
	// Error is the message of a Status answer.
	Error string `json:"error,omitempty"`
	// Capture is a regular expression (Go syntax) for the {{capture}}
	// placeholder: its first group (or whole match) in what the model saw
	// last — the last tool result when one follows the last user message,
	// else the last user message — trimmed. Text-protocol harnesses send
	// tool output back as a user message ("OBSERVATION:\n…"), where
	// {{tool_output}} finds nothing.
	Capture string `json:"capture,omitempty"`
}

// Match is the condition of a [Turn]; nil fields are not checked.
type Match struct {
	// Tools: the request has tools (true) or none (false).
	Tools *bool `json:"tools,omitempty"`
	// ToolResult: a tool result follows the last user message (true) or
	// none does (false).
	ToolResult *bool `json:"tool_result,omitempty"`
	// UserContains: the last user message contains this string.
	UserContains string `json:"user_contains,omitempty"`
	// AssistantTurns: exactly this many assistant messages follow the last
	// user message.
	AssistantTurns *int `json:"assistant_turns,omitempty"`
	// ToolResultContains: the last tool result after the last user
	// message contains this string (to script a sequence of different
	// calls: a search, then the tool it found).
	ToolResultContains string `json:"tool_result_contains,omitempty"`
	// HasTool: the request offers a tool of this name (in its tools, or
	// listed in its prompt when the handler answers calls as text).
	HasTool string `json:"has_tool,omitempty"`
	// UserMatches: the last user message matches this regular expression
	// (Go syntax).
	UserMatches string `json:"user_matches,omitempty"`
	// Body: the request body has each of these top-level fields with
	// this value, compared as JSON values ({"max_tokens":5} holds for a
	// body with "max_tokens":5 whatever else it has); a null value holds
	// when the field is absent or null. It lets a script check what a
	// proxy passed on.
	Body map[string]json.RawMessage `json:"body,omitempty"`
}

// ToolCall is one scripted tool call.
type ToolCall struct {
	// Name is the tool to call; "" calls the first shell-like tool of the
	// request.
	Name string `json:"name,omitempty"`
	// Arguments is the arguments object (or a JSON string holding one).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Command is a shell command, shaped to the tool's parameter schema
	// when Arguments is empty.
	Command string `json:"command,omitempty"`
}

// DefaultCommand is the command the default script runs.
const DefaultCommand = "echo hello from harnessflow"

// DefaultPatchFile is the file the default script's apply_patch call adds
// when the user message names none.
const DefaultPatchFile = "hello.txt"

// patchArguments are the arguments of an apply_patch call (a custom tool
// is a function of one string "input" on the chat wire) adding file, which
// may be a placeholder.
func patchArguments(file string) json.RawMessage {
	return json.RawMessage(marshal(map[string]string{
		"input": "*** Begin Patch\n*** Add File: " + file + "\n+hello from harnessflow\n*** End Patch\n"}))
}

// Default returns the built-in script (see the package doc).
func Default() *Script {
	yes, no := true, false
	const askPatch = `(?i)apply[ _](?:a )?patch`
	return &Script{
		Protocols: true,
		Turns: []Turn{
			{
				When:      &Match{Tools: &yes, ToolResult: &no, HasTool: "apply_patch", UserMatches: askPatch + `(?s:.*)\bfile\s+\S|\bfile\s+\S(?s:.*)` + askPatch},
				Capture:   `(?i)\bfile\s+([A-Za-z0-9_][A-Za-z0-9_./-]*[A-Za-z0-9_])`,
				Text:      "I will add the file with a patch.",
				ToolCalls: []ToolCall{{Name: "apply_patch", Arguments: patchArguments("{{capture}}")}},
			},
			{
				When:      &Match{Tools: &yes, ToolResult: &no, HasTool: "apply_patch", UserMatches: askPatch},
				Text:      "I will add a file with a patch.",
				ToolCalls: []ToolCall{{Name: "apply_patch", Arguments: patchArguments(DefaultPatchFile)}},
			},
			{
				When:      &Match{Tools: &yes, ToolResult: &no},
				Reasoning: "I can run commands here. I will run a harmless one first.",
				Text:      "Let me run a quick command.",
				ToolCalls: []ToolCall{{Command: DefaultCommand}},
			},
			{
				When: &Match{ToolResult: &yes},
				Text: "The command finished. It printed:\n\n{{tool_output}}\n\nThat is all from the harnessflow scripted model.",
			},
			{
				Text: "Hello from the harnessflow scripted model! I am a fixed script, not a real model: " +
					"point harnessflow serve at a real upstream with --upstream to talk to one.",
			},
		},
	}
}

// Load reads and checks a script file.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("scripted: %s: %w", path, errors.Unwrap(err))
	}
	return s, nil
}

// Parse decodes and checks a script. Unknown fields are errors.
func Parse(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("scripted: %w", errors.New("trailing data after the script object"))
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	return &s, nil
}

// Check reports the first problem of a script: no turns, a turn with
// nothing to say, a bad status, bad arguments, a negative size.
func (s *Script) Check() error {
	if len(s.Turns) == 0 {
		return errors.New("no turns")
	}
	if s.ChunkSize < 0 || s.DelayMS < 0 {
		return errors.New("chunk_size and delay_ms must not be negative")
	}
	for i, t := range s.Turns {
		if t.When != nil && t.When.UserMatches != "" {
			if _, err := regexp.Compile(t.When.UserMatches); err != nil {
				return fmt.Errorf("turn %d: user_matches: %w", i+1, err)
			}
		}
		if t.Status != 0 {
			if t.Status < 400 || t.Status > 599 {
				return fmt.Errorf("turn %d: status %d is not an HTTP error status (400-599)", i+1, t.Status)
			}
			continue
		}
		if t.Text == "" && t.Reasoning == "" && len(t.ToolCalls) == 0 {
			return fmt.Errorf("turn %d: no text, reasoning, tool_calls or status", i+1)
		}
		if t.Capture != "" {
			if _, err := regexp.Compile(t.Capture); err != nil {
				return fmt.Errorf("turn %d: capture: %w", i+1, err)
			}
		}
		for j, c := range t.ToolCalls {
			if len(c.Arguments) > 0 {
				if _, err := argumentsObject(c.Arguments); err != nil {
					return fmt.Errorf("turn %d: tool call %d: %w", i+1, j+1, err)
				}
			}
		}
	}
	return nil
}

// argumentsObject returns the arguments as compact JSON text of an object.
func argumentsObject(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("arguments: %w", err)
	}
	if s, ok := v.(string); ok {
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return "", fmt.Errorf("arguments string: %w", err)
		}
	}
	if _, ok := v.(map[string]any); !ok {
		return "", errors.New("arguments must be a JSON object")
	}
	return marshal(v), nil
}

// marshal encodes v compactly without HTML escaping.
func marshal(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
