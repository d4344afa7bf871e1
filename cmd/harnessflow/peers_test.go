package main

// The tests of `bench` compare with the official SDKs' peers, which the
// product build leaves out (see peers.go): the test binary links them.
import _ "github.com/harnessflow/harnessflow/benchmark/sdkpeer"
