package bridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/protocol"
)

const functionPatch = `{"type":"function","name":"apply_patch","parameters":{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}}`

func TestAddFilePatch(t *testing.T) {
	tests := []struct {
		path, content string
		want          string // "" = not representable
	}{
		{"a.txt", "hello\n", "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n"},
		{"/abs/dir/b.go", "package b\n\nfunc B() {}\n", "*** Begin Patch\n*** Add File: /abs/dir/b.go\n+package b\n+\n+func B() {}\n*** End Patch\n"},
		{"c", "*** End Patch\n+plus\n", "*** Begin Patch\n*** Add File: c\n+*** End Patch\n++plus\n*** End Patch\n"},
		{"c", "\n\n", "*** Begin Patch\n*** Add File: c\n+\n+\n*** End Patch\n"},
		{"c", "no final newline", ""},
		{"c", "", ""},
		{"c", "crlf\r\n", ""},
		{"", "x\n", ""},
		{"two\nlines", "x\n", ""},
	}
	for _, tc := range tests {
		got, ok := AddFilePatch(tc.path, tc.content)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("AddFilePatch(%q, %q) = %q, %v; want %q", tc.path, tc.content, got, ok, tc.want)
			continue
		}
		if !ok {
			continue
		}
		path, content, ok := ParseAddFilePatch(got)
		if !ok || path != tc.path || content != tc.content {
			t.Errorf("ParseAddFilePatch(%q) = %q, %q, %v", got, path, content, ok)
		}
	}
	for _, p := range []string{
		"*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End Patch\n",
		"*** Begin Patch\n*** Add File: a\n+x\n*** Add File: b\n+y\n*** End Patch\n",
		"*** Begin Patch\n*** Add File: a\n*** End Patch\n",
		"*** Begin Patch\n*** Add File: \n+x\n*** End Patch\n",
		"*** Begin Patch\n*** Add File: a\n+x\n",
		"",
	} {
		if _, _, ok := ParseAddFilePatch(p); ok {
			t.Errorf("ParseAddFilePatch(%q) accepted", p)
		}
	}
	if _, _, ok := ParseAddFilePatch("\n  *** Begin Patch\n*** Add File: a\n+x\n*** End Patch  \n"); !ok {
		t.Error("surrounding white space is not accepted")
	}
}

// claudeWrite is a claude-code-like Write mapping that says whole-file
// writes as patches.
var claudeWrite = func() Mapping {
	m := WriteSpec{Tool: "Write", Path: "file_path"}.Mapping()
	m.Patch = WritePatch("file_path", "")
	m.FromPatch = WriteFromPatch("file_path", "")
	return m
}()

func TestPatchStage(t *testing.T) {
	table := Table{ShellSpec{Tool: "Bash", Workdir: NoKey, Plain: true}.Mapping(), claudeWrite}
	custom := DetectShell(tools(t, codexExecCommand, applyPatch))
	function := DetectShell(tools(t, codexExecCommand, functionPatch))
	shellOnly := DetectShell(tools(t, codexExecCommand))
	patchOnly := DetectShell(tools(t, applyPatch))
	if !custom.Patches() || !function.Patches() || shellOnly.Patches() || !patchOnly.Patches() {
		t.Fatalf("Patches: %v %v %v %v", custom.Patches(), function.Patches(), shellOnly.Patches(), patchOnly.Patches())
	}
	const args = `{"file_path":"/w/out.txt","content":"hi\n"}`
	patch := "*** Begin Patch\n*** Add File: /w/out.txt\n+hi\n*** End Patch\n"
	write := fc("fc_1", "toolu_1", "Write", args)
	shellCmd, err := claudeWrite.Build(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	var o jsonObject
	o.str("cmd", shellCmd.Script)
	exec := fc("fc_1", "toolu_1", "exec_command", o.String())
	tests := []struct {
		name   string
		client ClientShell
		call   *protocol.FunctionCall
		want   protocol.ResponseItem
	}{
		{"custom apply_patch", custom, write,
			&protocol.CustomToolCall{ID: "fc_1", Status: "completed", CallID: "toolu_1", Name: "apply_patch", Input: patch}},
		{"function apply_patch", function, write,
			fc("fc_1", "toolu_1", "apply_patch", `{"input":`+string(protocol.AppendString(nil, patch))+`}`)},
		{"no apply_patch: the shell", shellOnly, write, exec},
		{"apply_patch without a shell", patchOnly, write,
			&protocol.CustomToolCall{ID: "fc_1", Status: "completed", CallID: "toolu_1", Name: "apply_patch", Input: patch}},
		{"content a patch cannot say: the shell", custom, fc("fc_1", "toolu_1", "Write", `{"file_path":"x","content":"no newline"}`), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, unbridged := runStage(t, Options{Client: tc.client, Table: table},
				[]protocol.ResponseEvent{protocol.Added(fc("fc_1", "toolu_1", "Write", "")), protocol.Done(tc.call)})
			if len(unbridged) > 0 {
				t.Errorf("unbridged %v", unbridged)
			}
			if len(got) != 2 || got[0].Type != protocol.EventOutputItemAdded || got[1].Type != protocol.EventOutputItemDone {
				t.Fatalf("events %+v", got)
			}
			if tc.want == nil {
				fcall, ok := got[1].Item.(*protocol.FunctionCall)
				if !ok || fcall.Name != "exec_command" {
					t.Errorf("done item %#v, want exec_command", got[1].Item)
				}
				return
			}
			if d := cmp.Diff(tc.want, got[1].Item); d != "" {
				t.Errorf("done item (-want +got):\n%s", d)
			}
			if c, ok := got[0].Item.(*protocol.CustomToolCall); ok && (c.Input != "" || c.Status != "in_progress") {
				t.Errorf("added item %+v", c)
			}
		})
	}
}

