package bridge

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/harnessflow/harnessflow/protocol"
)

// opencode is an opencode-like bridge table.
var opencode = Table{
	ShellSpec{Tool: "bash", Workdir: "workdir", Timeout: "timeout", Plain: true}.Mapping(),
	ReadSpec{Tool: "read", Path: "filePath"}.Mapping(),
	WriteSpec{Tool: "write", Path: "filePath"}.Mapping(),
	EditSpec{Tool: "edit", Path: "filePath", Old: "oldString", New: "newString", ReplaceAll: "replaceAll"}.Mapping(),
	GlobSpec{Tool: "glob"}.Mapping(),
	GrepSpec{Tool: "grep"}.Mapping(),
}

// claude is a claude-code-like bridge table.
var claude = Table{
	ShellSpec{Tool: "Bash", Workdir: NoKey, Plain: true}.Mapping(),
	ReadSpec{Tool: "Read", Path: "file_path", DefaultLimit: 2000}.Mapping(),
	WriteSpec{Tool: "Write", Path: "file_path"}.Mapping(),
	EditSpec{Tool: "Edit", Path: "file_path"}.Mapping(),
	GlobSpec{Tool: "Glob"}.Mapping(),
	GrepSpec{Tool: "Grep", Include: "glob"}.Mapping(),
}

