package bridge

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// shell is a POSIX shell the generated commands are run with.
type shell struct{ name, path string }

// shells returns bash (the test is skipped without it) and dash when it is
// installed, so that the commands are checked to be POSIX sh too.
func shells(t *testing.T) []shell {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: the generated commands cannot be run")
	}
	out := []shell{{"bash", bash}}
	if dash, err := exec.LookPath("dash"); err == nil {
		out = append(out, shell{"dash", dash})
	}
	return out
}

// run runs script with sh -c in dir.
func run(t *testing.T, sh shell, dir, script string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(sh.path, "-c", script)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("%s -c: %v", sh.name, err)
	}
	return o.String(), e.String(), code
}

// tricky is file content that breaks naive quoting and heredocs.
const tricky = "first line\nEOF\n'single' \"double\" `tick` $HOME ${X:-y} $(echo no)\nback\\slash \\n \\\\ %s %d\n\t tab & | ; < > * ? [a] ~ # !\nEOF"

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
