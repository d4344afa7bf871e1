package calibrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/wire"
)

// Wires the capture endpoint speaks, by their registered names.
const (
	WireChat      = string(wire.Chat)
	WireMessages  = string(wire.Messages)
	WireResponses = string(wire.Responses)
)

// endpointWires are the wires the endpoint answers, in the order their
// paths are matched.
var endpointWires = [...]string{WireChat, WireMessages, WireResponses}

// maxRequests is how many model requests the endpoint answers with a
// tool call before it only answers with final text.
const maxRequests = 12

// Captured is one request the agent sent to the endpoint.
type Captured struct {
	// Seq is the request's position, from 1.
	Seq int `json:"seq"`
	// Method and Path (with the query) as sent.
	Method string `json:"method"`
	Path   string `json:"path"`
	// Wire is the wire its path names ("" for another path).
	Wire string `json:"wire,omitempty"`
	// Kind is "main" (a request with tools and no tool result), "followup"
	// (a tool result in it), "title" (no tools) or "other".
	Kind string `json:"kind"`
	// Headers are the request's headers, names lowercased, credentials
	// replaced by "<redacted>".
	Headers map[string]string `json:"headers"`
	// Body is the JSON body (null when it was not JSON).
	Body json.RawMessage `json:"body"`
}

// secretHeaders never reach a capture file.
var secretHeaders = []string{"authorization", "x-api-key", "cookie", "proxy-authorization", "api-key"}

// endpoint is the loopback capture endpoint: it records every request and
// answers model requests with the scripted turns (a call of the agent's
// shell tool, then a final text; a title for a request without tools).
type endpoint struct {
	wire string
	ln   net.Listener
	srv  *http.Server

	mu       sync.Mutex
	captured []Captured
	wrong    []string // requests of another wire
	answered int      // model requests answered
	seen     chan struct{}
	seenOnce sync.Once
}

// listen opens the endpoint on 127.0.0.1 (an ephemeral port); serve starts
// answering.
func listen(wire string) (*endpoint, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("capture endpoint: %w", err)
	}
	e := &endpoint{wire: wire, ln: ln, seen: make(chan struct{})}
	e.srv = &http.Server{Handler: e, ReadHeaderTimeout: 30 * time.Second}
	return e, nil
}

// URL is the endpoint's base URL, http://127.0.0.1:PORT.
func (e *endpoint) URL() string { return "http://" + e.ln.Addr().String() }

func (e *endpoint) serve() { _ = e.srv.Serve(e.ln) } // ends with close

func (e *endpoint) close() { _ = e.srv.Close() }

// requests returns a copy of what was captured so far, and the requests of
// an unexpected wire.
func (e *endpoint) requests() ([]Captured, []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Captured(nil), e.captured...), append([]string(nil), e.wrong...)
}

