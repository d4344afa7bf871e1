package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/protocol"
)

func decodeReq(t *testing.T, s string) *protocol.ResponsesRequest {
	t.Helper()
	r, err := protocol.DecodeRequest([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const (
	devBase  = `{"type":"message","role":"developer","content":[{"type":"input_text","text":"BASE"}]}`
	devPerm  = `{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>x</permissions instructions>"}]}`
	userTask = `{"type":"message","role":"user","content":[{"type":"input_text","text":"task"}]}`
	addTools = `{"type":"additional_tools","role":"developer","tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}]}`
)

func TestHarnessRequest(t *testing.T) {
	tests := []struct {
		name      string
		req       string
		wantInstr string
		wantItems int // input items left
		wantTools []string
		wantErr   string
	}{
		{"base first", `{"input":[` + devBase + `,` + devPerm + `,` + userTask + `]}`, "BASE", 2, nil, ""},
		{"instructions kept", `{"instructions":"OLD","input":[` + devBase + `,` + userTask + `]}`, "OLD", 2, nil, ""},
		{"contextual only is no base", `{"input":[` + devPerm + `,` + userTask + `]}`, "", 2, nil, ""},
		{"after a user message is no base", `{"input":[` + userTask + `,` + devBase + `]}`, "", 2, nil, ""},
		{"additional_tools skipped and taken", `{"tools":[{"type":"function","name":"f"}],"input":[` + addTools + `,` + devBase + `,` + userTask + `]}`,
			"BASE", 1, []string{"f", "exec_command"}, ""},
		{"malformed additional_tools", `{"input":[{"type":"additional_tools","tools":"nope"},` + userTask + `]}`, "", 0, nil, "input[0]: additional_tools"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := decodeReq(t, tt.req)
			before := len(req.Input)
			got, err := HarnessRequest(req)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Instructions != tt.wantInstr || len(got.Input) != tt.wantItems {
				t.Errorf("instructions %q, %d items; want %q, %d", got.Instructions, len(got.Input), tt.wantInstr, tt.wantItems)
			}
			var names []string
			for _, s := range got.Tools {
				names = append(names, s.Name)
			}
			if tt.wantTools != nil && strings.Join(names, ",") != strings.Join(tt.wantTools, ",") {
				t.Errorf("tools %v, want %v", names, tt.wantTools)
			}
			if len(req.Input) != before {
				t.Error("the client's request was changed")
			}
		})
	}
}

func TestProjectDocs(t *testing.T) {
	msg := func(text string) protocol.ResponseItem {
		return &protocol.Message{Role: protocol.RoleUser, Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: text}}}
	}
	items := []protocol.ResponseItem{
		msg("# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nrule one\n</INSTRUCTIONS>"),
		msg("# agents.md instructions for /w\n\n<instructions>\nrule one\n</instructions>"), // the same text again
		msg("# AGENTS.md instructions\n<INSTRUCTIONS>\n  \n</INSTRUCTIONS>"),                // blank
		msg("Please read # AGENTS.md instructions <INSTRUCTIONS>x</INSTRUCTIONS>"),          // the user's words
		msg("# AGENTS.md instructions for /w/sub\n\n<INSTRUCTIONS>\nrule two\n</INSTRUCTIONS>"),
	}
	got := ProjectDocs(items)
	if len(got) != 2 || got[0] != (ProjectDoc{Dir: "/w", Text: "rule one"}) || got[1] != (ProjectDoc{Dir: "/w/sub", Text: "rule two"}) {
		t.Errorf("ProjectDocs = %+v", got)
	}
	if got[1].Source() != "/w/sub/AGENTS.md" || (ProjectDoc{}).Source() != "AGENTS.md" {
		t.Errorf("sources %q %q", got[1].Source(), (ProjectDoc{}).Source())
	}
}

func TestTurnTime(t *testing.T) {
	clock := time.Date(2030, 5, 6, 7, 8, 9, 10, time.UTC)
	const key = "019b7d3c-1a2b-7c3d-8e4f-0123456789ab" // UUIDv7: 2026-01-02 05:44:09.515 UTC
	start := time.Date(2026, 1, 2, 5, 44, 9, 515000000, time.UTC)
	tests := []struct {
		name string
		ws   Workspace
		key  string
		want time.Time
	}{
		{"date and a key of that day", Workspace{Date: "2026-01-02"}, key, start},
		{"date and a key of another day", Workspace{Date: "2026-01-05"}, key, time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)},
		{"date without a key", Workspace{Date: "2026-01-05"}, "conv-1", time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)},
		{"key without a date", Workspace{}, key, start},
		{"neither", Workspace{}, "", time.Date(2030, 5, 6, 0, 0, 0, 0, time.UTC)},
		{"a UUIDv4 key", Workspace{}, "019b7d3c-1a2b-4c3d-8e4f-0123456789ab", time.Date(2030, 5, 6, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		if got := turnTime(tt.ws, tt.key, clock); !got.Equal(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
