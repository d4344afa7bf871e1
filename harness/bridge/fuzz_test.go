package bridge

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
)

func FuzzUnwrapOutput(f *testing.F) {
	for _, s := range []string{
		"Chunk ID: c3196a\nWall time: 0.0009 seconds\nProcess exited with code 0\nOriginal token count: 0\nOutput:\nhello\n",
		"Chunk ID: 9\r\nProcess running with session ID 3\r\nOutput:",
		"Exit code: 1\nOutput:\n",
		"Process exited with code 99999999999999999999\nOutput:\n",
		"plain text",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		out, code, hasExit, ok := UnwrapOutput(text)
		if !ok {
			if out != text || code != 0 || hasExit {
				t.Fatalf("not framed, but got (%q, %d, %v)", out, code, hasExit)
			}
			return
		}
		if !strings.HasSuffix(text, out) {
			t.Fatalf("out %q is not a suffix of %q", out, text)
		}
		if !hasExit && code != 0 {
			t.Fatalf("exit code %d without hasExit", code)
		}
	})
}

func FuzzQuote(f *testing.F) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		f.Skip("bash is not installed")
	}
	for _, s := range []string{"", "plain", "it's", "$HOME `x` \"y\"", "a\nb\\", "-n", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) {
			t.Skip("a NUL byte cannot be passed to a process")
		}
		out, err := exec.Command(bash, "-c", "printf %s "+Quote(s)).Output()
		if err != nil {
			t.Fatalf("bash -c printf %%s %s: %v", Quote(s), err)
		}
		if string(out) != s {
			t.Fatalf("Quote(%q) = %s prints %q", s, Quote(s), out)
		}
	})
}

// FuzzReverse: a bridged write with any content reverses to the same call.
func FuzzReverse(f *testing.F) {
	for _, s := range []string{"", "EOF\n", "# harnessflow-bridge x {}\n", "\x00'\"\\\u2028<&>"} {
		f.Add("dir/f.txt", s)
	}
	client := ClientShell{Kind: ShellExecCommand, Name: "exec_command"}
	f.Fuzz(func(t *testing.T, path, content string) {
		raw, _ := json.Marshal(map[string]string{"filePath": path, "content": content})
		m, _ := opencode.Lookup("write")
		sc, err := m.Build(raw)
		if err != nil {
			if path == "" {
				return
			}
			t.Fatal(err)
		}
		sc.CallID = "c"
		item, err := client.Item(sc)
		if err != nil {
			t.Fatal(err)
		}
		a := item.(*protocol.FunctionCall).Arguments
		if !json.Valid([]byte(a)) {
			t.Fatalf("invalid arguments %s", a)
		}
		tool, args, ok := opencode.Reverse("exec_command", a)
		if !ok || tool != "write" || args != string(raw) {
			t.Fatalf("Reverse = %q %s %v, want write %s", tool, args, ok, raw)
		}
	})
}
