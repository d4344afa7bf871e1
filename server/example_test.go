package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/harnessflow/harnessflow/harness/all"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// serve's handler inside a program's own http.Server, behind its own
// middleware (a header and a request counter) and with a stage of its own
// in every response graph (Config.Extend), proxying to a chat model
// server — here the scripted model on loopback. The native route and a
// harness route each answer a streamed Responses request that offers
// Codex's exec_command: on /h/opencode/ the model is shown opencode's own
// tools and calls its bash tool, which the harness's bridge hands back to
// the client as the exec_command call it offered.
func Example() {
	upstream := httptest.NewServer(scripted.New(scripted.Default()))
	defer upstream.Close()

	// A stage of our own in every response graph: it counts the tool
	// calls the clients are handed.
	var calls atomic.Int64
	node := pipeline.StageNode("user.calls", pipeline.Map(func(ev protocol.ResponseEvent) protocol.ResponseEvent {
		if _, ok := ev.Item.(*protocol.FunctionCall); ok && ev.Type == protocol.EventOutputItemDone {
			calls.Add(1)
		}
		return ev
	}))
	countCalls := func(server.StreamInfo) []pipeline.Edit {
		return []pipeline.Edit{func(g *pipeline.Graph) (*pipeline.Graph, error) { return g.Append(node) }}
	}
	proxy := server.New(server.Config{
		Upstream: upstream.URL + "/v1",
		Registry: all.Registry(), // the harnesses of the /h/{harness}/ routes
		Extend:   countCalls,
		Now:      func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		Logger:   slog.New(slog.DiscardHandler), // one record per request otherwise
	})
	defer proxy.CloseIdleConnections()

	var requests atomic.Int64
	middleware := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			w.Header().Set("X-Gateway", "example")
			next.ServeHTTP(w, r)
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := &http.Server{Handler: middleware(proxy.Handler()), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	client := &http.Client{}
	defer client.CloseIdleConnections()

	for _, path := range []string{"/v1/responses", "/h/opencode/v1/responses"} {
		body := `{"model":"my-model","input":"list the files","stream":true,"tools":[{"type":"function","name":"exec_command",` +
			`"parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}]}`
		resp, err := client.Post("http://"+ln.Addr().String()+path, "application/json", strings.NewReader(body))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(path, resp.Status, resp.Header.Get("Content-Type"), "X-Gateway:", resp.Header.Get("X-Gateway"))
		// The stream's ids are random; its items and last event are not.
		var last string
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Type string
				Item struct{ Type, Name, Arguments string }
				Text string
			}
			if json.Unmarshal([]byte(data), &ev) != nil {
				continue
			}
			last = ev.Type
			switch ev.Type {
			case "response.output_text.done":
				fmt.Printf("  text: %q\n", ev.Text)
			case "response.output_item.done":
				if ev.Item.Type == "function_call" {
					fmt.Printf("  call: %s %s\n", ev.Item.Name, ev.Item.Arguments)
				}
			}
		}
		resp.Body.Close()
		fmt.Println("  last event:", last)
	}
	fmt.Println("requests through the middleware:", requests.Load(), "— calls through user.calls:", calls.Load())
	// Output:
	// /v1/responses 200 OK text/event-stream X-Gateway: example
	//   text: "Let me run a quick command."
	//   call: exec_command {"cmd":"echo hello from harnessflow"}
	//   last event: response.completed
	// /h/opencode/v1/responses 200 OK text/event-stream X-Gateway: example
	//   text: "Let me run a quick command."
	//   call: exec_command {"cmd":"echo hello from harnessflow"}
	//   last event: response.completed
	// requests through the middleware: 2 — calls through user.calls: 2
}
