//go:build !race

package main

// raceBuild reports whether the test binary has the race detector (see
// race_test.go).
const raceBuild = false
