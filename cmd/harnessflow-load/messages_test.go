package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
)

// The refusals users meet first, word for word: an unknown harness gets the
// nearest name and every available one (as harnessflow's commands say it),
// an argument the short usage.
func TestLoadRefusals(t *testing.T) {
	var names []string
	for _, h := range harness.All() {
		names = append(names, h.Name)
	}
	for _, c := range []struct {
		args  []string
		lines []string // the first lines of stderr
	}{
		{[]string{"--harness", "kimi_cli"}, []string{`harnessflow-load: --harness: unknown harness "kimi_cli" (did you mean "kimi-cli"? available: ` + strings.Join(names, ", ") + ")"}},
		{[]string{"extra"}, []string{`harnessflow-load: unexpected argument "extra" (this command takes none)`, loadSynopsis}},
		{[]string{"--nope"}, []string{`harnessflow-load: unknown flag --nope`, loadSynopsis}},
	} {
		code, out, errOut := cli(t, c.args...)
		lines := strings.Split(errOut, "\n")
		if code != exitUsage || out != "" || len(lines) < len(c.lines) || !slices.Equal(lines[:len(c.lines)], c.lines) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errOut, c.lines)
		}
	}
	code, _, help := cli(t, "--help")
	if code != exitOK || !strings.HasPrefix(help, "Usage: harnessflow-load ") || strings.Count(help, "\n") < 4 || strings.Contains(help, "-1ns") || !strings.Contains(help, "-ramp D") || !strings.Contains(help, "-bin BINARY") {
		t.Errorf("--help:\n%s", help)
	}
}

// Every flag of harnessflow-load --help appears in README.md as "--name".
func TestREADMECoversEveryFlag(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	code, _, help := cli(t, "--help")
	if code != exitOK {
		t.Fatalf("--help: exit %d", code)
	}
	flags := regexp.MustCompile(`(?m)^  -([a-z0-9][a-z0-9-]*)`).FindAllStringSubmatch(help, -1)
	if len(flags) < 15 {
		t.Fatalf("only %d flags in --help: the pattern no longer matches\n%s", len(flags), help)
	}
	for _, m := range flags {
		if !regexp.MustCompile(`(^|[^a-z0-9-])--` + regexp.QuoteMeta(m[1]) + `($|[^a-z0-9-])`).Match(readme) {
			t.Errorf("harnessflow-load --help lists --%s, which README.md does not mention", m[1])
		}
	}
}
