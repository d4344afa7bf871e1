package protocol

import (
	"encoding/json"
	"testing"
)

func TestItemIDAndStatus(t *testing.T) {
	callID := "c"
	cases := []struct {
		item      ResponseItem
		id        string
		status    string // ItemStatus before
		hasStatus bool   // WithStatus sets one
	}{
		{&Message{ID: "m", Role: RoleAssistant, Extra: Extra{"status": json.RawMessage(`"in_progress"`)}}, "m", "in_progress", true},
		{&Reasoning{ID: "r"}, "r", "", false},
		{&FunctionCall{ID: "f", Name: "n", CallID: "c"}, "f", "", true},
		{&CustomToolCall{ID: "x", Status: "completed"}, "x", "completed", true},
		{&LocalShellCall{ID: "l", CallID: &callID, Status: "in_progress"}, "l", "in_progress", true},
		{&FunctionCallOutput{ID: "o", CallID: "c"}, "o", "", false},
		{&CustomToolCallOutput{ID: "co"}, "co", "", false},
		{&ToolSearchCall{ID: "ts", Status: "completed"}, "ts", "completed", true},
		{&ToolSearchOutput{ID: "to"}, "to", "", true},
		{&WebSearchCall{ID: "w"}, "w", "", true},
		{&OtherItem{Type: "image_generation_call", Raw: json.RawMessage(`{"type":"image_generation_call","id":"ig","status":"generating"}`)}, "ig", "generating", false},
		{&OtherItem{Type: "compaction"}, "", "", false},
	}
	for _, c := range cases {
		before, err := MarshalItem(c.item)
		if err != nil {
			t.Fatal(err)
		}
		if got := ItemID(c.item); got != c.id {
			t.Errorf("%s: ItemID %q, want %q", before, got, c.id)
		}
		if got := ItemStatus(c.item); got != c.status {
			t.Errorf("%s: ItemStatus %q, want %q", before, got, c.status)
		}
		renamed := WithItemID(c.item, "new_id")
		if ItemID(renamed) != "new_id" || renamed.ItemType() != c.item.ItemType() {
			t.Errorf("%s: WithItemID gave %T id %q", before, renamed, ItemID(renamed))
		}
		if _, err := MarshalItem(renamed); err != nil {
			t.Errorf("%s: renamed item does not encode: %v", before, err)
		}
		set := WithStatus(c.item, StatusCompleted, false)
		if got := ItemStatus(set) == StatusCompleted; got != c.hasStatus {
			t.Errorf("%s: WithStatus set a status: %v, want %v", before, got, c.hasStatus)
		}
		kept := WithStatus(c.item, StatusIncomplete, true)
		if c.status != "" && ItemStatus(kept) != c.status {
			t.Errorf("%s: WithStatus(onlyIfUnset) replaced %q", before, c.status)
		}
		after, _ := MarshalItem(c.item)
		if string(after) != string(before) {
			t.Errorf("the item was modified:\n%s\n%s", before, after)
		}
	}
	// An unmodelled item without raw JSON gets its type with the id.
	b, err := MarshalItem(WithItemID(&OtherItem{Type: "compaction"}, "k"))
	if err != nil || string(b) != `{"id":"k","type":"compaction"}` {
		t.Errorf("%s %v", b, err)
	}
	// Nil items and raw JSON that is not an object come back as they are.
	if WithItemID(nil, "x") != nil {
		t.Error("nil item")
	}
	odd := &OtherItem{Type: "x", Raw: json.RawMessage(`[1]`)}
	if WithItemID(odd, "x") != ResponseItem(odd) {
		t.Error("non-object raw item changed")
	}
}

func TestReferencedID(t *testing.T) {
	items, err := decodeItems(`[{"type":"item_reference","id":"msg_1"},{"type":"item_reference"},{"type":"message","role":"user","content":[],"id":"msg_2"}]`)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		id string
		ok bool
	}{{"msg_1", true}, {"", true}, {"", false}} {
		id, ok := ReferencedID(items[i])
		if id != want.id || ok != want.ok {
			t.Errorf("item %d: %q %v, want %q %v", i, id, ok, want.id, want.ok)
		}
	}
}

func decodeItems(s string) (Items, error) {
	var items Items
	err := json.Unmarshal([]byte(s), &items)
	return items, err
}

func TestItemIDPrefix(t *testing.T) {
	for typ, want := range map[string]string{TypeMessage: "msg", TypeReasoning: "rs", TypeFunctionCall: "fc",
		TypeCustomToolCall: "ctc", TypeLocalShellCall: "lsh", "image_generation_call": "item"} {
		if got := ItemIDPrefix(typ); got != want {
			t.Errorf("%s: %q, want %q", typ, got, want)
		}
	}
}

func TestRequestDefaults(t *testing.T) {
	var r ResponsesRequest
	if !r.ParallelCalls() || !r.Stores() {
		t.Error("absent parallel_tool_calls and store are true")
	}
	f := false
	r.ParallelToolCalls, r.Store = &f, &f
	if r.ParallelCalls() || r.Stores() {
		t.Error("false as sent")
	}
}
