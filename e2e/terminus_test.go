package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// terminus-2 through the real Codex: the model answers in terminus-2's
// JSON, the harness turns its keystrokes into one tmux-driving shell call,
// Codex runs it through exec_command, the screen comes back as a user
// message, and the task ends after the completion is confirmed. The plain
// exchange (commands and completion in one reply, confirmed once) runs in
// TestCodex's harness routes; TestCodexTerminus2Followups adds a
// parse-error round and a confirmation question sent as a follow-up, in the
// client and the proxy follow-up modes. Both need tmux on the machine.

// confirmQuestion is the marker of terminus-2's confirmation question.
const confirmQuestion = "Are you sure you want to mark the task as complete?"

// terminusReply is one reply in terminus-2's JSON format.
func terminusReply(analysis string, keystrokes []string, complete bool) string {
	type command struct {
		Keystrokes string  `json:"keystrokes"`
		Duration   float64 `json:"duration"`
	}
	r := struct {
		Analysis     string    `json:"analysis"`
		Plan         string    `json:"plan"`
		Commands     []command `json:"commands"`
		TaskComplete bool      `json:"task_complete"`
	}{Analysis: analysis, Plan: "Type the command, then check the screen.", Commands: []command{}, TaskComplete: complete}
	for _, k := range keystrokes {
		r.Commands = append(r.Commands, command{Keystrokes: k, Duration: 0.5})
	}
	b, _ := json.Marshal(r) // a struct of strings, bools and numbers always encodes
	return string(b)
}

// routeOutput finds what the proof command printed on the terminal screen
// of the confirmation question ("NAME route ok" on a line of its own).
const routeOutput = `(?m)^(\S+ (?:route|followup) ok)$`

// terminusScript plays terminus-2 in two replies: the command with the
// completion (the original runs the commands first, and their screen
// comes back as the confirmation question), then the confirmation, quoting
// the screen.
func terminusScript(command string) *scripted.Script {
	return &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{UserContains: confirmQuestion}, Capture: routeOutput,
			Text: terminusReply("The shell said: {{capture}}", nil, true)},
		{Text: terminusReply("The directory is empty; one command writes the proof file.", []string{command + "\n"}, true)},
	}}
}

// checkTerminusBody: one user message, the initial prompt around Codex's
// prompt; no system message, tools or stream key; temperature 0.7.
func checkTerminusBody(body []byte) error {
	var b map[string]json.RawMessage
	if err := json.Unmarshal(body, &b); err != nil {
		return err
	}
	for _, k := range []string{"tools", "stream", "tool_choice"} {
		if _, ok := b[k]; ok {
			return fmt.Errorf("the body has %q", k)
		}
	}
	if string(b["temperature"]) != "0.7" {
		return fmt.Errorf("temperature %s, want 0.7", b["temperature"])
	}
	c, err := decodeChat(body)
	if err != nil {
		return err
	}
	if len(c.Messages) != 1 || c.Messages[0].Role != "user" {
		return fmt.Errorf("want one user message, got %d messages", len(c.Messages))
	}
	var first string
	if err := json.Unmarshal(c.Messages[0].Content, &first); err != nil {
		return err
	}
	if !strings.HasPrefix(first, "You are an AI assistant tasked") || !strings.Contains(first, "Task Description:\n"+prompt+"\n\nCurrent terminal state:\n") {
		return fmt.Errorf("the user message is not the initial prompt around Codex's prompt:\n%s", first)
	}
	return nil
}

// needTmux skips without tmux, and stops the tmux server of a Codex run
// when the test ends (the script names it after Codex's home directory).
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: terminus-2 drives a tmux session (apt-get install -y tmux)")
	}
}

// stopTmux stops the tmux server the harness started for run.
func stopTmux(t *testing.T, run codexRun) {
	t.Helper()
	home := filepath.Join(filepath.Dir(run.workDir), "codex-home")
	out, err := exec.Command("sh", "-c", `printf %s "$1" | cksum | cut -d ' ' -f 1`, "sh", home).Output()
	if err != nil {
		t.Errorf("cksum: %v", err)
		return
	}
	session := "oi-terminus-2-" + strings.TrimSpace(string(out))
	sock, err := exec.Command("tmux", "-L", session, "display-message", "-p", "#{socket_path}").Output()
	if err != nil {
		t.Errorf("tmux session %s of the run is not running: %v", session, err)
		return
	}
	if err := exec.Command("tmux", "-L", session, "kill-server").Run(); err != nil {
		t.Errorf("tmux kill-server %s: %v", session, err)
	}
	_ = os.Remove(strings.TrimSpace(string(sock))) // tmux leaves its socket file behind
}