// wireOf names the wire of a request path ("" for none): the wire whose
// codec's request path ends it.
func wireOf(path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	path = strings.TrimRight(path, "/")
	for _, w := range endpointWires {
		if c, ok := codec.Lookup(wire.Wire(w)); ok && c.Path != "" && strings.HasSuffix(path, c.Path) {
			return w
		}
	}
	return ""
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	c := Captured{Method: r.Method, Path: r.URL.RequestURI(), Wire: wireOf(r.URL.Path), Headers: map[string]string{}}
	for k, vs := range r.Header {
		k = strings.ToLower(k)
		v := strings.Join(vs, ", ")
		for _, s := range secretHeaders {
			if k == s {
				v = "<redacted>"
			}
		}
		c.Headers[k] = v
	}
	var parsed map[string]any
	if json.Valid(body) {
		c.Body = append(json.RawMessage(nil), body...)
		_ = json.Unmarshal(body, &parsed) // nil unless an object
	} else {
		c.Body = json.RawMessage("null")
	}
	if r.Method == http.MethodGet && strings.HasSuffix(strings.TrimRight(r.URL.Path, "/"), "/models") {
		c.Kind = "other"
		e.record(c, "")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"`+modelOf(parsed)+`","object":"model"}]}`)
		return
	}
	if r.Method != http.MethodPost || c.Wire == "" || parsed == nil {
		c.Kind = "other"
		e.record(c, "")
		http.Error(w, "the calibration endpoint answers model requests only", http.StatusNotFound)
		return
	}
	c.Kind = kindOf(c.Wire, parsed)
	if c.Wire != e.wire {
		e.record(c, fmt.Sprintf("%s %s (wire %s)", r.Method, c.Path, c.Wire))
		http.Error(w, fmt.Sprintf("this calibration endpoint speaks the %s wire, not %s", e.wire, c.Wire), http.StatusBadRequest)
		return
	}
	n := e.record(c, "")
	var a answer
	switch {
	case c.Kind == "title":
		a = answer{text: "Calibration run"}
	case c.Kind == "main" && n <= maxRequests:
		if name, args, ok := shellCall(c.Wire, parsed); ok {
			a = answer{tool: name, args: args}
		} else {
			a = answer{text: "No shell tool was offered."}
		}
	default:
		a = answer{text: "Done."}
	}
	stream, _ := parsed["stream"].(bool)
	writeAnswer(w, c.Wire, modelOf(parsed), stream, wantsUsage(parsed), a)
}

// record stores c (numbering it) and, when wrong is set, the wrong-wire
// note; it returns how many model requests were answered with c.
func (e *endpoint) record(c Captured, wrong string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	c.Seq = len(e.captured) + 1
	e.captured = append(e.captured, c)
	if wrong != "" {
		e.wrong = append(e.wrong, wrong)
	}
	if c.Kind != "other" {
		e.answered++
	}
	e.seenOnce.Do(func() { close(e.seen) })
	return e.answered
}

func modelOf(body map[string]any) string {
	if m, ok := body["model"].(string); ok && m != "" {
		return m
	}
	return "calibration-model"
}

func wantsUsage(body map[string]any) bool {
	so, _ := body["stream_options"].(map[string]any)
	u, _ := so["include_usage"].(bool)
	return u
}

// kindOf classifies a model request: "title" without tools, "followup"
// with a tool result, "main" otherwise.
func kindOf(wire string, body map[string]any) string {
	tools, _ := body["tools"].([]any)
	if len(tools) == 0 {
		return "title"
	}
	if hasToolResult(wire, body) {
		return "followup"
	}
	return "main"
}

func hasToolResult(wire string, body map[string]any) bool {
	switch wire {
	case WireMessages:
		msgs, _ := body["messages"].([]any)
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			parts, _ := mm["content"].([]any)
			for _, p := range parts {
				if pm, _ := p.(map[string]any); pm["type"] == "tool_result" {
					return true
				}
			}
		}
	case WireChat:
		msgs, _ := body["messages"].([]any)
		for _, m := range msgs {
			if mm, _ := m.(map[string]any); mm["role"] == "tool" {
				return true
			}
		}
	case WireResponses:
		items, _ := body["input"].([]any)
		for _, it := range items {
			if im, _ := it.(map[string]any); strings.HasSuffix(fmt.Sprint(im["type"]), "_call_output") {
				return true
			}
		}
	}
	return false
}

// shellNames are the shell tools of the agents, most specific first.
var shellNames = []string{"Bash", "bash", "run_shell_command", "shell", "exec_command", "local_shell"}

// ShellCommand is the command the scripted tool call runs: it only reads.
const ShellCommand = "ls"

// shellCall picks the agent's shell tool and builds the arguments of a
// call to it from the tool's schema: the command, and a short value for
// each other required string (false for booleans).
func shellCall(wire string, body map[string]any) (string, string, bool) {
	tools, _ := body["tools"].([]any)
	schemas := map[string]map[string]any{}
	var order []string
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		name, _ := tm["name"].(string)
		schema, _ := tm["input_schema"].(map[string]any)
		if schema == nil {
			schema, _ = tm["parameters"].(map[string]any)
		}
		if fn, ok := tm["function"].(map[string]any); ok {
			name, _ = fn["name"].(string)
			schema, _ = fn["parameters"].(map[string]any)
		}
		if name != "" {
			schemas[name] = schema
			order = append(order, name)
		}
	}
	pick := ""
	for _, n := range shellNames {
		if _, ok := schemas[n]; ok {
			pick = n
			break
		}
	}
	if pick == "" {
		for _, n := range order {
			l := strings.ToLower(n)
			if strings.Contains(l, "shell") || strings.Contains(l, "bash") {
				pick = n
				break
			}
		}
	}
	if pick == "" {
		return "", "", false
	}
	args := map[string]any{}
	props, _ := schemas[pick]["properties"].(map[string]any)
	cmdKey := "command"
	for _, k := range []string{"command", "cmd"} {
		if _, ok := props[k]; ok {
			cmdKey = k
			break
		}
	}
	if p, _ := props[cmdKey].(map[string]any); p["type"] == "array" {
		args[cmdKey] = []string{ShellCommand}
	} else {
		args[cmdKey] = ShellCommand
	}
	req, _ := schemas[pick]["required"].([]any)
	for _, r := range req {
		k, _ := r.(string)
		if _, done := args[k]; done || k == "" {
			continue
		}
		p, _ := props[k].(map[string]any)
		switch p["type"] {
		case "boolean":
			args[k] = false
		case "integer", "number":
			args[k] = 1
		default:
			args[k] = "List the files"
		}
	}
	b, _ := json.Marshal(args) // plain values always marshal
	return pick, string(b), true
}

// answer is one scripted model turn: a final text or one tool call.
type answer struct {
	text       string
	tool, args string
}

// writeAnswer writes a in the wire's format, streamed (SSE) or as one
// JSON document.
func writeAnswer(w http.ResponseWriter, wire, model string, stream, usage bool, a answer) {
	var events []sse
	var doc any
	switch wire {
	case WireMessages:
		events, doc = messagesAnswer(model, a)
	case WireChat:
		events, doc = chatAnswer(model, a, usage)
	default:
		events, doc = responsesAnswer(model, a)
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var b bytes.Buffer
	for _, ev := range events {
		if ev.name != "" {
			fmt.Fprintf(&b, "event: %s\n", ev.name)
		}
		if s, ok := ev.data.(string); ok {
			fmt.Fprintf(&b, "data: %s\n\n", s)
			continue
		}
		d, _ := json.Marshal(ev.data) // maps of plain values
		fmt.Fprintf(&b, "data: %s\n\n", d)
	}
	_, _ = w.Write(b.Bytes())
}

type sse struct {
	name string
	data any
}

type obj = map[string]any

func messagesAnswer(model string, a answer) ([]sse, any) {
	usage := obj{"input_tokens": 10, "output_tokens": 5}
	var block, delta obj
	stop := "end_turn"
	if a.tool != "" {
		stop = "tool_use"
		block = obj{"type": "tool_use", "id": "toolu_calibrate_1", "name": a.tool, "input": obj{}}
		delta = obj{"type": "input_json_delta", "partial_json": a.args}
	} else {
		block = obj{"type": "text", "text": ""}
		delta = obj{"type": "text_delta", "text": a.text}
	}
	msg := obj{"id": "msg_calibrate", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage}
	events := []sse{
		{"message_start", obj{"type": "message_start", "message": msg}},
		{"content_block_start", obj{"type": "content_block_start", "index": 0, "content_block": block}},
		{"content_block_delta", obj{"type": "content_block_delta", "index": 0, "delta": delta}},
		{"content_block_stop", obj{"type": "content_block_stop", "index": 0}},
		{"message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop, "stop_sequence": nil},
			"usage": obj{"output_tokens": 5}}},
		{"message_stop", obj{"type": "message_stop"}},
	}
	full := obj{"id": "msg_calibrate", "type": "message", "role": "assistant", "model": model,
		"stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if a.tool != "" {
		var input any
		_ = json.Unmarshal([]byte(a.args), &input) // built by shellCall
		full["content"] = []any{obj{"type": "tool_use", "id": "toolu_calibrate_1", "name": a.tool, "input": input}}
	} else {
		full["content"] = []any{obj{"type": "text", "text": a.text}}
	}
	return events, full
}

func chatAnswer(model string, a answer, usage bool) ([]sse, any) {
	chunk := func(delta obj, finish any) obj {
		return obj{"id": "chatcmpl-calibrate", "object": "chat.completion.chunk", "created": 1, "model": model,
			"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	u := obj{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	var events []sse
	msg := obj{"role": "assistant"}
	finish := "stop"
	if a.tool != "" {
		finish = "tool_calls"
		call := obj{"index": 0, "id": "call_calibrate_1", "type": "function",
			"function": obj{"name": a.tool, "arguments": a.args}}
		events = append(events, sse{"", chunk(obj{"role": "assistant", "content": nil, "tool_calls": []any{call}}, nil)})
		msg["content"] = nil
		msg["tool_calls"] = []any{obj{"id": "call_calibrate_1", "type": "function",
			"function": obj{"name": a.tool, "arguments": a.args}}}
	} else {
		events = append(events, sse{"", chunk(obj{"role": "assistant", "content": a.text}, nil)})
		msg["content"] = a.text
	}
	events = append(events, sse{"", chunk(obj{}, finish)})
	if usage {
		events = append(events, sse{"", obj{"id": "chatcmpl-calibrate", "object": "chat.completion.chunk", "created": 1,
			"model": model, "choices": []any{}, "usage": u}})
	}
	events = append(events, sse{"", "[DONE]"})
	doc := obj{"id": "chatcmpl-calibrate", "object": "chat.completion", "created": 1, "model": model,
		"choices": []any{obj{"index": 0, "message": msg, "finish_reason": finish}}, "usage": u}
	return events, doc
}

func responsesAnswer(model string, a answer) ([]sse, any) {
	var item obj
	if a.tool != "" {
		item = obj{"type": "function_call", "id": "fc_calibrate_1", "call_id": "call_calibrate_1", "name": a.tool,
			"arguments": a.args, "status": "completed"}
	} else {
		item = obj{"type": "message", "id": "msg_calibrate_1", "role": "assistant", "status": "completed",
			"content": []any{obj{"type": "output_text", "text": a.text, "annotations": []any{}}}}
	}
	usage := obj{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
		"input_tokens_details": obj{"cached_tokens": 0}, "output_tokens_details": obj{"reasoning_tokens": 0}}
	resp := func(status string, output []any) obj {
		r := obj{"id": "resp_calibrate", "object": "response", "created_at": 1, "status": status, "model": model,
			"output": output}
		if status == "completed" {
			r["usage"] = usage
		}
		return r
	}
	events := []sse{
		{"response.created", obj{"type": "response.created", "sequence_number": 0, "response": resp("in_progress", []any{})}},
		{"response.output_item.added", obj{"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item}},
	}
	if a.tool == "" {
		events = append(events,
			sse{"response.output_text.delta", obj{"type": "response.output_text.delta", "sequence_number": 2,
				"item_id": "msg_calibrate_1", "output_index": 0, "content_index": 0, "delta": a.text}})
	}
	events = append(events,
		sse{"response.output_item.done", obj{"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": item}},
		sse{"response.completed", obj{"type": "response.completed", "sequence_number": 4, "response": resp("completed", []any{item})}})
	return events, resp("completed", []any{item})
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
