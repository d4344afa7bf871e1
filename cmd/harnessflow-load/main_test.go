package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for harnessflow-load as the
// processes a load run starts from its own binary (os.Executable is the
// test binary): started with a child's subcommand, it is that child.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		if _, ok := childCommands()[os.Args[1]]; ok {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
			stop()
			os.Exit(code)
		}
	}
	os.Exit(m.Run())
}

// cli runs the command in this process.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// buildHarnessflow builds the harnessflow command (serve's binary) into a
// temporary directory. It is built without the race detector whatever the
// test binary's setting: serve's packages are not this test's, and a plain
// build of them is the one `go build ./...` left in the cache.
func buildHarnessflow(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the processes are stopped with SIGTERM: POSIX only")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "harnessflow")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, "../harnessflow").CombinedOutput(); err != nil {
		t.Fatalf("go build ../harnessflow: %v\n%s", err, out)
	}
	return bin
}

// xmlText checks that data is well-formed XML and returns its character
// data.
func xmlText(t *testing.T, data []byte) string {
	t.Helper()
	var b strings.Builder
	for dec := xml.NewDecoder(bytes.NewReader(data)); ; {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return b.String()
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			b.Write(cd)
		}
	}
}
