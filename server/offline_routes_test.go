package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/scripted"
	"github.com/harnessflow/harnessflow/server"
)

// execTool is Codex's shell tool, as a client's "hi" request carries it.
const execTool = `{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}`

// shellCall is the shell call of a response's output: a local_shell_call,
// or a function_call of a shell tool; nil when there is none.
func shellCall(items []map[string]any) map[string]any {
	for _, it := range items {
		switch it["type"] {
		case "local_shell_call":
			return it
		case "function_call":
			switch it["name"] {
			case "exec_command", "bash", "shell", "Bash":
				return it
			}
		}
	}
	return nil
}

// TestEveryRouteShellCallOffline: with the embedded scripted model, a
// "hi" request to every harness route (on every wire the harness shapes
// that the scripted model speaks) answers with a shell call event, and a
// second request carrying the call's output answers with a final text
// quoting it — the text-protocol harnesses included, in their own formats.
func TestEveryRouteShellCallOffline(t *testing.T) {
	up := newUpstream(t, scripted.New(nil))
	// Routes that answer a request without tools with a shell call too: the
	// text protocols, and opencode (its own bash tool).
	noTools := []string{harness.NameSWEAgent, "terminus-2", "mini-swe-agent", "opencode"}
	type route struct {
		harness string
		wire    harness.Wire
		tools   string // the request's tools ("" for none)
		variant string // the harness's variant ("" for its default)
	}
	var routes []route
	for _, spec := range harness.All() {
		for _, w := range spec.Wires {
			if w == harness.WireResponses {
				continue // the scripted model speaks chat and messages
			}
			routes = append(routes, route{spec.Name, w, "[" + execTool + "]", ""})
			if slices.Contains(noTools, spec.Name) {
				routes = append(routes, route{spec.Name, w, "", ""})
			}
		}
	}
	if len(routes) < 10 {
		t.Fatalf("only %d routes: the harnesses are not all linked in", len(routes))
	}
	routes = append(routes,
		route{"terminus-2", harness.WireChat, "", "xml"},
		route{"mini-swe-agent", harness.WireChat, "", "text"},
		route{"mini-swe-agent", harness.WireChat, "[" + execTool + "]", "text"})
	proxies := map[string]*proxy{}
	proxyFor := func(r route) *proxy {
		key := string(r.wire) + "/" + r.harness + "=" + r.variant
		if p := proxies[key]; p != nil {
			return p
		}
		cfg := server.Config{Wire: r.wire}
		if r.variant != "" {
			cfg.Variants = map[string]string{r.harness: r.variant}
		}
		proxies[key] = newProxy(t, up, cfg)
		return proxies[key]
	}
	const output = "hello from harnessflow"
	for _, r := range routes {
		name := r.harness + "/" + string(r.wire)
		if r.variant != "" {
			name += "/" + r.variant
		}
		tools := ""
		if r.tools == "" {
			name += "/no-tools"
		} else {
			tools = `,"tools":` + r.tools
		}
		t.Run(name, func(t *testing.T) {
			p, path := proxyFor(r), "/h/"+r.harness+"/v1/responses"
			hi := `{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`
			resp := p.post(t, path, `{"model":"m","stream":true,"input":[`+hi+`]`+tools+`}`, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("first request: HTTP %d", resp.StatusCode)
			}
			items := doneItems(readSSE(t, resp.Body))
			call := shellCall(items)
			if call == nil {
				t.Fatalf("first request: no shell call in %v", items)
			}
			if !strings.Contains(mustJSON(t, call), scripted.DefaultCommand) {
				t.Errorf("the shell call does not run %q: %v", scripted.DefaultCommand, call)
			}
			// The client runs it and sends the output back (Codex's
			// exec_command framing) after the items of the answer.
			input := []string{hi}
			for _, it := range items {
				delete(it, "id")
				input = append(input, mustJSON(t, it))
			}
			result := map[string]any{"type": "function_call_output", "call_id": call["call_id"],
				"output": "Chunk ID: 1\nWall time: 0.01 seconds\nProcess exited with code 0\nOutput:\n" + output + "\n"}
			input = append(input, mustJSON(t, result))
			body := `{"model":"m","stream":true,"input":[` + strings.Join(input, ",") + `]` + tools + `}`
			resp = p.post(t, path, body, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("second request: HTTP %d", resp.StatusCode)
			}
			evs := readSSE(t, resp.Body)
			items = doneItems(evs)
			if c := shellCall(items); c != nil {
				t.Errorf("second request: another shell call %v", c)
			}
			var final string
			for _, it := range items {
				if it["type"] == "message" && it["role"] == "assistant" {
					final = mustJSON(t, it["content"])
				}
			}
			if !strings.Contains(final, output) {
				t.Errorf("second request: no final text quoting %q; items %v", output, items)
			}
			if last := evs[len(evs)-1]; last.Name != "response.completed" {
				t.Errorf("second request ends with %s", last.Name)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
