// Package procdebug serves a process's profiles and runtime statistics on
// a debug address: `harnessflow serve --debug-addr`, and the processes a
// load run measures (package loadtest) read them.
package procdebug

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
)

// maxProfileSeconds bounds a CPU profile taken through the debug endpoints.
const maxProfileSeconds = 120

// Handler serves a process's profiles and runtime statistics, what a
// load run samples of the process it measures (`harnessflow serve
// --debug-addr` and the pass-through serve it; mount it on a loopback
// address only: profiles reveal the process's memory):
//
//	GET /debug/runtime                  RuntimeStats as JSON (heap, stacks, goroutines, GCs)
//	GET /debug/pprof/profile?seconds=N  a CPU profile of the next N seconds (default 10)
//	GET /debug/pprof/NAME               heap, allocs, goroutine, block, mutex, threadcreate (?gc=1 collects first, ?debug=1 as text)
//
// The profiles are those of runtime/pprof, in the format `go tool pprof`
// reads (it fetches URLs too).
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/runtime", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(ReadRuntimeStats()) // a failed write means the client went away
	})
	mux.HandleFunc("GET /debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
		secs := 10
		if s := r.URL.Query().Get("seconds"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > maxProfileSeconds {
				http.Error(w, fmt.Sprintf("seconds: want 1 to %d", maxProfileSeconds), http.StatusBadRequest)
				return
			}
			secs = n
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		if err := pprof.StartCPUProfile(w); err != nil {
			// Another profile is running.
			http.Error(w, "cpu profile: "+err.Error(), http.StatusConflict)
			return
		}
		t := time.NewTimer(time.Duration(secs) * time.Second)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
		pprof.StopCPUProfile()
	})
	mux.HandleFunc("GET /debug/pprof/{name}", func(w http.ResponseWriter, r *http.Request) {
		p := pprof.Lookup(r.PathValue("name"))
		if p == nil {
			http.Error(w, "no profile "+strconv.Quote(r.PathValue("name")), http.StatusNotFound)
			return
		}
		if r.URL.Query().Get("gc") == "1" {
			runtime.GC()
		}
		debug, _ := strconv.Atoi(r.URL.Query().Get("debug"))
		if debug > 0 {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		} else {
			w.Header().Set("Content-Type", "application/octet-stream")
		}
		_ = p.WriteTo(w, debug) // a failed write means the client went away
	})
	mux.HandleFunc("GET /debug/pprof/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "profiles: /debug/pprof/profile?seconds=N")
		for _, p := range pprof.Profiles() {
			_, _ = io.WriteString(w, " /debug/pprof/"+p.Name())
		}
		_, _ = io.WriteString(w, "\nruntime statistics: /debug/runtime\n")
	})
	return mux
}
