//go:build race

package main

// raceBuild reports whether the test binary has the race detector: the
// harnessflow binary the tests build gets it too.
const raceBuild = true
