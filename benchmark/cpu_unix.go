//go:build unix

package benchmark

import "syscall"

// ProcessCPU returns the user+system CPU time of the process, all threads
// (GC workers included), in nanoseconds; ok is false when unavailable. Go
// benchmarks report it per operation next to the wall time: it is steadier
// when other processes compete for the cores.
func ProcessCPU() (ns int64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
