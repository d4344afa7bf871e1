package terminus2_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/harnesstest"
	_ "github.com/harnessflow/harnessflow/harness/terminus2"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The shared request set and terminus-2's own cases (testdata/*.txtar):
// the shaped body of each request kind, and the events of recorded
// upstream answers in both execution modes, whole, byte by byte and in
// random chunks.
func TestGolden(t *testing.T) { harnesstest.Run(t, harness.NameTerminus2, "testdata") }
