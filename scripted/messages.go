package scripted

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/wire/anthropic"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// The Messages mode: POST /v1/messages (and /messages) answers the same
// Script as an Anthropic Messages server. A request is read with
// wire/anthropic; the turn is chosen by the same conditions, with these
// readings of a Messages conversation:
//
//   - the tools are the request's client tools (name and input_schema; a
//     nameless scripted call picks the first shell-like one, Bash
//     included, and shapes its command to the schema);
//   - the last user message is the last user message with a text block
//     that is not a <system-reminder> (tool results and reminders are not
//     the user speaking); role "system" messages are not user messages;
//   - a tool result follows it when a later user message (or that one,
//     after its text) holds a tool_result block; {{tool_output}} is the
//     text of the last one;
//   - the assistant turns are the assistant messages after it.
//
// A streamed answer is message_start, then per content block
// content_block_start, deltas and content_block_stop — a thinking block
// for the reasoning (thinking_delta fragments, then a signature_delta with
// a made-up signature), a text block (text_delta fragments), one tool_use
// block per call (input_json_delta fragments of the arguments) — then
// message_delta with the stop reason (tool_use with calls, else end_turn,
// or the turn's finish_reason in Messages terms) and the usage, and
// message_stop. A request without "stream": true gets one message JSON. An
// error turn answers with an Anthropic error body
// {"type":"error","error":{"type","message"}}.

// messagesSignaturePrefix starts the made-up signature of a scripted
// thinking block.
const messagesSignaturePrefix = "scripted-signature-"

func parseMessagesRequest(body []byte) (*request, error) {
	var ar anthropic.Request
	if err := json.Unmarshal(body, &ar); err != nil {
		return nil, err
	}
	req := &request{body: body, model: ar.Model, stream: ar.Stream != nil && *ar.Stream}
	for _, t := range ar.Tools {
		if t.IsClient() && t.Name != "" {
			req.tools = append(req.tools, chat.Tool{Type: chat.ToolTypeFunction,
				Function: chat.FunctionDef{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}})
		}
	}
	last, lastText := -1, -1 // the last prompt message, and its last text block
	for i, m := range ar.Messages {
		if m.Role != anthropic.RoleUser {
			continue
		}
		if k := promptBlock(m.Content); k >= 0 || m.Content.Kind == anthropic.ContentText {
			last, lastText = i, k
		}
	}
	if last >= 0 {
		req.lastUser = promptText(ar.Messages[last].Content)
	}
	for i := max(last, 0); i < len(ar.Messages); i++ {
		m := ar.Messages[i]
		switch {
		case m.Role == anthropic.RoleAssistant && i > last:
			req.assistantTurns++
		case m.Role == anthropic.RoleUser:
			for k, b := range m.Content.Blocks {
				if b.Type != anthropic.BlockToolResult || i == last && k < lastText {
					continue
				}
				req.hasToolResult = true
				req.toolOutput = resultText(b.Content)
			}
		}
	}
	return req, nil
}

// promptBlock is the index of the last text block of a user content that
// is not a system reminder, or -1.
func promptBlock(c anthropic.Content) int {
	k := -1
	for i, b := range c.Blocks {
		if b.Type == anthropic.BlockText && !strings.HasPrefix(strings.TrimSpace(b.Text), harness.SystemReminderTag) {
			k = i
		}
	}
	return k
}

