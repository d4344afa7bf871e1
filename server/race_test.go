//go:build race

package server_test

// raceBuild reports whether the race detector is on: memory measurements
// are meaningless under it.
const raceBuild = true
