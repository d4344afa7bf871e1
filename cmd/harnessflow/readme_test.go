package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// internalFlags are the flags the README need not mention, each with why.
// (None today: every flag of every command's --help is documented.)
var internalFlags = map[string]string{}

// helpCommands are the commands whose --help the README must cover (the
// load tester, harnessflow-load, checks its own in cmd/harnessflow-load).
var helpCommands = [][]string{
	{"translate"}, {"shape"}, {"parse"}, {"graph"}, {"harnesses"}, {"serve"}, {"mock-upstream"}, {"bench"}, {"version"}, {"healthcheck"},
}

// Every flag that a command's --help lists appears in README.md as
// "--name" ("-name" for a one-letter flag), or is in internalFlags.
func TestREADMECoversEveryFlag(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	flagLine := regexp.MustCompile(`(?m)^  -([a-z0-9][a-z0-9-]*)`)
	checked := 0
	for _, cmd := range helpCommands {
		code, _, help := cli(t, "", append(cmd, "--help")...)
		if code != exitOK {
			t.Fatalf("%v --help: exit %d", cmd, code)
		}
		for _, m := range flagLine.FindAllStringSubmatch(help, -1) {
			name := m[1]
			checked++
			if _, ok := internalFlags[name]; ok {
				continue
			}
			spelled := "--" + name
			if len(name) == 1 {
				spelled = "-" + name
			}
			if !regexp.MustCompile(`(^|[^a-z0-9-])` + regexp.QuoteMeta(spelled) + `($|[^a-z0-9-])`).Match(readme) {
				t.Errorf("harnessflow %s --help lists %s, which README.md does not mention (document it, or add it to internalFlags with a reason)", strings.Join(cmd, " "), spelled)
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d flags found in the --help outputs: the pattern no longer matches", checked)
	}
}

// The README's one-shot CLI commands (the "go run ./cmd/harnessflow …"
// lines of its sh blocks that neither serve nor write outside the test)
// run as shown from the repository root and exit 0.
func TestREADMECommandsRun(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds [][]string
	inSh := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			inSh = line == "```sh"
		case inSh && strings.HasPrefix(line, "go run ./cmd/harnessflow "):
			line, _, _ = strings.Cut(line, "#")
			args := strings.Fields(strings.TrimPrefix(line, "go run ./cmd/harnessflow "))
			if args[0] == "serve" || args[0] == "mock-upstream" || strings.Contains(line, "--record") {
				continue // long-running, or writes outside the test
			}
			cmds = append(cmds, args)
		}
	}
	f.Close()
	if len(cmds) < 6 {
		t.Fatalf("found %d commands in README.md: %v", len(cmds), cmds)
	}
	t.Logf("%d README commands", len(cmds))
	t.Chdir(filepath.Join("..", ".."))
	shaped := false
	for _, args := range cmds {
		code, out, errOut := cli(t, "", args...)
		if code != exitOK || out == "" {
			t.Errorf("README: harnessflow %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
		}
		if args[0] == "shape" && strings.Contains(out, `"path":"/chat/completions"`) {
			shaped = true
		}
	}
	if !shaped {
		t.Error("README: no shape example that prints a chat request")
	}
}

// readmeCurls returns the curl commands of the README's sh blocks, each
// with its continuation lines joined and the pipeline it feeds.
func readmeCurls(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	inSh, cur := false, ""
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "```"):
			inSh, cur = line == "```sh", ""
		case !inSh:
		case cur != "":
			cur += " " + strings.TrimSpace(strings.TrimSuffix(line, "\\"))
			if !strings.HasSuffix(line, "\\") {
				cmds, cur = append(cmds, cur), ""
			}
		case strings.HasPrefix(line, "curl "):
			cur = strings.TrimSuffix(line, "\\")
			if !strings.HasSuffix(line, "\\") {
				cmds, cur = append(cmds, cur), ""
			}
		}
	}
	return cmds
}

// The README's curl commands, run as shown (with the address of a serve
// started here in place of 127.0.0.1:8787) against serve's embedded model,
// offline: each exits 0 and prints an answer; the harness-route example
// prints the shell call it promises.
func TestREADMECurlsRun(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	curls := readmeCurls(t)
	if len(curls) < 2 {
		t.Fatalf("found %d curl commands in README.md: %q", len(curls), curls)
	}
	r := start(t, runServe, "--listen", "127.0.0.1:0")
	addr := strings.TrimPrefix(r.address(t), "http://")
	for _, c := range curls {
		cmd := strings.ReplaceAll(c, "127.0.0.1:8787", addr)
		out, err := exec.Command("bash", "-c", cmd).CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) == 0 {
			t.Errorf("README: %s: %v\n%s", c, err, out)
			continue
		}
		if strings.Contains(c, "/h/") && !strings.Contains(string(out), `"type":"local_shell_call"`) {
			t.Errorf("README: %s printed no shell call:\n%s", c, out)
		}
		if strings.Contains(c, "/v1/responses") && !strings.Contains(c, "grep") && !strings.Contains(string(out), "response.completed") {
			t.Errorf("README: %s: the stream did not complete:\n%s", c, out)
		}
	}
	if code := r.stop(t); code != 0 {
		t.Errorf("serve exited with %d", code)
	}
}
