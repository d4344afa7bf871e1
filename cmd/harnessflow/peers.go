//go:build peers

package main

// Built with -tags peers, the command links the official SDKs' stream
// accumulators as `bench --vs` peers; the product build leaves them (and
// the SDKs) out.
import _ "github.com/harnessflow/harnessflow/benchmark/sdkpeer"
