package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/harnessflow/harnessflow/internal/httpserve"
	"github.com/harnessflow/harnessflow/internal/procdebug"
	"io"
	"net"

	"github.com/harnessflow/harnessflow/server"
)

// startDebug serves procdebug.Handler on addr, which must be a loopback address,
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
		if err := httpserve.Serve(dctx, ln, procdebug.Handler(), stderr); err != nil {
			fmt.Fprintf(stderr, "harnessflow: debug endpoints: %v\n", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}
