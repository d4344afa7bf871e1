package pi_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/harnesstest"
	_ "github.com/harnessflow/harnessflow/harness/pi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The shared request set and pi's own cases (testdata/*.txtar): the
// shaped body, and the events of recorded upstream answers in both
// execution modes, whole, byte by byte and in random chunks.
func TestGolden(t *testing.T) { harnesstest.Run(t, harness.NamePi, "testdata") }