func TestReversePatch(t *testing.T) {
	table := Table{ShellSpec{Tool: "Bash", Workdir: NoKey, Plain: true}.Mapping(), claudeWrite}
	patch := "*** Begin Patch\n*** Add File: /w/a \"b\".txt\n+x\n+\n*** End Patch\n"
	want := `{"file_path":"/w/a \"b\".txt","content":"x\n\n"}`
	for name, item := range map[string]protocol.ResponseItem{
		"custom":   &protocol.CustomToolCall{CallID: "c", Name: "apply_patch", Input: patch},
		"function": fc("", "c", "apply_patch", `{"input":`+string(protocol.AppendString(nil, patch))+`}`),
	} {
		tool, args, ok := table.ReverseItem(item)
		if !ok || tool != "Write" || args != want {
			t.Errorf("%s: ReverseItem = %q, %q, %v; want Write %s", name, tool, args, ok, want)
		}
	}
	for name, item := range map[string]protocol.ResponseItem{
		"update patch":   &protocol.CustomToolCall{CallID: "c", Name: "apply_patch", Input: "*** Begin Patch\n*** Delete File: a\n*** End Patch"},
		"namespaced":     &protocol.CustomToolCall{CallID: "c", Name: "apply_patch", Namespace: "ns", Input: patch},
		"other custom":   &protocol.CustomToolCall{CallID: "c", Name: "exec", Input: patch},
		"no FromPatch":   &protocol.CustomToolCall{CallID: "c", Name: "apply_patch", Input: patch},
		"function, junk": fc("", "c", "apply_patch", `{"input":5}`),
	} {
		tb := table
		if name == "no FromPatch" {
			tb = Table{ShellSpec{Tool: "Bash", Plain: true}.Mapping()}
		}
		if tool, args, ok := tb.ReverseItem(item); ok {
			t.Errorf("%s: reversed to %s %s", name, tool, args)
		}
	}
}

// A Write said as a patch leaves the same file as the Write's shell
// command: Codex's Add File hunk writes the hunk's lines, each with a
// newline (applied here as Codex applies it), and the shell command writes
// the content as it is.
func TestWritePatchOnDisk(t *testing.T) {
	for _, sh := range shells(t) {
		for _, content := range []string{"hello\n", tricky + "\n", "\n", "a\n\n\nb\n", "  indented\n\ttabs\n"} {
			dir := t.TempDir()
			args, _ := json.Marshal(map[string]string{"file_path": "sub/patched.txt", "content": content})
			patch, ok := claudeWrite.Patch(args)
			if !ok {
				t.Fatalf("content %q: no patch", content)
			}
			path, body, ok := ParseAddFilePatch(patch)
			if !ok {
				t.Fatalf("patch %q does not parse", patch)
			}
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, path), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			patched, _ := os.ReadFile(filepath.Join(dir, path))

			args2, _ := json.Marshal(map[string]string{"file_path": "sub/shell.txt", "content": content})
			sc, err := claudeWrite.Build(args2)
			if err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := run(t, sh, dir, sc.Script); code != 0 {
				t.Fatalf("%s: write command failed (%d): %s", sh.name, code, stderr)
			}
			written, _ := os.ReadFile(filepath.Join(dir, "sub/shell.txt"))
			if string(patched) != content || string(written) != content {
				t.Errorf("%s: content %q: patched %q, shell %q", sh.name, content, patched, written)
			}
		}
	}
}

// FuzzAddFilePatch: a patch AddFilePatch writes reads back as the same path
// and content, and whatever ParseAddFilePatch accepts writes back to a
// patch that reads the same.
func FuzzAddFilePatch(f *testing.F) {
	f.Add("a.txt", "hello\n", "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n")
	f.Add("/abs/b", "+\n*** End Patch\n\n", "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End Patch")
	f.Fuzz(func(t *testing.T, path, content, patch string) {
		if p, ok := AddFilePatch(path, content); ok {
			gp, gc, ok := ParseAddFilePatch(p)
			if !ok || gp != path || gc != content {
				t.Fatalf("AddFilePatch(%q, %q) = %q reads back as %q, %q, %v", path, content, p, gp, gc, ok)
			}
		}
		if gp, gc, ok := ParseAddFilePatch(patch); ok {
			if p, ok := AddFilePatch(gp, gc); ok {
				if gp2, gc2, ok := ParseAddFilePatch(p); !ok || gp2 != gp || gc2 != gc {
					t.Fatalf("%q: not stable", patch)
				}
			}
		}
	})
}
