package procdebug

import (
	"runtime"
	"runtime/metrics"
)

// RuntimeStats are a Go process's memory and scheduler figures, as a
// process serves them (`harnessflow serve --debug-addr` at
// GET /debug/runtime) for a proxy load run to sample. They come from
// runtime/metrics, which reads them without stopping the world.
type RuntimeStats struct {
	// HeapLive is the heap marked live by the last garbage collection.
	HeapLive uint64 `json:"heap_live_bytes"`
	// HeapObjects is the memory of the heap objects now, live or not yet
	// swept.
	HeapObjects uint64 `json:"heap_objects_bytes"`
	// Stacks is the memory of the goroutine stacks.
	Stacks uint64 `json:"stacks_bytes"`
	// Total is all the memory the Go runtime has mapped, minus what it
	// returned to the system.
	Total uint64 `json:"total_bytes"`
	// Goroutines is the number of live goroutines.
	Goroutines uint64 `json:"goroutines"`
	// GCCycles is the number of completed garbage collections.
	GCCycles uint64 `json:"gc_cycles"`
	// StackStart is the stack size new goroutines start with (the runtime
	// sets it from the average stack it scanned).
	StackStart uint64 `json:"stack_start_bytes"`
	// GOMAXPROCS is the scheduler's parallelism.
	GOMAXPROCS int `json:"gomaxprocs"`
}

// runtimeSamples are the runtime/metrics names RuntimeStats reads.
var runtimeSamples = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/sched/goroutines:goroutines",
	"/gc/cycles/total:gc-cycles",
	"/gc/stack/starting-size:bytes",
}

// ReadRuntimeStats reads this process's RuntimeStats.
func ReadRuntimeStats() RuntimeStats {
	s := make([]metrics.Sample, len(runtimeSamples))
	for i, name := range runtimeSamples {
		s[i].Name = name
	}
	metrics.Read(s)
	v := func(i int) uint64 {
		if s[i].Value.Kind() == metrics.KindUint64 {
			return s[i].Value.Uint64()
		}
		return 0
	}
	total, released := v(3), v(4)
	return RuntimeStats{
		HeapLive:    v(0),
		HeapObjects: v(1),
		Stacks:      v(2),
		Total:       total - min(released, total),
		Goroutines:  v(5),
		GCCycles:    v(6),
		StackStart:  v(7),
		GOMAXPROCS:  runtime.GOMAXPROCS(0),
	}
}