// promptText is the text of a user content's text blocks that are not
// system reminders.
func promptText(c anthropic.Content) string {
	if c.Kind == anthropic.ContentText {
		return c.Text
	}
	var parts []string
	for _, b := range c.Blocks {
		if b.Type == anthropic.BlockText && !strings.HasPrefix(strings.TrimSpace(b.Text), harness.SystemReminderTag) {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// resultText is the text of a tool_result's content.
func resultText(c *anthropic.Content) string {
	if c == nil {
		return ""
	}
	if c.Kind == anthropic.ContentText {
		return c.Text
	}
	var parts []string
	for _, b := range c.Blocks {
		if b.Type == anthropic.BlockText && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// stopReason is the Messages stop reason of a chat finish reason.
func stopReason(finish string) string {
	switch finish {
	case "tool_calls":
		return "tool_use"
	case "stop", "":
		return "end_turn"
	case "length":
		return "max_tokens"
	case "content_filter":
		return "refusal"
	}
	return finish
}

func (h *Handler) messages(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, writeMessagesError)
	if !ok {
		return
	}
	req, err := parseMessagesRequest(body)
	if err != nil {
		writeMessagesError(w, http.StatusBadRequest, "invalid messages request: "+err.Error())
		return
	}
	if h.opts.RejectTools && len(req.tools) > 0 {
		writeMessagesError(w, http.StatusBadRequest, ErrToolsRejected)
		return
	}
	id := requestHash(body)
	turn, a, _ := h.play(req, id)
	if turn.Status != 0 {
		writeMessagesError(w, turn.Status, turn.Error)
		return
	}
	for i := range a.calls {
		a.calls[i].id = fmt.Sprintf("toolu_%s_%d", id, i)
	}
	if !req.stream {
		h.messagesUnary(w, req, id, a)
		return
	}
	h.messagesStream(w, r, req, id, a)
}

// messagesUsage is the usage of a Messages answer.
type messagesUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

func (h *Handler) messagesUsage(req *request, a answer) messagesUsage {
	u := usage(req, a)
	return messagesUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
}

// contentBlocks returns the answer's blocks as the unary message has them.
func (h *Handler) contentBlocks(a answer, id string) []map[string]any {
	var out []map[string]any
	if a.reasoning != "" {
		out = append(out, map[string]any{"type": "thinking", "thinking": a.reasoning, "signature": messagesSignaturePrefix + id})
	}
	if a.text != "" {
		out = append(out, map[string]any{"type": "text", "text": a.text})
	}
	for _, c := range a.calls {
		out = append(out, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": json.RawMessage(c.args)})
	}
	if out == nil {
		out = []map[string]any{}
	}
	return out
}

func (h *Handler) messagesUnary(w http.ResponseWriter, req *request, id string, a answer) {
	out := map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": h.model(req),
		"content": h.contentBlocks(a, id), "stop_reason": stopReason(a.finish), "stop_sequence": nil,
		"usage": h.messagesUsage(req, a),
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, marshal(out)+"\n") // a failed write means the client went away
}

func (h *Handler) messagesStream(w http.ResponseWriter, r *http.Request, req *request, id string, a answer) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	delay := time.Duration(h.script.DelayMS) * time.Millisecond
	first := true
	send := func(event string, data any) bool {
		if !first && delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-r.Context().Done():
				t.Stop()
				return false
			case <-t.C:
			}
		}
		first = false
		if _, err := io.WriteString(w, "event: "+event+"\ndata: "+marshal(data)+"\n\n"); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	u := h.messagesUsage(req, a)
	if !send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": h.model(req), "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": messagesUsage{InputTokens: u.InputTokens, OutputTokens: 1},
	}}) {
		return
	}
	size := h.script.ChunkSize
	index := 0
	block := func(start map[string]any, deltas []map[string]any) bool {
		if !send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": start}) {
			return false
		}
		for _, d := range deltas {
			if !send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d}) {
				return false
			}
		}
		ok := send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
		return ok
	}
	if a.reasoning != "" {
		var ds []map[string]any
		for _, f := range fragments(a.reasoning, size) {
			ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": f})
		}
		ds = append(ds, map[string]any{"type": "signature_delta", "signature": messagesSignaturePrefix + id})
		if !block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, ds) {
			return
		}
	}
	if a.text != "" {
		var ds []map[string]any
		for _, f := range fragments(a.text, size) {
			ds = append(ds, map[string]any{"type": "text_delta", "text": f})
		}
		if !block(map[string]any{"type": "text", "text": ""}, ds) {
			return
		}
	}
	for _, c := range a.calls {
		var ds []map[string]any
		for _, f := range fragments(c.args, size) {
			ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": f})
		}
		if !block(map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": map[string]any{}}, ds) {
			return
		}
	}
	if !send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason(a.finish), "stop_sequence": nil}, "usage": u}) {
		return
	}
	send("message_stop", map[string]any{"type": "message_stop"})
}

// writeMessagesError writes an Anthropic error body.
func writeMessagesError(w http.ResponseWriter, status int, msg string) {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status == http.StatusForbidden:
		typ = "permission_error"
	case status == http.StatusNotFound:
		typ = "not_found_error"
	case status == http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status == 529:
		typ = "overloaded_error"
	case status >= 500:
		typ = "api_error"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})+"\n")
}
