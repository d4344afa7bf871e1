package kimicode

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

func userMsg(text string) *protocol.Message {
	return &protocol.Message{Role: protocol.RoleUser, Content: []protocol.ContentItem{{Type: protocol.ContentInputText, Text: text}}}
}

// The cache key: the conversation key when there is one, else a hash of the
// model and the first prompt — the same for every turn of a conversation,
// different for another conversation.
func TestCacheKey(t *testing.T) {
	env := func(key, model string, items ...protocol.ResponseItem) *harness.Env {
		return &harness.Env{ConversationKey: key, Request: &protocol.ResponsesRequest{Model: model, Input: items}}
	}
	if got := CacheKey(env("019b-abc", "m", userMsg("hi"))); got != "session_019b-abc" {
		t.Errorf("with a conversation key: %q", got)
	}
	first := CacheKey(env("", "m", userMsg("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"), userMsg("fix the bug")))
	later := CacheKey(env("", "m", userMsg("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"), userMsg("fix the bug"),
		&protocol.Message{Role: protocol.RoleAssistant, Content: []protocol.ContentItem{{Type: protocol.ContentOutputText, Text: "done"}}}, userMsg("thanks")))
	if first != later {
		t.Errorf("two turns of one conversation: %q and %q", first, later)
	}
	if !regexp.MustCompile(`^session_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(first) {
		t.Errorf("derived key %q is not session_<uuid shape>", first)
	}
	for _, other := range []string{CacheKey(env("", "m", userMsg("another task"))), CacheKey(env("", "m2", userMsg("fix the bug")))} {
		if other == first {
			t.Errorf("another conversation got the same key %q", other)
		}
	}
}

func calls(ids ...string) []request.Message {
	var ts []request.Message
	for _, id := range ids {
		ts = append(ts, request.Message{Role: request.RoleAssistant, Calls: []request.Call{{ID: id, Name: "Bash"}}},
			request.Message{Role: request.RoleTool, CallID: id})
	}
	return ts
}

func TestKimiIDs(t *testing.T) {
	long := strings.Repeat("x", 70)
	ts := calls("call_1", "call:1", "call/1", "toolu-ok", long, "call:1")
	kimiIDs(ts)
	want := []string{"call_1", "call_1_2", "call_1_3", "toolu-ok", strings.Repeat("x", 64), "call_1_2"}
	for i, w := range want {
		c, o := ts[2*i].Calls[0].ID, ts[2*i+1].CallID
		if c != w || o != w {
			t.Errorf("id %d: call %q, output %q, want %q", i, c, o, w)
		}
	}
	ts = calls("Glob:0", "a/b")
	forkIDs(ts)
	if ts[0].Calls[0].ID != "Glob_0" || ts[1].CallID != "Glob_0" || ts[2].Calls[0].ID != "a/b" {
		t.Errorf("fork ids: %+v", ts)
	}
}

func reader(fsys fstest.MapFS) DirReader {
	return func(sub string) ([]fs.DirEntry, bool, error) {
		ents, err := fs.ReadDir(fsys, sub)
		return ents, false, err
	}
}

func TestListing(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md": {}, "b.txt": {}, "Apple.txt": {},
		"src/main.go": {}, "src/util/x.go": {},
		".git/HEAD": {},
	}
	for i := 0; i < 12; i++ {
		fsys["many/f"+string(rune('a'+i))] = &fstest.MapFile{}
	}
	want := strings.Join([]string{
		"├── .git/",
		"├── many/",
		"│   ├── fa", "│   ├── fb", "│   ├── fc", "│   ├── fd", "│   ├── fe",
		"│   ├── ff", "│   ├── fg", "│   ├── fh", "│   ├── fi", "│   ├── fj",
		"│   └── ... and 2 more",
		"├── src/",
		"│   ├── util/",
		"│   └── main.go",
		"├── Apple.txt",
		"├── b.txt",
		"└── README.md",
	}, "\n")
	if got := Listing(reader(fsys)); got != want {
		t.Errorf("listing:\n%s\nwant:\n%s", got, want)
	}
	if got := Listing(reader(fstest.MapFS{})); got != "(empty directory)" {
		t.Errorf("empty: %q", got)
	}
	if got := Listing(func(string) ([]fs.DirEntry, bool, error) { return nil, false, fs.ErrPermission }); got != "[not readable]" {
		t.Errorf("unreadable: %q", got)
	}
}

func TestWithReminders(t *testing.T) {
	r := reminders{date: "DATE", auto: "AUTO"}
	ts := []request.Message{
		{Role: request.RoleSystem, Content: request.TextParts("sys")},
		{Role: request.RoleUser, Content: request.TextParts("one")},
		{Role: request.RoleAssistant, Content: request.TextParts("ok")},
		{Role: request.RoleUser, Content: request.TextParts("AUTO")},
		{Role: request.RoleUser, Content: request.TextParts("two")},
	}
	var got []string
	for _, m := range withReminders(ts, r) {
		got = append(got, m.Role+":"+textOf(m))
	}
	want := "system:sys user:one user:DATE user:AUTO assistant:ok user:AUTO user:two user:AUTO"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}
