package terminus2

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The call that drives tmux: timeouts, command, workdir and env.
func TestShellCall(t *testing.T) {
	tx := testTexts(t)
	cases := []struct {
		name      string
		cmds      []Command
		budget    float64
		timeout   string // the timeout command's limit
		clientMS  uint64
		sleepsSum string // a "sleep N" line that must be in the script, "" for none
	}{
		{"one long wait", []Command{{"", 60}}, 0, "78s", 81000, "sleep 60"},
		{"capture only", nil, 0, "10s", 13000, ""},
		{"many commands hit the cap", []Command{{"a\n", 60}, {"b\n", 60}, {"c\n", 60}}, 0, "180s", 183000, "sleep 60"},
		{"a budget for exec_command clients", []Command{{"a\n", 20}, {"b\n", 20}}, 24, "50s", 53000, "sleep 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			call := tx.shellCall(c.cmds, shellOptions{workdir: "/w", n: 3, waitBudget: c.budget})
			a := call.Action
			if *call.CallID != "terminus-2-shell-3" || call.Status != "in_progress" {
				t.Errorf("call id %q status %q", *call.CallID, call.Status)
			}
			if len(a.Command) != 6 || a.Command[0] != "timeout" || a.Command[1] != "--kill-after=2s" || a.Command[2] != c.timeout ||
				a.Command[3] != "bash" || a.Command[4] != "-lc" {
				t.Errorf("command %q…", a.Command[:min(5, len(a.Command))])
			}
			if a.TimeoutMS == nil || *a.TimeoutMS != c.clientMS || a.WorkingDirectory == nil || *a.WorkingDirectory != "/w" {
				t.Errorf("timeout_ms %v workdir %v", a.TimeoutMS, a.WorkingDirectory)
			}
			if a.Env["GIT_PAGER"] != "less" || a.Env["GIT_CONFIG_KEY_0"] != "log.decorate" || len(a.Env) != 5 {
				t.Errorf("env %v", a.Env)
			}
			if c.sleepsSum != "" && !strings.Contains(a.Command[5], "\n"+c.sleepsSum+"\n") {
				t.Errorf("script has no %q line", c.sleepsSum)
			}
		})
	}
}

// The script against a real tmux: typed commands, their output, cd that
// persists, a key name, long keystrokes, an interrupted command and the
// screen of an empty batch.
func TestTmuxScript(t *testing.T) {
	for _, tool := range []string{"tmux", "bash", "timeout", "cksum", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (install tmux to run the terminus-2 script test)", tool)
		}
	}
	tx := testTexts(t)
	home := t.TempDir()
	work := filepath.Join(home, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	session := "hf-t2-test-" + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(home)
	t.Cleanup(func() { killTmux(session) })
	n := 0
	run := func(cmds ...Command) string {
		t.Helper()
		call := tx.shellCall(cmds, shellOptions{workdir: work, n: n, waitBudget: execWaitBudget})
		n++
		argv := call.Action.Command
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = *call.Action.WorkingDirectory
		cmd.Env = append(os.Environ(), "INTERPRETER_HOME="+home, "INTERPRETER_TERMINUS_2_TMUX_SESSION="+session)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("script: %v\n%s", err, out)
		}
		obs, err := tx.observation(unwrapOutput(string(out)))
		if err != nil {
			t.Fatal(err)
		}
		return obs
	}
	prompt := "root@<docker-host>:" + work + "#"

	obs := run(Command{"echo terminus ok > proof.txt; cat proof.txt\n", 0.1})
	if !strings.HasPrefix(obs, "New Terminal Output:\n"+prompt+" echo terminus ok") || !strings.Contains(obs, "\nterminus ok\n"+prompt) {
		t.Fatalf("first batch:\n%s", obs)
	}
	if data, err := os.ReadFile(filepath.Join(work, "proof.txt")); err != nil || string(data) != "terminus ok\n" {
		t.Fatalf("proof.txt = %q, %v", data, err)
	}

	obs = run(Command{"cd /\n", 0.1}, Command{"pwd\n", 0.1})
	if !strings.HasPrefix(obs, "New Terminal Output:\n\n"+prompt+" cd /\nroot@<docker-host>:/# pwd\n/\n") {
		t.Fatalf("second batch (only what is new, from the last prompt on):\n%s", obs)
	}
	if d := analyze(tx, items(uMsg("x"), aMsg(ls), callOut("c", sections(obs[len("New Terminal Output:\n"):], ""))), work).kind.Workdir; d != "/" {
		t.Errorf("workdir from the screen = %q, want /", d)
	}

	long := "echo " + strings.Repeat("x", 3*literalChunk) + " | wc -c\n"
	if obs = run(Command{long, 0.3}); !strings.Contains(obs, "\n"+strconv.Itoa(3*literalChunk+1)+"\n") {
		t.Errorf("long keystrokes:\n%s", obs)
	}

	start := time.Now()
	obs = run(Command{"sleep 30\n", 0.3}, Command{"C-c", 0.1}, Command{"echo after\n", 0.1})
	if time.Since(start) > 25*time.Second || !strings.Contains(obs, "^C") || !strings.Contains(obs, "\nafter\n") {
		t.Errorf("C-c took %v:\n%s", time.Since(start), obs)
	}

	if obs = run(); !strings.HasPrefix(obs, "New Terminal Output:\n\nroot@<docker-host>:/#") {
		t.Errorf("empty batch:\n%s", obs)
	}
}

// killTmux stops the tmux server of a session and removes its socket.
func killTmux(session string) {
	sock, err := exec.Command("tmux", "-L", session, "display-message", "-p", "#{socket_path}").Output()
	_ = exec.Command("tmux", "-L", session, "kill-server").Run()
	if p := strings.TrimSpace(string(sock)); err == nil && p != "" {
		_ = os.Remove(p)
	}
}
