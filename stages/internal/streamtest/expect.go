package streamtest

// This file checks a run's events against a fixture's expect.json with
// subset semantics: only the keys the expectation has are checked, and a key
// this checker does not know is reported, never passed over.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
)

// summary is what a stream of ResponseEvents amounts to.
type summary struct {
	model      string
	text       string   // all output_text deltas
	textBlocks []string // output_text deltas per added message item
	reasoning  string   // all reasoning_content deltas
	done       []protocol.ResponseItem
	added      []protocol.ResponseItem
	terminal   *protocol.ResponseEvent
	problems   []string // inconsistencies found while summarising
}

func summarize(events []protocol.ResponseEvent) summary {
	var s summary
	var sb, rb strings.Builder
	cur := -1
	for i := range events {
		e := &events[i]
		switch e.Type {
		case protocol.EventServerModel:
			s.model = e.Model
		case protocol.EventOutputItemAdded:
			s.added = append(s.added, e.Item)
			if _, ok := e.Item.(*protocol.Message); ok {
				s.textBlocks = append(s.textBlocks, "")
				cur = len(s.textBlocks) - 1
			}
		case protocol.EventOutputTextDelta:
			sb.WriteString(e.Delta)
			if cur < 0 {
				s.problems = append(s.problems, "output_text.delta before any message item was added")
				continue
			}
			s.textBlocks[cur] += e.Delta
		case protocol.EventReasoningContentDelta:
			rb.WriteString(e.Delta)
		case protocol.EventOutputItemDone:
			s.done = append(s.done, e.Item)
			if m, ok := e.Item.(*protocol.Message); ok && cur >= 0 && len(m.Content) == 1 && s.textBlocks[cur] != "" {
				if m.Content[0].Text != s.textBlocks[cur] {
					s.problems = append(s.problems, fmt.Sprintf("done message text %q differs from its deltas %q", m.Content[0].Text, s.textBlocks[cur]))
				}
			}
		case protocol.EventCompleted, protocol.EventFailed:
			s.terminal = e
		}
	}
	s.text, s.reasoning = sb.String(), rb.String()
	return s
}

func (s *summary) reasonings() []*protocol.Reasoning {
	var out []*protocol.Reasoning
	for _, it := range s.done {
		if r, ok := it.(*protocol.Reasoning); ok {
			out = append(out, r)
		}
	}
	return out
}

// toolCall is a client tool call found among the done items.
type toolCall struct {
	kind, itemID, callID, name, arguments, input string
}

func (s *summary) toolCalls() []toolCall {
	var out []toolCall
	for _, it := range s.done {
		switch c := it.(type) {
		case *protocol.FunctionCall:
			out = append(out, toolCall{kind: "function", itemID: c.ID, callID: c.CallID, name: c.Name, arguments: c.Arguments})
		case *protocol.CustomToolCall:
			out = append(out, toolCall{kind: "custom", itemID: c.ID, callID: c.CallID, name: c.Name, input: c.Input})
		}
	}
	return out
}

// ignoredKeys are expectation keys the engine events cannot express (chat
// finish reasons, Anthropic block indices, raw native counters).
var ignoredKeys = map[string]bool{
	"finish_reason": true, "native_finish_reason": true, "usage_partial": true,
	"incomplete_reason": true, "server_tool_usage": true,
}

// CheckExpected compares what events amount to with expected (the
// "expected" object of an expect.json) and returns the mismatches, plus any
// inconsistency among the events themselves (a text delta outside a message
// item, a done message whose text differs from its deltas).
func CheckExpected(expected map[string]any, events []protocol.ResponseEvent) []string {
	return checkExpected(expected, summarize(events))
}

