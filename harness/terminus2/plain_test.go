package terminus2

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseOptions(t *testing.T) {
	cases := []struct {
		in   string
		want Options
		bad  bool
	}{
		{"", Options{VariantJSON, ExecTmux}, false},
		{"xml", Options{VariantXML, ExecTmux}, false},
		{"plain", Options{VariantJSON, ExecPlain}, false},
		{" XML , plain ", Options{VariantXML, ExecPlain}, false},
		{"json,xml", Options{}, true},
		{"tmux,plain", Options{}, true},
		{"yaml", Options{}, true},
	}
	for _, c := range cases {
		got, err := ParseOptions(c.in)
		if (err != nil) != c.bad || !c.bad && got != c.want {
			t.Errorf("ParseOptions(%q) = %+v, %v; want %+v (error %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

func TestPlainOps(t *testing.T) {
	cases := []struct {
		in   string
		want []plainOp
	}{
		{"ls\n", []plainOp{{'r', "ls"}}},
		{"a\nb\nc", []plainOp{{'r', "a"}, {'r', "b"}, {'h', "c"}}},
		{"ls\r\n", []plainOp{{'r', "ls"}}},
		{"\n", []plainOp{{'r', ""}}},
		{"C-c", []plainOp{{kind: 'c'}}},
		{"Escape", nil},
		{"C-d", nil},
		{"", nil},
		{"q", []plainOp{{'h', "q"}}},
	}
	for _, c := range cases {
		if got := plainOps(c.in); !slices.Equal(got, c.want) {
			t.Errorf("plainOps(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// The plain script with a real bash: lines run where the last one left,
// exported variables last, text without a newline waits, and the output
// has the tmux script's sections.
func TestPlainScript(t *testing.T) {
	for _, tool := range []string{"bash", "timeout", "cksum", "awk", "tail"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	tx := testTexts(t)
	home := t.TempDir()
	work := filepath.Join(home, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	n := 0
	raw := ""
	run := func(cmds ...Command) string {
		t.Helper()
		call := tx.shellCall(cmds, shellOptions{workdir: work, n: n, exec: ExecPlain, waitBudget: execWaitBudget})
		n++
		argv := call.Action.Command
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = *call.Action.WorkingDirectory
		cmd.Env = append(os.Environ(), "INTERPRETER_HOME="+home, "INTERPRETER_TERMINUS_2_TMUX_SESSION=plain-test")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("script: %v\n%s", err, out)
		}
		raw = string(out)
		if _, ok := tx.parseTerminal(raw); !ok {
			t.Fatalf("no sections:\n%s", out)
		}
		obs, err := tx.observation(string(out))
		if err != nil {
			t.Fatal(err)
		}
		return obs
	}
	prompt := "root@<docker-host>:"
	obs := run(Command{"echo terminus ok > proof.txt; cat proof.txt\n", 0.1})
	if want := "New Terminal Output:\n" + prompt + work + "# echo terminus ok > proof.txt; cat proof.txt\nterminus ok\n" + prompt + work + "# \n"; obs != want {
		t.Fatalf("first batch:\n%q\nwant\n%q", obs, want)
	}
	if data, err := os.ReadFile(filepath.Join(work, "proof.txt")); err != nil || string(data) != "terminus ok\n" {
		t.Fatalf("proof.txt = %q, %v", data, err)
	}
	obs = run(Command{"cd /tmp && export T2=kept\n", 0.1}, Command{"echo $T2; pw", 0.1}, Command{"d\n", 0.1})
	want := "New Terminal Output:\n\n" + prompt + work + "# cd /tmp && export T2=kept\n" + prompt + "/tmp# echo $T2; pwd\nkept\n/tmp\n" + prompt + "/tmp# \n"
	if obs != want {
		t.Fatalf("second batch:\n%q\nwant\n%q", obs, want)
	}
	obs = run(Command{"half", 0}, Command{"C-c", 0.1}, Command{"false; echo $?\n", 0.1})
	if !strings.Contains(obs, "/tmp# half^C\n"+prompt+"/tmp# false; echo $?\n1\n") {
		t.Fatalf("third batch:\n%s", obs)
	}
	run()
	screen := tx.screenOf(raw)
	if lines := strings.Split(screen, "\n"); len(lines) != ScreenRows+1 || !strings.Contains(screen, "kept\n/tmp\n") {
		t.Errorf("screen has %d lines:\n%s", len(lines), screen)
	}
}
