package bridge

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/harnessflow/harnessflow/protocol"
)

// codexExecCommand is the exec_command tool as Codex CLI 0.171 sends it
// (descriptions shortened).
const codexExecCommand = `{"type":"function","name":"exec_command","description":"Runs a command in a PTY.","strict":false,"parameters":{"type":"object","properties":{` +
	`"cmd":{"type":"string","description":"Shell command to execute."},` +
	`"workdir":{"type":"string"},` +
	`"yield_time_ms":{"type":"number","description":"Wait before yielding output. Defaults to 10000 ms; effective range is 250-30000 ms"},` +
	`"max_output_tokens":{"type":"number"},"shell":{"type":"string"},"tty":{"type":"boolean"},"login":{"type":"boolean"},` +
	`"sandbox_permissions":{"type":"string"},"justification":{"type":"string"},"prefix_rule":{"type":"array","items":{"type":"string"}}},` +
	`"required":["cmd"],"additionalProperties":false}}`

const (
	writeStdin  = `{"type":"function","name":"write_stdin","parameters":{"type":"object","properties":{"session_id":{"type":"number"},"chars":{"type":"string"}}}}`
	applyPatch  = `{"type":"custom","name":"apply_patch","description":"patch","format":{"type":"grammar","syntax":"lark","definition":"start: x"}}`
	updatePlan  = `{"type":"function","name":"update_plan","parameters":{"type":"object","properties":{"plan":{"type":"array"}}}}`
	localShell  = `{"type":"local_shell"}`
	argvShell   = `{"type":"function","name":"shell","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}},"workdir":{"type":"string"},"timeout_ms":{"type":"number"}},"required":["command"]}}`
	shellString = `{"type":"function","name":"shell_command","parameters":{"type":"object","properties":{"command":{"type":"string"},"workdir":{"type":"string"},"timeout_ms":{"type":"number"}}}}`
	namespaced  = `{"type":"namespace","name":"functions","description":"","tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}]}`
)