// checkExpected compares s with expected and returns the mismatches.
func checkExpected(expected map[string]any, s summary) []string {
	errs := append([]string(nil), s.problems...)
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	term := s.terminal
	completed := term != nil && term.Type == protocol.EventCompleted
	keys := make([]string, 0, len(expected))
	for k := range expected {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		want := expected[k]
		switch k {
		case "text":
			if s.text != want {
				fail("text = %q, want %q", s.text, want)
			}
		case "text_blocks":
			if got := anySlice(s.textBlocks); !reflect.DeepEqual(got, want) {
				fail("text_blocks = %q, want %q", s.textBlocks, want)
			}
		case "reasoning":
			checkReasoning(want, s, fail)
		case "items":
			want := want.([]any)
			if len(want) != len(s.done) {
				fail("%d done items, want %d", len(s.done), len(want))
				continue
			}
			for i, w := range want {
				w := w.(map[string]any)
				if got := s.done[i].ItemType(); got != w["type"] {
					fail("done item %d type %q, want %q", i, got, w["type"])
				}
				if id, ok := w["id"]; ok && itemID(s.done[i]) != id {
					fail("done item %d id %q, want %q", i, itemID(s.done[i]), id)
				}
			}
		case "tool_calls":
			checkToolCalls(want.([]any), s.toolCalls(), fail)
		case "partial_tool_calls", "server_tool_calls":
			for _, w := range want.([]any) {
				id := w.(map[string]any)["id"]
				for _, c := range s.toolCalls() {
					if c.callID == id {
						fail("%s entry %q was emitted as a client tool call", k, id)
					}
				}
			}
		case "usage":
			if want == nil {
				if completed && term.TokenUsage != nil {
					fail("token_usage present, want none")
				}
				continue
			}
			if !completed || term.TokenUsage == nil {
				fail("no completed event with token_usage, want usage %v", want)
				continue
			}
			u := term.TokenUsage
			got := map[string]int64{
				"input_tokens": u.InputTokens, "cached_input_tokens": u.CachedInputTokens,
				"output_tokens": u.OutputTokens, "reasoning_output_tokens": u.ReasoningOutputTokens,
				"total_tokens": u.TotalTokens,
			}
			for f, w := range want.(map[string]any) {
				if f == "native" {
					continue
				}
				g, ok := got[f]
				if !ok {
					fail("usage.%s is not a TokenUsage field", f)
				} else if float64(g) != w.(float64) {
					fail("usage.%s = %d, want %v", f, g, w)
				}
			}
		case "response_id":
			// Only a completed event carries the response id.
			if completed && term.ResponseID != want {
				fail("response_id = %q, want %q", term.ResponseID, want)
			}
		case "model":
			if s.model != want {
				fail("server_model = %q, want %q", s.model, want)
			}
		case "terminal", "status":
			var wantType protocol.EventType
			var wantKind string
			switch want {
			case "message_stop", "response.completed", "response.incomplete", "completed", "incomplete":
				wantType = protocol.EventCompleted
			case "error_event", "response.failed", "failed":
				wantType, wantKind = protocol.EventFailed, protocol.ErrKindUpstream
			case "eof_without_terminal":
				wantType, wantKind = protocol.EventFailed, protocol.ErrKindTruncated
			default:
				fail("unknown %s %q", k, want)
				continue
			}
			switch {
			case term == nil:
				fail("no terminal event, want %s %v", k, want)
			case term.Type != wantType:
				fail("terminal %s, want %s (%s %v)", term.Type, wantType, k, want)
			case wantKind != "" && (term.Error == nil || term.Error.Kind != wantKind):
				fail("terminal error %+v, want kind %s", term.Error, wantKind)
			}
		case "error":
			checkError(want, term, fail)
		default:
			if !ignoredKeys[k] {
				fail("expectation key %q is not checked by this test", k)
			}
		}
	}
	return errs
}

