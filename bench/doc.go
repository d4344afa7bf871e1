// Package bench holds harnessflow's benchmarks, with the peers they are
// compared against measured in the same run:
//
//	go test ./bench -run '^$' -bench . -benchmem
//
// bench/ is the one place outside pipeline/internal/gs that imports
// go-streams: only to measure it raw, as a peer.
package bench
