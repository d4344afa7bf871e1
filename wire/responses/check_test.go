package responses_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// checkWellFormed fails t for every rule of the Responses event stream that
// b breaks (see wellFormed).
func checkWellFormed(t *testing.T, b []byte) {
	t.Helper()
	for _, p := range wellFormed(b) {
		t.Error(p)
	}
}

// requiredResponseFields are the Response object's fields that the openai
// SDKs' types require (and a few more every object of ours carries).
var requiredResponseFields = []string{"id", "object", "created_at", "status", "error", "incomplete_details",
	"instructions", "metadata", "model", "output", "parallel_tool_calls", "temperature", "tool_choice", "tools",
	"top_p", "usage", "store", "text", "truncation", "reasoning"}

// wellFormed lists what is wrong with an event stream, by the rules of the
// Responses API as its clients read it:
//
//   - every event is one "event:" line and one "data:" line; the name is
//     the payload's type; sequence numbers count from 0;
//   - exactly one terminal event, and it is last;
//   - one item at a time: an item is added only when the previous one is
//     done; output indexes count from 0; item ids are unique and the same
//     from added to done;
//   - every event naming an item (item_id, output_index) names the open
//     one, and a reasoning or content part is open when its deltas come;
//   - an assistant message is announced with no content (its part comes
//     with content_part.added), a function call with empty arguments;
//   - the openai SDKs' accumulation of the events gives, at each
//     output_item.done, the item that event carries (no duplicate part,
//     no lost text) and, at the end, the terminal response's output;
//   - every Response object has the fields the SDK types require; usage is
//     null until the terminal event; a failed response has an error, an
//     incomplete one its reason.
func wellFormed(b []byte) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	blocks := strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n")
	var (
		open     = -1 // output index of the open item
		next     = 0  // output index of the next item
		ids      = map[string]int{}
		openPart = "" // "summary:N" or "content:N" of the open part
		snapshot []map[string]any
		ended    bool
	)
	for i, block := range blocks {
		lines := strings.Split(block, "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			bad("event %d is not one event line and one data line: %q", i, block)
			return problems
		}
		name := strings.TrimPrefix(lines[0], "event: ")
		var ev map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "data: ")), &ev); err != nil {
			bad("event %d: bad JSON: %v", i, err)
			return problems
		}
		if ev["type"] != name {
			bad("event %d: name %q, type %v", i, name, ev["type"])
		}
		if ev["sequence_number"] != float64(i) {
			bad("event %d: sequence_number %v", i, ev["sequence_number"])
		}
		if ended {
			bad("event %d (%s) after the terminal event", i, name)
		}
		idx, hasIdx := ev["output_index"].(float64)
		if itemID, ok := ev["item_id"].(string); ok && name != "response.output_item.added" {
			if !hasIdx || int(idx) != open || ids[itemID] != open+1 {
				bad("event %d (%s): item %q at output_index %v, the open item is %d", i, name, itemID, ev["output_index"], open)
			}
		}
		item := func() map[string]any {
			if !hasIdx || int(idx) < 0 || int(idx) >= len(snapshot) {
				bad("event %d (%s): output_index %v has no item", i, name, ev["output_index"])
				return map[string]any{}
			}
			return snapshot[int(idx)]
		}
		switch name {
		case "response.created", "response.in_progress":
			r, _ := ev["response"].(map[string]any)
			checkResponse(bad, i, r, "in_progress")
			if r["usage"] != nil || len(asSlice(r["output"])) != 0 {
				bad("event %d: usage %v, output %v before the response completed", i, r["usage"], r["output"])
			}
		case "response.output_item.added":
			it, _ := ev["item"].(map[string]any)
			if open >= 0 {
				bad("event %d: item added while item %d is open", i, open)
			}
			if !hasIdx || int(idx) != next {
				bad("event %d: output_index %v, want %d", i, ev["output_index"], next)
			}
			id, _ := it["id"].(string)
			if id == "" {
				bad("event %d: item without id: %v", i, it)
			} else if _, dup := ids[id]; dup {
				bad("event %d: item id %q used twice", i, id)
			}
			ids[id] = next + 1
			open, next = next, next+1
			switch it["type"] {
			case "message":
				if it["role"] == "assistant" && len(asSlice(it["content"])) != 0 {
					bad("event %d: assistant message announced with content %v", i, it["content"])
				}
			case "function_call":
				if it["arguments"] != "" || it["call_id"] == nil || it["name"] == nil {
					bad("event %d: function call announced as %v", i, it)
				}
			case "reasoning":
				if len(asSlice(it["summary"])) != 0 || len(asSlice(it["content"])) != 0 {
					bad("event %d: reasoning announced with parts %v", i, it)
				}
			}
			snapshot = append(snapshot, clone(it))
		case "response.output_item.done":
			it, _ := ev["item"].(map[string]any)
			if !hasIdx || int(idx) != open {
				bad("event %d: done for output_index %v, the open item is %d", i, ev["output_index"], open)
			}
			if id, _ := it["id"].(string); ids[id] != int(idx)+1 {
				bad("event %d: item id %q at done, not the id added at %v", i, id, ev["output_index"])
			}
			if openPart != "" {
				bad("event %d: item done while its part %s is open", i, openPart)
			}
			acc := item()
			for _, k := range []string{"content", "summary", "arguments", "input"} {
				if want, ok := it[k]; ok && !sameText(acc[k], want) {
					bad("event %d: the accumulated %s is %v, the done item's %v", i, k, acc[k], want)
				}
			}
			if t := it["type"]; (t == "function_call" || t == "custom_tool_call") && it["status"] == nil {
				bad("event %d: %s done without status", i, t)
			}
			if hasIdx && int(idx) < len(snapshot) {
				snapshot[int(idx)] = clone(it)
			}
			open = -1
		case "response.content_part.added":
			it := item()
			part, _ := ev["part"].(map[string]any)
			if openPart != "" {
				bad("event %d: content part added while part %s is open", i, openPart)
			}
			openPart = fmt.Sprintf("content:%v", ev["content_index"])
			if ci, _ := ev["content_index"].(float64); int(ci) != len(asSlice(it["content"])) {
				bad("event %d: content part %v added after %d parts", i, ev["content_index"], len(asSlice(it["content"])))
			}
			it["content"] = append(asSlice(it["content"]), clone(part))
		case "response.content_part.done":
			if want := fmt.Sprintf("content:%v", ev["content_index"]); openPart != want {
				bad("event %d: part %s done, the open part is %q", i, want, openPart)
			}
			openPart = ""
			setPart(bad, i, item(), "content", ev["content_index"], ev["part"])
		case "response.reasoning_summary_part.added":
			it := item()
			if openPart != "" {
				bad("event %d: summary part added while part %s is open", i, openPart)
			}
			openPart = fmt.Sprintf("summary:%v", ev["summary_index"])
			if si, _ := ev["summary_index"].(float64); int(si) != len(asSlice(it["summary"])) {
				bad("event %d: summary part %v added after %d parts", i, ev["summary_index"], len(asSlice(it["summary"])))
			}
			it["summary"] = append(asSlice(it["summary"]), clone(ev["part"].(map[string]any)))
		case "response.reasoning_summary_part.done":
			if want := fmt.Sprintf("summary:%v", ev["summary_index"]); openPart != want {
				bad("event %d: part %s done, the open part is %q", i, want, openPart)
			}
			openPart = ""
			setPart(bad, i, item(), "summary", ev["summary_index"], ev["part"])
		case "response.output_text.delta", "response.reasoning_text.delta", "response.reasoning_summary_text.delta",
			"response.output_text.done", "response.reasoning_text.done", "response.reasoning_summary_text.done":
			list, key := "content", "content_index"
			if strings.HasPrefix(name, "response.reasoning_summary") {
				list, key = "summary", "summary_index"
			}
			if want := fmt.Sprintf("%s:%v", list, ev[key]); openPart != want {
				bad("event %d (%s): the open part is %q", i, name, openPart)
			}
			parts := asSlice(item()[list])
			k, _ := ev[key].(float64)
			if int(k) < 0 || int(k) >= len(parts) {
				bad("event %d (%s): no part %v", i, name, ev[key])
				continue
			}
			p := parts[int(k)].(map[string]any)
			if strings.HasSuffix(name, ".delta") {
				p["text"] = p["text"].(string) + ev["delta"].(string)
			} else {
				p["text"] = ev["text"]
			}
		case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
			k := map[bool]string{true: "arguments", false: "input"}[strings.Contains(name, "function")]
			it := item()
			s, _ := it[k].(string)
			it[k] = s + ev["delta"].(string)
		case "response.function_call_arguments.done":
			item()["arguments"] = ev["arguments"]
		case "response.custom_tool_call_input.done":
			item()["input"] = ev["input"]
		case "response.completed", "response.incomplete", "response.failed":
			ended = true
			if open >= 0 && name != "response.failed" {
				bad("event %d: %s while item %d is open", i, name, open)
			}
			r, _ := ev["response"].(map[string]any)
			status := strings.TrimPrefix(name, "response.")
			checkResponse(bad, i, r, status)
			if name == "response.failed" {
				continue
			}
			out := asSlice(r["output"])
			if len(out) != len(snapshot) {
				bad("event %d: output has %d items, %d were streamed", i, len(out), len(snapshot))
			} else if !reflect.DeepEqual(out, anySlice(snapshot)) {
				bad("event %d: output differs from the streamed items:\n%v\n%v", i, out, snapshot)
			}
		default:
			bad("event %d: unexpected event %s", i, name)
		}
	}
	if !ended {
		bad("no terminal event")
	}
	return problems
}