func TestTableLookupValidate(t *testing.T) {
	if err := opencode.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := claude.Validate(); err != nil {
		t.Fatal(err)
	}
	if m, ok := opencode.Lookup("edit"); !ok || m.Tool != "edit" || m.Plain {
		t.Errorf("Lookup(edit) = %+v %v", m.Tool, ok)
	}
	if _, ok := opencode.Lookup("Edit"); ok {
		t.Error("Lookup is case-sensitive")
	}
	shell := func(json.RawMessage) (ShellCall, error) { return ShellCall{}, nil }
	for name, tc := range map[string]struct {
		t    Table
		want string
	}{
		"no name":     {Table{{Shell: shell}}, "no tool name"},
		"space":       {Table{{Tool: "a b", Shell: shell}}, "white space"},
		"no shell":    {Table{{Tool: "a"}}, "no Shell"},
		"twice":       {Table{{Tool: "a", Shell: shell}, {Tool: "a", Shell: shell}}, "mapped twice"},
		"two plain":   {Table{{Tool: "a", Shell: shell, Plain: true}, {Tool: "b", Shell: shell, Plain: true}}, "both Plain"},
		"empty is ok": {nil, ""},
	} {
		err := tc.t.Validate()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

func TestSpecs(t *testing.T) {
	tests := map[string]struct {
		table Table
		tool  string
		args  string
		want  ShellCall // Script compared after the tag line
		err   string
	}{
		"bash":              {opencode, "bash", `{"command":"ls -la","workdir":"/w","timeout":120000,"description":"list"}`, ShellCall{Script: "ls -la", Workdir: "/w", TimeoutMS: 120000}, ""},
		"bash argv":         {opencode, "bash", `{"command":["ls","-la"]}`, ShellCall{Argv: []string{"ls", "-la"}}, ""},
		"bash string time":  {opencode, "bash", `{"command":"x","timeout":"5000"}`, ShellCall{Script: "x", TimeoutMS: 5000}, ""},
		"Bash no workdir":   {claude, "Bash", `{"command":"pwd","workdir":"/ignored","run_in_background":false}`, ShellCall{Script: "pwd"}, ""},
		"bash missing":      {opencode, "bash", `{"description":"x"}`, ShellCall{}, "command: missing"},
		"bash empty argv":   {opencode, "bash", `{"command":[]}`, ShellCall{}, "command: empty"},
		"bash bad json":     {opencode, "bash", `{"command":`, ShellCall{}, "unexpected end"},
		"bash not object":   {opencode, "bash", `["ls"]`, ShellCall{}, "not a JSON object"},
		"bash bad timeout":  {opencode, "bash", `{"command":"x","timeout":true}`, ShellCall{}, "timeout: want a number"},
		"read":              {opencode, "read", `{"filePath":"a b.go","offset":10,"limit":5}`, ShellCall{Script: ReadCommand("a b.go", 10, 5)}, ""},
		"read default":      {claude, "Read", `{"file_path":"/x"}`, ShellCall{Script: ReadCommand("/x", 0, 2000)}, ""},
		"read zero based":   {Table{ReadSpec{Tool: "r", ZeroBased: true}.Mapping()}, "r", `{"path":"f","offset":0}`, ShellCall{Script: ReadCommand("f", 1, 0)}, ""},
		"read no path":      {opencode, "read", `{"path":"wrong key"}`, ShellCall{}, "filePath: missing"},
		"read path number":  {opencode, "read", `{"filePath":12}`, ShellCall{}, "filePath: want a string"},
		"write":             {opencode, "write", `{"filePath":"d/f","content":"EOF\n"}`, ShellCall{Script: WriteCommand("d/f", "EOF\n")}, ""},
		"write no content":  {opencode, "write", `{"filePath":"f"}`, ShellCall{Script: WriteCommand("f", "")}, ""},
		"edit":              {opencode, "edit", `{"filePath":"f","oldString":"a","newString":"b","replaceAll":true}`, ShellCall{Script: EditCommand("f", "a", "b", true)}, ""},
		"edit string bool":  {claude, "Edit", `{"file_path":"f","old_string":"a","new_string":"b","replace_all":"false"}`, ShellCall{Script: EditCommand("f", "a", "b", false)}, ""},
		"edit bad bool":     {claude, "Edit", `{"file_path":"f","old_string":"a","new_string":"b","replace_all":"maybe"}`, ShellCall{}, "want a boolean"},
		"edit first error":  {claude, "Edit", `{"old_string":1,"replace_all":"maybe"}`, ShellCall{}, "file_path: missing"},
		"read bad offset":   {opencode, "read", `{"filePath":"f","offset":"x","limit":true}`, ShellCall{}, "offset: want a number"},
		"glob":              {opencode, "glob", `{"pattern":"**/*.go","path":"src"}`, ShellCall{Script: GlobCommand("**/*.go", "src")}, ""},
		"glob no pattern":   {opencode, "glob", `{}`, ShellCall{}, "pattern: missing"},
		"grep":              {claude, "Grep", `{"pattern":"fo+","glob":"*.go","output_mode":"content"}`, ShellCall{Script: GrepCommand("fo+", "", "*.go")}, ""},
		"grep include":      {opencode, "grep", `{"pattern":"x","path":"p","include":"*.{ts,tsx}"}`, ShellCall{Script: GrepCommand("x", "p", "*.{ts,tsx}")}, ""},
		"empty args string": {opencode, "glob", ``, ShellCall{}, "pattern: missing"},
	}
	for name, tc := range tests {
		m, _ := tc.table.Lookup(tc.tool)
		got, err := m.Build(json.RawMessage(tc.args))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !m.Plain {
			tag, _ := Tag(tc.tool, json.RawMessage(tc.args))
			rest, ok := strings.CutPrefix(got.Script, tag)
			if !ok {
				t.Errorf("%s: no tag line in %q", name, got.Script)
			}
			got.Script = rest
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestTag(t *testing.T) {
	got, err := Tag("edit", json.RawMessage("{\n  \"a\": \"<&>\",\n  \"b\": [1, 2]\n}"))
	if want := "# harnessflow-bridge edit {\"a\":\"<&>\",\"b\":[1,2]}\n"; err != nil || got != want {
		t.Errorf("Tag = %q %v, want %q", got, err, want)
	}
	if got, _ := Tag("glob", nil); got != "# harnessflow-bridge glob {}\n" {
		t.Errorf("empty args: %q", got)
	}
	if _, err := Tag("a b", nil); err == nil {
		t.Error("tool with a space tagged")
	}
	if _, err := Tag("x", json.RawMessage("{")); err == nil {
		t.Error("invalid JSON tagged")
	}
	// A bridge command is still a valid shell command: the tag is a comment.
	for _, sh := range shells(t) {
		out, _, code := run(t, sh, t.TempDir(), mustTag(t, "read", `{"x":"it's\n$HOME"}`)+"echo ok")
		if out != "ok\n" || code != 0 {
			t.Errorf("%s: tagged command: %q %d", sh.name, out, code)
		}
	}
}

func mustTag(t *testing.T, tool, args string) string {
	t.Helper()
	s, err := Tag(tool, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// clients are the three client shells, as detected from their tools.
func clients(t *testing.T) map[string]ClientShell {
	return map[string]ClientShell{
		"exec_command": DetectShell(tools(t, codexExecCommand, writeStdin)),
		"argv":         DetectShell(tools(t, argvShell)),
		"local_shell":  DetectShell(tools(t, localShell)),
		"string":       DetectShell(tools(t, shellString)),
	}
}

// clientArgs returns a client item's tool name and arguments as the request
// side sees them in history.
func clientArgs(t *testing.T, item protocol.ResponseItem) (string, string) {
	t.Helper()
	switch v := item.(type) {
	case *protocol.FunctionCall:
		return v.Name, v.Arguments
	case *protocol.LocalShellCall:
		var o jsonObject
		o.strs("command", v.Action.Command)
		if v.Action.WorkingDirectory != nil {
			o.str("working_directory", *v.Action.WorkingDirectory)
		}
		return "local_shell", o.String()
	}
	t.Fatalf("unexpected item %T", item)
	return "", ""
}

// TestReverseRoundTrip: native call → client call → Reverse → the same
// native call, for every generated-command helper, every client shell, and
// arguments with everything that could break a comment line.
func TestReverseRoundTrip(t *testing.T) {
	calls := []struct {
		table Table
		tool  string
		args  string
	}{
		{opencode, "read", `{"filePath":"a b/it's.go","offset":10,"limit":5}`},
		{opencode, "write", `{"filePath":"d/f.txt","content":"EOF\nline two\r\n# harnessflow-bridge read {}\n'\"$HOME\\\u0000<&>\u2028"}`},
		{opencode, "edit", `{"filePath":"f","oldString":"a\nb","newString":"c\n\nd","replaceAll":true}`},
		{opencode, "glob", `{"pattern":"**/*.{go,md}","path":"src dir"}`},
		{opencode, "grep", `{"pattern":"fo+|\\$x","path":".","include":"*.go"}`},
		{claude, "Read", "{\n  \"file_path\": \"/x\"\n}"},
		{claude, "Write", `{"file_path":"/tmp/x","content":""}`},
		{claude, "Edit", `{"file_path":"f","old_string":"x","new_string":"y"}`},
		{claude, "Glob", `{"pattern":"*.ts"}`},
		{claude, "Grep", `{"pattern":"TODO","glob":"*.{ts,tsx}","output_mode":"content","-n":true}`},
	}
	for cname, client := range clients(t) {
		for _, c := range calls {
			m, _ := c.table.Lookup(c.tool)
			sc, err := m.Build(json.RawMessage(c.args))
			if err != nil {
				t.Fatalf("%s: %v", c.tool, err)
			}
			sc.CallID, sc.Workdir, sc.Env, sc.TimeoutMS = "call_1", "/some dir", map[string]string{"K": "v"}, 5000
			item, err := client.Item(sc)
			if err != nil {
				t.Fatalf("%s %s: %v", cname, c.tool, err)
			}
			name, args := clientArgs(t, item)
			tool, nargs, ok := c.table.Reverse(name, args)
			if !ok || tool != c.tool || nargs != compact(t, c.args) {
				t.Errorf("%s: %s: Reverse(%s, %s) = %q %s %v", cname, c.tool, name, args, tool, nargs, ok)
			}
			// ReverseItem gives the same on the item itself.
			tool2, nargs2, ok2 := c.table.ReverseItem(item)
			if tool2 != tool || nargs2 != nargs || ok2 != ok {
				t.Errorf("%s: %s: ReverseItem = %q %s %v", cname, c.tool, tool2, nargs2, ok2)
			}
		}
	}
}

// TestRoundTripRuns runs the client command a bridged write and edit turned
// into, and checks that the files match what the native tool would do.
func TestRoundTripRuns(t *testing.T) {
	content := tricky + "\n# harnessflow-bridge x {}\n"
	for _, sh := range shells(t) {
		dir := t.TempDir()
		client := DetectShell(tools(t, codexExecCommand))
		for _, step := range []struct{ tool, args string }{
			{"write", `{"filePath":"sub/it's.txt","content":` + jsonString(content) + `}`},
			{"edit", `{"filePath":"sub/it's.txt","oldString":"$HOME","newString":"~"}`},
		} {
			m, _ := opencode.Lookup(step.tool)
			sc, err := m.Build(json.RawMessage(step.args))
			if err != nil {
				t.Fatal(err)
			}
			sc.CallID, sc.Workdir = "c", dir
			item, err := client.Item(sc)
			if err != nil {
				t.Fatal(err)
			}
			var a struct{ Cmd, Workdir string }
			if err := json.Unmarshal([]byte(item.(*protocol.FunctionCall).Arguments), &a); err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := run(t, sh, a.Workdir, a.Cmd); code != 0 {
				t.Fatalf("%s: %s: code %d %s", sh.name, step.tool, code, stderr)
			}
		}
		want := strings.Replace(content, "$HOME", "~", 1)
		if got, _ := os.ReadFile(filepath.Join(dir, "sub/it's.txt")); string(got) != want {
			t.Errorf("%s:\n%s", sh.name, cmp.Diff(want, string(got)))
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestReversePlain(t *testing.T) {
	tests := []struct {
		name       string
		table      Table
		clientTool string
		args       string
		tool, want string
		ok         bool
	}{
		{"exec_command", opencode, "exec_command", `{"cmd":"ls -la","workdir":"/w","yield_time_ms":10000}`, "bash", `{"command":"ls -la","workdir":"/w"}`, true},
		{"no workdir", opencode, "exec_command", `{"cmd":"ls"}`, "bash", `{"command":"ls"}`, true},
		{"claude has no workdir", claude, "exec_command", `{"cmd":"ls","workdir":"/it's"}`, "Bash", `{"command":"cd '/it'\\''s' && ls"}`, true},
		{"argv shell", opencode, "shell", `{"command":["bash","-lc","echo hi"],"workdir":"/w"}`, "bash", `{"command":"echo hi","workdir":"/w"}`, true},
		{"argv joined", opencode, "shell", `{"command":["grep","-n","a b","f"]}`, "bash", `{"command":"grep -n 'a b' f"}`, true},
		{"local_shell", opencode, "local_shell", `{"command":["ls"],"timeout_ms":null,"working_directory":"/w"}`, "bash", `{"command":"ls","workdir":"/w"}`, true},
		{"string command", opencode, "shell_command", `{"command":"pwd"}`, "bash", `{"command":"pwd"}`, true},
		{"html stays", opencode, "exec_command", `{"cmd":"a && b > c"}`, "bash", `{"command":"a && b > c"}`, true},
		{"not a shell", opencode, "update_plan", `{"plan":[]}`, "", "", false},
		{"unknown tool with cmd", opencode, "run", `{"cmd":"ls"}`, "", "", false},
		{"bad JSON", opencode, "exec_command", `{"cmd":`, "", "", false},
		{"empty cmd", opencode, "exec_command", `{"cmd":""}`, "", "", false},
		{"no plain mapping", Table{ReadSpec{Tool: "read"}.Mapping()}, "exec_command", `{"cmd":"ls"}`, "", "", false},
		{"tag for another table", claude, "exec_command", `{"cmd":"# harnessflow-bridge read {\"filePath\":\"x\"}\ncat x"}`,
			"Bash", `{"command":"# harnessflow-bridge read {\"filePath\":\"x\"}\ncat x"}`, true},
		{"tag on any client tool", opencode, "run", `{"cmd":"# harnessflow-bridge read {\"filePath\":\"x\"}\ncat x"}`, "read", `{"filePath":"x"}`, true},
		{"broken tag", opencode, "exec_command", `{"cmd":"# harnessflow-bridge read {bad\ncat x"}`, "bash", `{"command":"# harnessflow-bridge read {bad\ncat x"}`, true},
		{"default FromCommand", Table{{Tool: "sh", Plain: true, Shell: func(json.RawMessage) (ShellCall, error) { return ShellCall{}, nil }}},
			"exec_command", `{"cmd":"ls","workdir":"/w"}`, "sh", `{"command":"cd /w && ls"}`, true},
	}
	for _, tc := range tests {
		tool, args, ok := tc.table.Reverse(tc.clientTool, tc.args)
		if tool != tc.tool || args != tc.want || ok != tc.ok {
			t.Errorf("%s: Reverse = %q %s %v, want %q %s %v", tc.name, tool, args, ok, tc.tool, tc.want, tc.ok)
		}
	}
	if _, _, ok := opencode.ReverseItem(&protocol.FunctionCall{Name: "exec_command", Namespace: "functions", Arguments: `{"cmd":"ls"}`}); ok {
		t.Error("namespaced call reversed")
	}
	if _, _, ok := opencode.ReverseItem(protocol.UserMessage("hi")); ok {
		t.Error("message reversed")
	}
}

// TestPlainBashRoundTrip: a native bash call keeps its command and workdir.
func TestPlainBashRoundTrip(t *testing.T) {
	args := `{"command":"cat <<'EOF'\nhi\nEOF","workdir":"/w","timeout":60000,"description":"say hi"}`
	m, _ := opencode.Lookup("bash")
	sc, err := m.Build(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	sc.CallID = "c"
	for cname, client := range clients(t) {
		item, err := client.Item(sc)
		if err != nil {
			t.Fatal(err)
		}
		name, cargs := clientArgs(t, item)
		if strings.Contains(cargs, "harnessflow-bridge") {
			t.Errorf("%s: a plain command got a tag: %s", cname, cargs)
		}
		tool, nargs, ok := opencode.Reverse(name, cargs)
		if want := `{"command":"cat <<'EOF'\nhi\nEOF","workdir":"/w"}`; !ok || tool != "bash" || nargs != want {
			t.Errorf("%s: Reverse = %q %s %v, want %s", cname, tool, nargs, ok, want)
		}
	}
}
