//go:build !unix

package benchmark

// ProcessCPU is unavailable on this platform: ok is false.
func ProcessCPU() (ns int64, ok bool) { return 0, false }