// TestCodexTerminus2Followups: the first reply is no JSON (the parse-error
// prompt goes back), the second types the command, the third completes the
// task without commands (the confirmation question goes back), the fourth
// confirms — with the follow-ups handled by Codex (client mode) and by the
// proxy (proxy mode).
func TestCodexTerminus2Followups(t *testing.T) {
	bin := os.Getenv(codexEnv)
	if bin == "" {
		t.Skipf("set %s to a Codex CLI binary to run (scripts/e2e-codex.sh does)", codexEnv)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s: %v", codexEnv, err)
	}
	for _, mode := range []string{server.FollowupsClient, server.FollowupsProxy} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			needTmux(t)
			const (
				command = "printf '%s followup ok\\n' terminus-2 | tee proof.txt"
				output  = "terminus-2 followup ok"
			)
			script := &scripted.Script{Turns: []scripted.Turn{
				{When: &scripted.Match{UserContains: confirmQuestion}, Capture: routeOutput,
					Text: terminusReply("The shell said: {{capture}}", nil, true)},
				{When: &scripted.Match{UserContains: "New Terminal Output:"},
					Text: terminusReply("The file is written.", nil, true)},
				{When: &scripted.Match{UserContains: "Previous response had parsing errors:"},
					Text: terminusReply("Right, JSON. One command writes the file.", []string{command + "\n"}, false)},
				{Text: "Let me look around first."},
			}}
			p := startProxy(t, script, func(c *server.Config) { c.Followups = mode })
			run := runCodex(t, bin, p.url+"/h/terminus-2/v1", true)
			stopTmux(t, run)
			final := checkProofRun(t, run, output)
			if !strings.Contains(final, `"task_complete":true`) {
				t.Errorf("final message is not the confirming reply:\n%s", final)
			}
			p.stop(t)
			// Client mode: Codex makes the four requests. Proxy mode: the
			// proxy asks twice for each of Codex's two requests.
			clientRequests := 4
			if mode == server.FollowupsProxy {
				clientRequests = 2
			}
			p.checkUpstream(t, "/h/terminus-2/v1/responses", "terminus-2", clientRequests, 4)
			bodies := p.upstreamBodies()
			if len(bodies) == 4 {
				if err := checkTerminusRounds(bodies); err != nil {
					t.Error(err)
				}
			}
			t.Logf("terminus-2, %s follow-ups: %d client requests, 4 upstream; codex final message: %s", mode, clientRequests, final)
		})
	}
}

// checkTerminusRounds: each request carries what the round before it sent
// back — the parse-error prompt, the observation, the confirmation
// question.
func checkTerminusRounds(bodies [][]byte) error {
	if err := checkTerminusBody(bodies[0]); err != nil {
		return fmt.Errorf("first request: %w", err)
	}
	if !bytes.Contains(bodies[1], []byte("Let me look around first.")) || !bytes.Contains(bodies[1], []byte(`Previous response had parsing errors:\nERROR: No valid JSON found in response`)) {
		return errors.New("the second request lacks the bad reply and the parse-error prompt")
	}
	c, err := decodeChat(bodies[2])
	if err != nil {
		return err
	}
	var last string
	if len(c.Messages) > 0 {
		_ = json.Unmarshal(c.Messages[len(c.Messages)-1].Content, &last)
	}
	if !strings.HasPrefix(last, "New Terminal Output:\n") || !strings.Contains(last, "\nterminus-2 followup ok\n") {
		return fmt.Errorf("the third request does not end with the observation:\n%s", last)
	}
	if !bytes.Contains(bodies[3], []byte(confirmQuestion)) {
		return errors.New("the fourth request lacks the confirmation question")
	}
	return nil
}

// TestCodexTerminus2Plain: the plain execution mode, picked for Codex's
// model by the proxy's model table ({"variants":{"terminus-2":"plain"}}),
// for machines without tmux: the typed line runs with bash, the
// observation has the same form, and the completion is confirmed once.
func TestCodexTerminus2Plain(t *testing.T) {
	bin := os.Getenv(codexEnv)
	if bin == "" {
		t.Skipf("set %s to a Codex CLI binary to run (scripts/e2e-codex.sh does)", codexEnv)
	}
	models := codexModelVariant(t, "terminus-2", "plain")
	const (
		command = "printf '%s route ok\\n' plain | tee proof.txt"
		output  = "plain route ok"
	)
	// The mode comes from the model table, or from the deployment's
	// variants (what `serve --terminus-exec plain` sets).
	for name, opt := range map[string]func(*server.Config){
		"model-table":   func(c *server.Config) { c.Models = models },
		"terminus-exec": func(c *server.Config) { c.Variants = map[string]string{harness.NameTerminus2: "plain"} },
	} {
		t.Run(name, func(t *testing.T) { terminusPlain(t, bin, command, output, opt) })
	}
}

func terminusPlain(t *testing.T, bin, command, output string, opt func(*server.Config)) {
	p := startProxy(t, terminusScript(command), opt)
	run := runCodex(t, bin, p.url+"/h/terminus-2/v1", true)
	if run.exitCode != 0 {
		t.Fatalf("codex exited with %d, want 0\n%s", run.exitCode, run)
	}
	ev := parseEvents(t, run)
	if cmd := ev.command(t, "proof.txt"); !strings.Contains(cmd.AggregatedOutput, output) || strings.Contains(cmd.Command, "tmux") {
		t.Errorf("command %q output %q: want no tmux and the output %q", cmd.Command, cmd.AggregatedOutput, output)
	}
	if data, err := os.ReadFile(filepath.Join(run.workDir, "proof.txt")); err != nil || strings.TrimSpace(string(data)) != output {
		t.Errorf("work dir proof.txt = %q, %v; want %q", data, err, output)
	}
	final := ev.finalMessage(t)
	if !strings.Contains(final, "The shell said: "+output) {
		t.Errorf("final message does not quote %q:\n%s", output, final)
	}
	p.stop(t)
	p.checkCompleted(t, "/h/terminus-2/v1/responses", "terminus-2", 2)
	if bodies := p.upstreamBodies(); len(bodies) == 2 && !bytes.Contains(bodies[1], []byte(confirmQuestion)) {
		t.Errorf("the second request is not the confirmation question:\n%s", bodies[1])
	}
	t.Logf("codex final message: %s", final)
}
