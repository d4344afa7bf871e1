package main

import (
	"encoding/json"
	"testing"

	"github.com/harnessflow/harnessflow/loadtest"
)

// serve --max-streams under harnessflow-load --rejections: of four clients
// starting at once against a bound of two, two streams are served whole and
// two answered 503 at once (no queue), counted as rejections, not errors.
func TestLoadRejections(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and starts processes")
	}
	bin := buildHarnessflow(t)
	code, out, errOut := cli(t, "--bin", bin, "--streams", "4", "--events", "3", "--interval", "100ms",
		"--rounds", "1", "--ramp", "0s", "--targets", "native", "--rejections", "--json",
		"--serve-flag=--max-streams=2", "--serve-flag=--queue-timeout=0s")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var report loadtest.ProxyReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if len(report.Runs) != 1 {
		t.Fatalf("runs: %+v", report.Runs)
	}
	r := report.Runs[0]
	if r.Errors != 0 || r.Requests != 4 || r.Rejected != 2 || r.Deltas != 2*3 || r.RejectLatency == nil || r.RejectLatency.Max > 1000 {
		t.Errorf("run: %d requests, %d errors (%s), %d rejected (%+v ms), %d deltas; want 4, 0, 2, 6",
			r.Requests, r.Errors, r.FirstError, r.Rejected, r.RejectLatency, r.Deltas)
	}
	if left := children(t); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}
