//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// checkFileLimit reports when n concurrent streams would need more file
// descriptors than a process may open: serve holds two per stream (the
// client's connection and the upstream's), the bench process one.
func checkFileLimit(n int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // unknown: let the run find out
	}
	if need := uint64(2*n + 256); lim.Max < need {
		return fmt.Errorf("%d streams need about %d open files per process; the limit is %d (ulimit -Hn)", n, need, lim.Max)
	}
	return nil
}
