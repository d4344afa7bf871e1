//go:build !race

package server_test

// raceBuild reports whether the race detector is on (see race_test.go).
const raceBuild = false
