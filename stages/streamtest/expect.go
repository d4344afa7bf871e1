package streamtest

// This file checks a run's events against a fixture's expect.json with
// subset semantics: only the keys the expectation has are checked, and a key
// this checker does not know is reported, never passed over.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/protocol"
)

// ProviderMetadataKey is the key of the protocol.Extra under which the
// stream packages keep a tool call's provider metadata
// (chatstream.ExtraContentKey); "provider_metadata" is checked against it.
const ProviderMetadataKey = "extra_content"

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

// deltaBlocks collects the deltas of one kind of added item (messages or
// reasoning items), which go to the item added last.
type deltaBlocks struct {
	what   string   // "message" or "reasoning"
	blocks []string // deltas per added item
	ids    []string // the items' ids
	cur    int      // index of the item added last; -1 before the first
}

// check reports a done item's text that differs from its streamed deltas.
func (b *deltaBlocks) check(id, text string, problem func(string, ...any)) {
	k := b.cur
	for i, bid := range b.ids {
		if bid == id && id != "" {
			k = i
		}
	}
	if k >= 0 && b.blocks[k] != "" && text != b.blocks[k] {
		problem("done %s text %q differs from its deltas %q", b.what, text, b.blocks[k])
	}
}

func summarize(events []protocol.ResponseEvent) summary {
	var s summary
	var sb, rb strings.Builder
	problem := func(format string, args ...any) { s.problems = append(s.problems, fmt.Sprintf(format, args...)) }
	msgs := deltaBlocks{what: "message", cur: -1}
	rsns := deltaBlocks{what: "reasoning", cur: -1}
	for i := range events {
		e := &events[i]
		switch e.Type {
		case protocol.EventServerModel:
			s.model = e.Model
		case protocol.EventOutputItemAdded:
			s.added = append(s.added, e.Item)
			switch it := e.Item.(type) {
			case *protocol.Message:
				msgs.blocks, msgs.ids, msgs.cur = append(msgs.blocks, ""), append(msgs.ids, it.ID), len(msgs.blocks)
			case *protocol.Reasoning:
				rsns.blocks, rsns.ids, rsns.cur = append(rsns.blocks, ""), append(rsns.ids, it.ID), len(rsns.blocks)
			}
		case protocol.EventOutputTextDelta:
			sb.WriteString(e.Delta)
			if msgs.cur < 0 {
				problem("output_text.delta before any message item was added")
				continue
			}
			msgs.blocks[msgs.cur] += e.Delta
		case protocol.EventReasoningContentDelta:
			rb.WriteString(e.Delta)
			if rsns.cur >= 0 {
				rsns.blocks[rsns.cur] += e.Delta
			}
		case protocol.EventOutputItemDone:
			s.done = append(s.done, e.Item)
			switch it := e.Item.(type) {
			case *protocol.Message:
				if len(it.Content) == 1 {
					msgs.check(it.ID, it.Content[0].Text, problem)
				}
			case *protocol.Reasoning:
				var text strings.Builder
				for _, c := range it.Content {
					text.WriteString(c.Text)
				}
				rsns.check(it.ID, text.String(), problem)
			}
		case protocol.EventCompleted, protocol.EventFailed:
			s.terminal = e
		}
	}
	if s.terminal != nil && s.terminal.Type == protocol.EventCompleted {
		// A completed stream closes every message and reasoning item.
		for _, a := range s.added {
			switch a.(type) {
			case *protocol.Message, *protocol.Reasoning:
				if id := itemID(a); !hasDone(s.done, id) {
					problem("%s item %q was added but is not done on a completed stream", a.ItemType(), id)
				}
			}
		}
	}
	s.text, s.textBlocks, s.reasoning = sb.String(), msgs.blocks, rb.String()
	return s
}

func hasDone(done []protocol.ResponseItem, id string) bool {
	for _, d := range done {
		if itemID(d) == id {
			return true
		}
	}
	return false
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
	metadata                                     json.RawMessage // Extra[ProviderMetadataKey]
}

// payload is what the call carries: the arguments of a function call, the
// input of a custom tool call.
func (c toolCall) payload() string {
	if c.kind == "custom" {
		return c.input
	}
	return c.arguments
}

func (s *summary) toolCalls() []toolCall {
	var out []toolCall
	for _, it := range s.done {
		switch c := it.(type) {
		case *protocol.FunctionCall:
			out = append(out, toolCall{kind: "function", itemID: c.ID, callID: c.CallID, name: c.Name, arguments: c.Arguments, metadata: c.Extra[ProviderMetadataKey]})
		case *protocol.CustomToolCall:
			out = append(out, toolCall{kind: "custom", itemID: c.ID, callID: c.CallID, name: c.Name, input: c.Input, metadata: c.Extra[ProviderMetadataKey]})
		}
	}
	return out
}

