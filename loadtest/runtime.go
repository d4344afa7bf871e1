package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"time"
)

// RuntimeStats are a Go process's memory and scheduler figures, as a
// process under load serves them (`harnessflow serve --debug-addr` at
// GET /debug/runtime) for a proxy load run to sample. They come from
// runtime/metrics, which reads them without stopping the world.
type RuntimeStats struct {
	// HeapLive is the heap marked live by the last garbage collection.
	HeapLive uint64 `json:"heap_live_bytes"`
	// HeapObjects is the memory of the heap objects now, live or not yet
	// swept.
	HeapObjects uint64 `json:"heap_objects_bytes"`
	// Stacks is the memory of the goroutine stacks.
	Stacks uint64 `json:"stacks_bytes"`
	// Total is all the memory the Go runtime has mapped, minus what it
	// returned to the system.
	Total uint64 `json:"total_bytes"`
	// Goroutines is the number of live goroutines.
	Goroutines uint64 `json:"goroutines"`
	// GCCycles is the number of completed garbage collections.
	GCCycles uint64 `json:"gc_cycles"`
	// StackStart is the stack size new goroutines start with (the runtime
	// sets it from the average stack it scanned).
	StackStart uint64 `json:"stack_start_bytes"`
	// GOMAXPROCS is the scheduler's parallelism.
	GOMAXPROCS int `json:"gomaxprocs"`
}

// runtimeSamples are the runtime/metrics names RuntimeStats reads.
var runtimeSamples = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/sched/goroutines:goroutines",
	"/gc/cycles/total:gc-cycles",
	"/gc/stack/starting-size:bytes",
}

// ReadRuntimeStats reads this process's RuntimeStats.
func ReadRuntimeStats() RuntimeStats {
	s := make([]metrics.Sample, len(runtimeSamples))
	for i, name := range runtimeSamples {
		s[i].Name = name
	}
	metrics.Read(s)
	v := func(i int) uint64 {
		if s[i].Value.Kind() == metrics.KindUint64 {
			return s[i].Value.Uint64()
		}
		return 0
	}
	total, released := v(3), v(4)
	return RuntimeStats{
		HeapLive:    v(0),
		HeapObjects: v(1),
		Stacks:      v(2),
		Total:       total - min(released, total),
		Goroutines:  v(5),
		GCCycles:    v(6),
		StackStart:  v(7),
		GOMAXPROCS:  runtime.GOMAXPROCS(0),
	}
}

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