func checkReasoning(want any, s summary, fail func(string, ...any)) {
	rs := s.reasonings()
	if want == nil {
		if len(rs) > 0 || s.reasoning != "" {
			fail("reasoning emitted (%d items, %q), want none", len(rs), s.reasoning)
		}
		return
	}
	w := want.(map[string]any)
	for _, k := range sortedKeys(w) {
		v := w[k]
		switch k {
		case "text":
			if s.reasoning != v {
				fail("reasoning text = %q, want %q", s.reasoning, v)
			}
		case "signature", "encrypted_content":
			var got any
			for _, r := range rs {
				if r.EncryptedContent != nil && !strings.HasPrefix(r.ID, "anthropic-redacted-thinking-") {
					got = *r.EncryptedContent
					break
				}
			}
			if got != v {
				fail("reasoning %s = %v, want %v", k, got, v)
			}
		case "summary":
			var got []string
			for _, r := range rs {
				for _, st := range r.Summary {
					got = append(got, st.Text)
				}
			}
			if !reflect.DeepEqual(anySlice(got), v) {
				fail("reasoning summary = %q, want %q", got, v)
			}
		case "blocks":
			var got []any
			for _, r := range rs {
				b := map[string]any{}
				if strings.HasPrefix(r.ID, "anthropic-redacted-thinking-") {
					b["type"] = "redacted_thinking"
					if r.EncryptedContent != nil {
						b["data"] = *r.EncryptedContent
					}
				} else {
					b["type"] = "thinking"
					text := ""
					for _, c := range r.Content {
						text += c.Text
					}
					b["thinking"] = text
					if r.EncryptedContent != nil {
						b["signature"] = *r.EncryptedContent
					}
				}
				got = append(got, b)
			}
			if !reflect.DeepEqual(got, v) {
				fail("reasoning blocks = %v, want %v", got, v)
			}
		default:
			fail("reasoning.%s is not checked by this test", k)
		}
	}
}

func checkToolCalls(want []any, got []toolCall, fail func(string, ...any)) {
	if len(got) != len(want) {
		fail("%d tool calls %+v, want %d", len(got), got, len(want))
		return
	}
	for i, w := range want {
		w := w.(map[string]any)
		c := got[i]
		for _, k := range sortedKeys(w) {
			v := w[k]
			switch k {
			case "index":
				if float64(i) != v {
					fail("tool call %d: index %v", i, v)
				}
			case "id":
				if c.callID != v {
					fail("tool call %d: call_id %q, want %q", i, c.callID, v)
				}
			case "item_id":
				if c.itemID != v {
					fail("tool call %d: item id %q, want %q", i, c.itemID, v)
				}
			case "name":
				if c.name != v {
					fail("tool call %d: name %q, want %q", i, c.name, v)
				}
			case "kind":
				if c.kind != v {
					fail("tool call %d: kind %q, want %q", i, c.kind, v)
				}
			case "arguments":
				if c.arguments != v {
					fail("tool call %d: arguments %q, want %q", i, c.arguments, v)
				}
			case "input":
				if c.input != v {
					fail("tool call %d: input %q, want %q", i, c.input, v)
				}
			case "arguments_json":
				var got any
				dec := json.NewDecoder(bytes.NewReader([]byte(c.arguments)))
				if err := dec.Decode(&got); err != nil {
					fail("tool call %d: arguments %q are not JSON: %v", i, c.arguments, err)
				} else if !reflect.DeepEqual(got, v) {
					fail("tool call %d: arguments_json %v, want %v", i, got, v)
				}
			case "block_index":
				// Anthropic content-block position: not part of the engine item.
			default:
				fail("tool call %d: key %q is not checked by this test", i, k)
			}
		}
	}
}

func checkError(want any, term *protocol.ResponseEvent, fail func(string, ...any)) {
	if want == nil {
		if term != nil && term.Type == protocol.EventFailed {
			fail("failed with %+v, want no error", term.Error)
		}
		return
	}
	if term == nil || term.Type != protocol.EventFailed || term.Error == nil {
		fail("no failed event, want error %v", want)
		return
	}
	e := term.Error
	w := want.(map[string]any)
	for _, k := range sortedKeys(w) {
		v := w[k]
		var got any
		switch k {
		case "kind":
			got = e.Kind
		case "type":
			got = e.Type
		case "code":
			got = e.Code
		case "message":
			got = e.Message
		case "retryable":
			got = e.Retryable
		case "http_status_equivalent":
			got = float64(e.HTTPStatus)
		case "retry_after_ms":
			got = float64(e.RetryAfterMS)
		case "request_id":
			got = e.RequestID
		default:
			fail("error.%s is not checked by this test", k)
			continue
		}
		if got != v {
			fail("error.%s = %v, want %v", k, got, v)
		}
	}
}

func itemID(it protocol.ResponseItem) string {
	switch v := it.(type) {
	case *protocol.Message:
		return v.ID
	case *protocol.Reasoning:
		return v.ID
	case *protocol.FunctionCall:
		return v.ID
	case *protocol.CustomToolCall:
		return v.ID
	}
	return ""
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
