//go:build unix

package benchmark

import "syscall"

// processCPU returns the user+system CPU time of the process, all threads
// (GC workers included), in nanoseconds; ok is false when unavailable.
func processCPU() (ns int64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
