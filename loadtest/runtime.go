package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/harnessflow/harnessflow/internal/procdebug"
)

// RuntimeStats are a Go process's memory and scheduler figures
// ([procdebug.RuntimeStats]), what a load run samples at the measured
// process's GET /debug/runtime.
type RuntimeStats = procdebug.RuntimeStats

// FetchRuntimeStats gets the RuntimeStats a process serves at url (GET
// …/debug/runtime).
func FetchRuntimeStats(ctx context.Context, client *http.Client, url string) (RuntimeStats, error) {
	var st RuntimeStats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return st, fmt.Errorf("loadtest: runtime stats: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return st, fmt.Errorf("loadtest: runtime stats: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return st, fmt.Errorf("loadtest: runtime stats %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("loadtest: runtime stats %s: HTTP %d", url, resp.StatusCode)
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, fmt.Errorf("loadtest: runtime stats %s: %w", url, err)
	}
	return st, nil
}

// ProcStats are what the system reports about a process: its resident
// memory and the CPU time it used (user and system, all threads).
type ProcStats struct {
	RSS uint64        // resident set size, bytes (VmRSS)
	CPU time.Duration // utime + stime
}

// clockTicks is the unit of /proc/PID/stat's times (USER_HZ, 100 on every
// Linux architecture).
const clockTicks = 100

// ReadProcStats reads /proc/PID/status and /proc/PID/stat (Linux).
func ReadProcStats(pid int) (ProcStats, error) {
	var st ProcStats
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return st, fmt.Errorf("loadtest: process %d: %w", pid, err)
	}
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(rest)
			if len(f) >= 1 {
				kb, err := strconv.ParseUint(string(f[0]), 10, 64)
				if err != nil {
					return st, fmt.Errorf("loadtest: process %d: VmRSS: %w", pid, err)
				}
				st.RSS = kb << 10
			}
		}
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return st, fmt.Errorf("loadtest: process %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields counted are those after its closing parenthesis.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return st, fmt.Errorf("loadtest: process %d: malformed stat", pid)
	}
	f := bytes.Fields(stat[i+1:])
	// After the name: state(3) … utime(14) stime(15), i.e. f[11], f[12].
	if len(f) < 13 {
		return st, fmt.Errorf("loadtest: process %d: short stat", pid)
	}
	ut, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	stt, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return st, fmt.Errorf("loadtest: process %d: malformed stat times", pid)
	}
	st.CPU = time.Duration(ut+stt) * (time.Second / clockTicks)
	return st, nil
}