// ignoredKeys are expectation keys the engine events cannot express (the
// upstream's own finish reason, Anthropic block indices, raw native
// counters).
var ignoredKeys = map[string]bool{
	"native_finish_reason": true, "usage_partial": true,
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
	for _, k := range sortedKeys(expected) {
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
			// Such a call must not be emitted: not under its id, nor, when
			// no expected tool call has its name, under its name.
			expectedNames := map[any]bool{}
			if calls, ok := expected["tool_calls"].([]any); ok {
				for _, c := range calls {
					expectedNames[c.(map[string]any)["name"]] = true
				}
			}
			for _, w := range want.([]any) {
				w := w.(map[string]any)
				for _, c := range s.toolCalls() {
					if c.callID == w["id"] || (w["name"] != nil && c.name == w["name"] && !expectedNames[c.name]) {
						fail("%s entry %v (%v) was emitted as a client tool call", k, w["id"], w["name"])
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
				"input_tokens":             u.InputTokens,
				"cached_input_tokens":      u.CachedInputTokens,
				"cache_write_input_tokens": u.CacheWriteInputTokens,
				"output_tokens":            u.OutputTokens,
				"reasoning_output_tokens":  u.ReasoningOutputTokens,
				"total_tokens":             u.TotalTokens,
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
			// Completed and failed events both carry the response id.
			if term == nil || term.ResponseID != want {
				fail("terminal response_id = %q, want %q", responseID(term), want)
			}
		case "finish_reason":
			// The completed event's, normalized; "error" stands for an
			// upstream error, null for none (a truncated stream).
			got := ""
			switch {
			case completed:
				got = term.FinishReason
			case term != nil && term.Error != nil && term.Error.Kind == protocol.ErrKindUpstream:
				got = "error"
			}
			if want == nil {
				want = ""
			}
			if got != want {
				fail("finish_reason = %q, want %q", got, want)
			}
		case "model":
			if s.model != want {
				fail("server_model = %q, want %q", s.model, want)
			}
		case "terminal", "status":
			var wantType protocol.EventType
			var wantKind string
			switch want {
			case "message_stop", "response.completed", "response.incomplete", "completed", "incomplete", "done_marker", "finish_without_done":
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
		case "source_field":
			// The chat field the reasoning came in: not kept in events.
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

// stringField is the string member of c that the expectation key k
// compares, with the name a failure gives it; ok is false for another k.
func (c toolCall) stringField(k string) (got, label string, ok bool) {
	switch k {
	case "id":
		return c.callID, "call_id", true
	case "item_id":
		return c.itemID, "item id", true
	case "name":
		return c.name, "name", true
	case "kind":
		return c.kind, "kind", true
	case "arguments":
		return c.arguments, "arguments", true
	case "input":
		return c.input, "input", true
	}
	return "", "", false
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
			if got, label, ok := c.stringField(k); ok {
				if got != v {
					fail("tool call %d: %s %q, want %q", i, label, got, v)
				}
				continue
			}
			switch k {
			case "index":
				if float64(i) != v {
					fail("tool call %d: index %v", i, v)
				}
			case "arguments_json":
				var got any
				dec := json.NewDecoder(bytes.NewReader([]byte(c.arguments)))
				if err := dec.Decode(&got); err != nil {
					fail("tool call %d: arguments %q are not JSON: %v", i, c.arguments, err)
				} else if !reflect.DeepEqual(got, v) {
					fail("tool call %d: arguments_json %v, want %v", i, got, v)
				}
			case "arguments_len_bytes":
				if float64(len(c.payload())) != v {
					fail("tool call %d: %d bytes of arguments, want %v", i, len(c.payload()), v)
				}
			case "arguments_sha256":
				if sum := sha256.Sum256([]byte(c.payload())); hex.EncodeToString(sum[:]) != v {
					fail("tool call %d: arguments sha256 %x, want %v", i, sum, v)
				}
			case "arguments_prefix":
				if p, _ := v.(string); !strings.HasPrefix(c.payload(), p) {
					fail("tool call %d: arguments %.80q lack the prefix %q", i, c.payload(), v)
				}
			case "decoded_content_len_runes":
				// The runes of the "content" member of the JSON arguments.
				var args struct{ Content string }
				if err := json.Unmarshal([]byte(c.payload()), &args); err != nil || float64(utf8.RuneCountInString(args.Content)) != v {
					fail("tool call %d: content of %d runes (%v), want %v", i, utf8.RuneCountInString(args.Content), err, v)
				}
			case "provider_metadata":
				var got any
				if err := json.Unmarshal(c.metadata, &got); err != nil || !reflect.DeepEqual(got, v) {
					fail("tool call %d: provider metadata %s, want %v", i, c.metadata, v)
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
	if e.Message == "" {
		fail("failed event without an error message")
	}
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
		if v == nil {
			// null: the field is absent (its zero value).
			if !reflect.ValueOf(got).IsZero() {
				fail("error.%s = %v, want none", k, got)
			}
			continue
		}
		if got != v {
			fail("error.%s = %v, want %v", k, got, v)
		}
	}
}

func responseID(term *protocol.ResponseEvent) string {
	if term == nil {
		return ""
	}
	return term.ResponseID
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
