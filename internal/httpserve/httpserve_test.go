package httpserve

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Serve answers until its context ends, then returns nil and has closed
// the listener.
func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }), io.Discard)
	}()
	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Get("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	client.CloseIdleConnections()
	if string(b) != "ok" {
		t.Errorf("body %q", b)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(Grace + time.Second):
		t.Fatal("Serve did not return")
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("listener still open: %v", err)
	}
}

// A listener that fails is Serve's error, naming its address.
func TestServeListenerError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := Serve(context.Background(), ln, http.NotFoundHandler(), io.Discard); err == nil || !strings.Contains(err.Error(), "serve 127.0.0.1:") {
		t.Errorf("Serve on a closed listener: %v", err)
	}
}
