//go:build race

package main

// raceBuild reports whether the test binary has the race detector: the
// harnessflow binary the signal test builds gets it too, so that the build
// reuses the packages compiled for the test and only links.
const raceBuild = true