func checkResponse(bad func(string, ...any), i int, r map[string]any, status string) {
	if r == nil {
		bad("event %d: no response object", i)
		return
	}
	for _, k := range requiredResponseFields {
		if _, ok := r[k]; !ok {
			bad("event %d: response object without %q", i, k)
		}
	}
	if r["status"] != status || r["object"] != "response" {
		bad("event %d: status %v object %v, want %s", i, r["status"], r["object"], status)
	}
	if _, ok := r["model"].(string); !ok {
		bad("event %d: model %v is not a string", i, r["model"])
	}
	switch status {
	case "failed":
		if e, _ := r["error"].(map[string]any); e == nil || e["message"] == "" || e["code"] == nil {
			bad("event %d: failed response with error %v", i, r["error"])
		}
	case "incomplete":
		if d, _ := r["incomplete_details"].(map[string]any); d == nil || d["reason"] == "" {
			bad("event %d: incomplete response with details %v", i, r["incomplete_details"])
		}
	default:
		if r["error"] != nil || r["incomplete_details"] != nil {
			bad("event %d: %s response with error %v, incomplete_details %v", i, status, r["error"], r["incomplete_details"])
		}
	}
}

func setPart(bad func(string, ...any), i int, it map[string]any, list string, index, part any) {
	parts := asSlice(it[list])
	k, _ := index.(float64)
	if int(k) < 0 || int(k) >= len(parts) {
		bad("event %d: no %s part %v", i, list, index)
		return
	}
	p, _ := part.(map[string]any)
	parts[int(k)] = clone(p)
}

// sameText compares the accumulated and the done value of a field: parts
// by type and text (annotations and other extras aside).
func sameText(acc, want any) bool {
	a, w := asSlice(acc), asSlice(want)
	if a == nil && w == nil {
		as, _ := acc.(string)
		ws, _ := want.(string)
		return as == ws
	}
	if len(a) != len(w) {
		return false
	}
	for i := range a {
		ap, _ := a[i].(map[string]any)
		wp, _ := w[i].(map[string]any)
		if ap["type"] != wp["type"] || ap["text"] != wp["text"] {
			return false
		}
	}
	return true
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func anySlice(s []map[string]any) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func clone(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	return c
}
