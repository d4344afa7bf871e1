//go:build !unix

package benchmark

// processCPU is unavailable on this platform.
func processCPU() (ns int64, ok bool) { return 0, false }