func tools(t *testing.T, specs ...string) []protocol.ToolSpec {
	t.Helper()
	var out []protocol.ToolSpec
	if err := json.Unmarshal([]byte("["+strings.Join(specs, ",")+"]"), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDetectShell(t *testing.T) {
	tests := map[string]struct {
		tools  []string
		kind   ShellKind
		name   string
		cmdKey string
	}{
		"codex":                    {[]string{writeStdin, codexExecCommand, applyPatch, updatePlan}, ShellExecCommand, "exec_command", "cmd"},
		"exec_command wins":        {[]string{localShell, argvShell, codexExecCommand}, ShellExecCommand, "exec_command", "cmd"},
		"local_shell before shell": {[]string{argvShell, localShell}, ShellLocal, "local_shell", ""},
		"argv shell":               {[]string{writeStdin, argvShell}, ShellArgv, "shell", ""},
		"string command":           {[]string{shellString}, ShellExecCommand, "shell_command", "command"},
		"bash string": {[]string{`{"type":"function","name":"bash","parameters":{"type":"object","properties":{"command":{"type":["string","null"]}}}}`},
			ShellExecCommand, "bash", "command"},
		"run_shell_command anyOf array": {[]string{`{"type":"function","name":"run_shell_command","parameters":{"type":"object","properties":{"command":{"anyOf":[{"type":"array"},{"type":"null"}]}}}}`},
			ShellArgv, "run_shell_command", ""},
		"shell name without command": {[]string{`{"type":"function","name":"shell","parameters":{"type":"object","properties":{"script":{"type":"string"}}}}`}, ShellNone, "", ""},
		"any cmd string":             {[]string{updatePlan, `{"type":"function","name":"run","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}`}, ShellExecCommand, "run", "cmd"},
		"cmd not a string":           {[]string{`{"type":"function","name":"run","parameters":{"type":"object","properties":{"cmd":{"type":"array"}}}}`}, ShellNone, "", ""},
		"namespaced only":            {[]string{namespaced, applyPatch}, ShellNone, "", ""},
		"none":                       {[]string{writeStdin, applyPatch}, ShellNone, "", ""},
		"empty":                      {nil, ShellNone, "", ""},
	}
	for name, tc := range tests {
		c := DetectShell(tools(t, tc.tools...))
		if c.Kind != tc.kind || c.Name != tc.name || c.cmdKey != tc.cmdKey {
			t.Errorf("%s: got %v %q key %q, want %v %q key %q", name, c.Kind, c.Name, c.cmdKey, tc.kind, tc.name, tc.cmdKey)
		}
	}
	c := DetectShell(tools(t, codexExecCommand, namespaced, applyPatch, localShell))
	for _, tc := range []struct {
		name, ns string
		want     bool
	}{{"exec_command", "", true}, {"apply_patch", "", true}, {"local_shell", "", true}, {"exec_command", "functions", true}, {"read", "", false}, {"apply_patch", "functions", false}} {
		if got := c.Advertised(tc.name, tc.ns); got != tc.want {
			t.Errorf("Advertised(%q, %q) = %v", tc.name, tc.ns, got)
		}
	}
	if c.yieldMin != 250 || c.yieldMax != 30000 || !c.has("yield_time_ms") || c.has("timeout_ms") {
		t.Errorf("exec_command schema: yield %d..%d, props %v", c.yieldMin, c.yieldMax, c.props)
	}
}

func TestYieldRange(t *testing.T) {
	for desc, want := range map[string][2]int64{
		"Wait before yielding output. Defaults to 10000 ms; effective range is 250-30000 ms": {250, 30000},
		"effective range is 100 to 5000 ms":                                                  {100, 5000},
		"no range here":                                                                      {250, 30000},
		"range is 900-100 ms":                                                                {250, 30000},
		"":                                                                                   {250, 30000},
	} {
		lo, hi := yieldRange(desc)
		if lo != want[0] || hi != want[1] {
			t.Errorf("yieldRange(%q) = %d..%d, want %v", desc, lo, hi, want)
		}
	}
}

func TestItem(t *testing.T) {
	codex := DetectShell(tools(t, codexExecCommand))
	argv := DetectShell(tools(t, argvShell))
	local := DetectShell(tools(t, localShell))
	str := DetectShell(tools(t, shellString))
	bare := ClientShell{Kind: ShellExecCommand, Name: "exec_command"} // no schema: the usual keys
	noWorkdir := DetectShell(tools(t, `{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}`))
	argvEnv := DetectShell(tools(t, `{"type":"function","name":"shell","parameters":{"type":"object","properties":{"command":{"type":"array"},"env":{"type":"object"}}}}`))
	u := func(v uint64) *uint64 { return &v }
	s := func(v string) *string { return &v }
	call := "call_1"

	tests := map[string]struct {
		client ClientShell
		sc     ShellCall
		want   protocol.ResponseItem
	}{
		"exec script": {codex, ShellCall{CallID: "call_1", ItemID: "fc_1", Script: "ls -la | head"},
			&protocol.FunctionCall{ID: "fc_1", Name: "exec_command", CallID: "call_1", Arguments: `{"cmd":"ls -la | head"}`}},
		"exec argv quoted": {codex, ShellCall{CallID: "c", Argv: []string{"grep", "-n", "it's <&>", "a b.txt"}, Workdir: "/w d", TimeoutMS: 120000},
			&protocol.FunctionCall{Name: "exec_command", CallID: "c", Arguments: `{"cmd":"grep -n 'it'\\''s <&>' 'a b.txt'","workdir":"/w d","yield_time_ms":30000}`}},
		"exec bash -lc collapses": {codex, ShellCall{CallID: "c", Argv: []string{"bash", "-lc", "echo $HOME && ls"}, TimeoutMS: 10},
			&protocol.FunctionCall{Name: "exec_command", CallID: "c", Arguments: `{"cmd":"echo $HOME && ls","yield_time_ms":250}`}},
		"exec /bin/sh -c collapses": {codex, ShellCall{CallID: "c", Argv: []string{"/bin/sh", "-c", "x"}},
			&protocol.FunctionCall{Name: "exec_command", CallID: "c", Arguments: `{"cmd":"x"}`}},
		"exec bash -lc with $0 does not": {codex, ShellCall{CallID: "c", Argv: []string{"bash", "-lc", "echo $0", "me"}},
			&protocol.FunctionCall{Name: "exec_command", CallID: "c", Arguments: `{"cmd":"bash -lc 'echo $0' me"}`}},
		"exec env on argv": {codex, ShellCall{CallID: "c", Argv: []string{"env"}, Env: map[string]string{"B": "x y", "A": "1"}},
			&protocol.FunctionCall{Name: "exec_command", CallID: "c", Arguments: `{"cmd":"A=1 B='x y' env"}`}},
		"exec env on script": {codex, ShellCall{CallID: "c", Script: "a && b", Env: map[string]string{"PAGER": "less"}},
			&protocol.FunctionCall{Name: "exec_command", CallID: "c", Arguments: `{"cmd":"export PAGER=less; a && b"}`}},
		"exec no workdir key": {noWorkdir, ShellCall{CallID: "c", Script: "pwd", Workdir: "/it's", TimeoutMS: 5000},
			&protocol.FunctionCall{Name: "exec_command", CallID: "c", Arguments: `{"cmd":"cd '/it'\\''s' || exit 1; pwd"}`}},
		"exec hand-built": {bare, ShellCall{CallID: "c", Script: "pwd", Workdir: "/w", TimeoutMS: 40000},
			&protocol.FunctionCall{Name: "exec_command", CallID: "c", Arguments: `{"cmd":"pwd","workdir":"/w","yield_time_ms":30000}`}},
		"exec tag stays first": {noWorkdir, ShellCall{CallID: "c", Script: "# harnessflow-bridge read {}\ncat x", Workdir: "/w", Env: map[string]string{"K": "v"}},
			&protocol.FunctionCall{Name: "exec_command", CallID: "c", Arguments: `{"cmd":"# harnessflow-bridge read {}\ncd /w || exit 1; export K=v; cat x"}`}},
		"string command with timeout_ms": {str, ShellCall{CallID: "c", Argv: []string{"ls"}, Workdir: "/w", TimeoutMS: 99999},
			&protocol.FunctionCall{Name: "shell_command", CallID: "c", Arguments: `{"command":"ls","workdir":"/w","timeout_ms":99999}`}},
		"argv": {argv, ShellCall{CallID: "c", ItemID: "i", Argv: []string{"ls", "-l"}, Workdir: "/w", TimeoutMS: 1000},
			&protocol.FunctionCall{ID: "i", Name: "shell", CallID: "c", Arguments: `{"command":["ls","-l"],"workdir":"/w","timeout_ms":1000}`}},
		"argv script": {argv, ShellCall{CallID: "c", Script: "echo <hi> & wait"},
			&protocol.FunctionCall{Name: "shell", CallID: "c", Arguments: `{"command":["bash","-lc","echo <hi> & wait"]}`}},
		"argv env prefix": {argv, ShellCall{CallID: "c", Argv: []string{"printenv", "K"}, Env: map[string]string{"K": "a b"}},
			&protocol.FunctionCall{Name: "shell", CallID: "c", Arguments: `{"command":["env","K=a b","printenv","K"]}`}},
		"argv env into script": {argv, ShellCall{CallID: "c", Argv: []string{"bash", "-lc", "echo $K"}, Env: map[string]string{"K": "a b"}},
			&protocol.FunctionCall{Name: "shell", CallID: "c", Arguments: `{"command":["bash","-lc","export K='a b'; echo $K"]}`}},
		"argv env key": {argvEnv, ShellCall{CallID: "c", Argv: []string{"x"}, Env: map[string]string{"Z": "1", "A": "<"}, Workdir: "/w"},
			&protocol.FunctionCall{Name: "shell", CallID: "c", Arguments: `{"command":["bash","-lc","cd /w || exit 1; x"],"env":{"A":"<","Z":"1"}}`}},
		"local argv": {local, ShellCall{CallID: "call_1", ItemID: "ls_1", Argv: []string{"ls"}, Workdir: "/w", TimeoutMS: 30000, Env: map[string]string{"A": "1"}},
			&protocol.LocalShellCall{ID: "ls_1", CallID: &call, Status: "completed", Action: protocol.LocalShellAction{Type: "exec", Command: []string{"ls"},
				TimeoutMS: u(30000), WorkingDirectory: s("/w"), Env: map[string]string{"A": "1"}}}},
		"local script": {local, ShellCall{CallID: "call_1", Script: "a | b"},
			&protocol.LocalShellCall{CallID: &call, Status: "completed", Action: protocol.LocalShellAction{Type: "exec", Command: []string{"bash", "-lc", "a | b"}}}},
	}
	for name, tc := range tests {
		got, err := tc.client.Item(tc.sc)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		if fc, ok := got.(*protocol.FunctionCall); ok {
			if !json.Valid([]byte(fc.Arguments)) {
				t.Errorf("%s: invalid JSON %s", name, fc.Arguments)
			}
		}
	}

	for name, tc := range map[string]struct {
		client ClientShell
		sc     ShellCall
		want   string
	}{
		"none":        {ClientShell{}, ShellCall{CallID: "c", Script: "ls"}, "no shell tool"},
		"no call id":  {codex, ShellCall{Script: "ls"}, "no call id"},
		"empty":       {codex, ShellCall{CallID: "c"}, "empty command"},
		"empty argv":  {local, ShellCall{CallID: "c", Argv: []string{}, Script: "ignored"}, "empty command"},
		"bad env key": {codex, ShellCall{CallID: "c", Script: "ls", Env: map[string]string{"A-B": "1"}}, "not a shell name"},
	} {
		_, err := tc.client.Item(tc.sc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
	}
	if _, err := (ClientShell{}).Item(ShellCall{CallID: "c", Script: "x"}); !errors.Is(err, ErrNoShell) {
		t.Errorf("ShellNone: %v", err)
	}
}

// TestItemRuns runs what an exec_command and an argv client would run: the
// env, workdir and quoting written into the command line must work.
func TestItemRuns(t *testing.T) {
	noWorkdir := DetectShell(tools(t, `{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}`))
	argv := DetectShell(tools(t, `{"type":"function","name":"shell","parameters":{"type":"object","properties":{"command":{"type":"array"}}}}`))
	for _, sh := range shells(t) {
		dir := t.TempDir()
		sub := dir + "/it's a $dir"
		writeFile(t, sub+"/f", "", 0o644)
		for name, sc := range map[string]ShellCall{
			"argv":   {CallID: "c", Argv: []string{"printf", "%s|%s|", "it's", "$K"}, Env: map[string]string{"K": "v 'q'"}, Workdir: sub},
			"script": {CallID: "c", Script: "printf '%s|%s|' \"$K\" \"$(ls)\"", Env: map[string]string{"K": "v 'q'"}, Workdir: sub},
		} {
			want := map[string]string{"argv": "it's|$K|" + sub, "script": "v 'q'|f|" + sub}[name]
			item, err := noWorkdir.Item(sc)
			if err != nil {
				t.Fatal(err)
			}
			var a struct{ Cmd string }
			json.Unmarshal([]byte(item.(*protocol.FunctionCall).Arguments), &a)
			if out, stderr, _ := run(t, sh, dir, a.Cmd+"; pwd"); strings.TrimSpace(out) != want {
				t.Errorf("%s: exec %s: %q (stderr %q), want %q", sh.name, name, out, stderr, want)
			}
			item, err = argv.Item(sc)
			if err != nil {
				t.Fatal(err)
			}
			var b struct{ Command []string }
			json.Unmarshal([]byte(item.(*protocol.FunctionCall).Arguments), &b)
			if b.Command[0] != "bash" || b.Command[1] != "-lc" {
				t.Fatalf("argv %s: %q", name, b.Command)
			}
			if out, stderr, _ := run(t, sh, dir, b.Command[2]+"; pwd"); strings.TrimSpace(out) != want {
				t.Errorf("%s: argv %s: %q (stderr %q), want %q", sh.name, name, out, stderr, want)
			}
		}
	}
}

// Tools a search loaded are advertised (their calls are the client's) and
// do not change the shell detected, even when one looks like a shell.
func TestWithLoaded(t *testing.T) {
	c := DetectShell([]protocol.ToolSpec{{Type: protocol.ToolTypeFunction, Name: "exec_command",
		Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`)}})
	loaded := []protocol.ToolSpec{
		{Type: protocol.ToolTypeNamespace, Name: "mcp__probe", Tools: []protocol.ToolSpec{{Type: protocol.ToolTypeFunction, Name: "echo_text"}}},
		{Type: protocol.ToolTypeFunction, Name: "bash", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"array"}}}`)},
	}
	w := c.WithLoaded(loaded)
	if !w.Advertised("echo_text", "mcp__probe") || !w.Advertised("bash", "") || !w.Advertised("exec_command", "") {
		t.Errorf("loaded tools not advertised: %+v", w)
	}
	if c.Advertised("echo_text", "mcp__probe") || c.Advertised("bash", "") {
		t.Error("WithLoaded changed the original")
	}
	if w.Kind != c.Kind || w.Name != "exec_command" {
		t.Errorf("shell changed: %v %q", w.Kind, w.Name)
	}
	if c.WithLoaded(nil).Advertised("bash", "") {
		t.Error("nil loaded advertised something")
	}
}
