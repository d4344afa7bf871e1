package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/server"
)

// maxProfileSeconds bounds a CPU profile taken through the debug endpoints.
const maxProfileSeconds = 120

// debugHandler serves a process's profiles and runtime statistics — opt-in
// (serve --debug-addr), for a loopback address only:
//
//	GET /debug/runtime                  RuntimeStats as JSON (heap, stacks, goroutines, GCs)
//	GET /debug/pprof/profile?seconds=N  a CPU profile of the next N seconds (default 10)
//	GET /debug/pprof/NAME               heap, allocs, goroutine, block, mutex, threadcreate (?gc=1 collects first, ?debug=1 as text)
//
// The profiles are those of runtime/pprof, in the format `go tool pprof`
// reads (it fetches URLs too).
func debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/runtime", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(benchmark.ReadRuntimeStats()) // a failed write means the client went away
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

// startDebug serves debugHandler on addr, which must be a loopback address,
// until the returned stop function is called (it waits for the server to
// end). It prints the address to out.
func startDebug(ctx context.Context, addr string, out, stderr io.Writer) (stop func(), err error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--debug-addr: %w", err)
	}
	if !server.IsLoopback(ln.Addr()) {
		ln.Close()
		return nil, errors.New("--debug-addr: the debug endpoints serve a loopback address only (profiles reveal the process's memory)")
	}
	fmt.Fprintf(out, "harnessflow: debug endpoints on http://%s/debug/ (pprof, runtime statistics)\n", ln.Addr())
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := serveHTTP(dctx, ln, debugHandler(), stderr); err != nil {
			fmt.Fprintf(stderr, "harnessflow: debug endpoints: %v\n", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}
