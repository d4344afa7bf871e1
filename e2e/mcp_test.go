package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/scripted"
)

// mcpProbeEnv, when set in the environment of the test binary, makes it
// the MCP server of TestCodexMCPToolSearch (see TestMain): a stdio MCP
// server with one tool, echo_text, that appends every tools/call it gets
// to the file the variable names, one JSON line per call.
const mcpProbeEnv = "HARNESSFLOW_E2E_MCP_PROBE"

const (
	// mcpServer is the MCP server's name in Codex's config; Codex puts its
	// tools in the namespace mcp__<name>.
	mcpServer = "probe"
	// mcpTool is the probe's one tool.
	mcpTool = "echo_text"
	// mcpText is what the scripted model asks the tool to echo, and
	// mcpEcho what the tool answers.
	mcpText = "hello through mcp"
	mcpEcho = "probe echoed: " + mcpText
)

// serveMCPProbe serves the probe MCP server (JSON-RPC, one message a line)
// on in and out until in ends, recording tools/call requests in record.
// It returns the process exit code.
func serveMCPProbe(in io.Reader, out io.Writer, record string) int {
	enc := json.NewEncoder(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			fmt.Fprintf(os.Stderr, "mcp probe: bad message %q: %v\n", sc.Bytes(), err)
			return 1
		}
		if len(msg.ID) == 0 || msg.Method == "" {
			continue // a notification, or a response to nothing we asked
		}
		var result any
		var rpcErr any
		switch msg.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(msg.Params, &p)
			result = map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
				"serverInfo":      map[string]any{"name": mcpServer, "version": "0.0.1"},
			}
		case "ping":
			result = map[string]any{}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{
				"name":        mcpTool,
				"description": "Echo a text back, prefixed with the probe's name.",
				"inputSchema": map[string]any{"type": "object",
					"properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}},
				"annotations": map[string]any{"readOnlyHint": true},
			}}}
		case "tools/call":
			var p struct {
				Name      string `json:"name"`
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			}
			if err := json.Unmarshal(msg.Params, &p); err != nil {
				rpcErr = map[string]any{"code": -32602, "message": err.Error()}
				break
			}
			f, err := os.OpenFile(record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err == nil {
				_, err = fmt.Fprintf(f, "%s\n", msg.Params)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "mcp probe: record: %v\n", err)
				return 1
			}
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "probe echoed: " + p.Arguments.Text}}}
		default:
			rpcErr = map[string]any{"code": -32601, "message": "method not found: " + msg.Method}
		}
		resp := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
		if rpcErr != nil {
			resp["error"] = rpcErr
		} else {
			resp["result"] = result
		}
		if err := enc.Encode(resp); err != nil {
			return 1
		}
	}
	return 0
}

// mcpConfig is the config.toml table that starts this test binary as the
// probe MCP server, recording its calls in record.
func mcpConfig(t *testing.T, record string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("\n[mcp_servers.%s]\ncommand = %q\nargs = []\nenv = { %s = %q }\nstartup_timeout_sec = 20\n",
		mcpServer, self, mcpProbeEnv, record)
}

// mcpScript searches for a tool, calls the MCP tool the search loaded
// (wire is its name as the request offers it), then quotes its result.
// With dispatch (qwen-code), the tool is run through the harness's own
// tool_call tool, which names it.
func mcpScript(wire string, dispatch bool) *scripted.Script {
	no := false
	call := scripted.ToolCall{Name: wire, Arguments: json.RawMessage(`{"text":"` + mcpText + `"}`)}
	offered := wire
	if dispatch {
		call = scripted.ToolCall{Name: "tool_call", Arguments: json.RawMessage(`{"name":"` + wire + `","arguments":{"text":"` + mcpText + `"}}`)}
		offered = "tool_call"
	}
	return &scripted.Script{Turns: []scripted.Turn{
		{When: &scripted.Match{ToolResultContains: mcpEcho}, Text: "The MCP tool said: {{tool_output}}"},
		{When: &scripted.Match{HasTool: offered, ToolResultContains: "The search loaded"}, Text: "Calling the tool I found.",
			ToolCalls: []scripted.ToolCall{call}},
		{When: &scripted.Match{HasTool: "tool_search", ToolResult: &no}, Text: "Searching for an echo tool.",
			ToolCalls: []scripted.ToolCall{{Name: "tool_search", Arguments: json.RawMessage(`{"query":"echo text"}`)}}},
	}}
}

// TestCodexMCPToolSearch drives a real Codex with a real stdio MCP server
// through a chat upstream: the model calls tool_search, Codex runs the
// search and loads the MCP tool, the model calls it, the MCP server gets
// tools/call, and its result reaches the model — on the native route and
// on a harness route that sends the client's tools.
func TestCodexMCPToolSearch(t *testing.T) {
	bin := os.Getenv(codexEnv)
	if bin == "" {
		t.Skipf("set %s to a Codex CLI binary to run (scripts/e2e-codex.sh does)", codexEnv)
	}
	const wireName = "mcp__" + mcpServer + "_" + mcpTool // the native naming rule of namespace mcp__probe
	for _, route := range []struct {
		name, path, harness string
		dispatch            bool // the harness runs loaded tools through its own tool_call
	}{
		{"native", "/v1", "", false},
		{"minimal", "/h/minimal/v1", harness.NameMinimal, false},
		{"kimi-cli", "/h/kimi-cli/v1", harness.NameKimiCLI, false},
		{"qwen-code", "/h/qwen-code/v1", harness.NameQwenCode, true},
	} {
		t.Run(route.name, func(t *testing.T) {
			t.Parallel()
			record := t.TempDir() + "/calls.jsonl"
			p := startProxy(t, mcpScript(wireName, route.dispatch))
			run := runCodexConfig(t, bin, p.url+route.path, codexModel, true, mcpConfig(t, record))
			if run.exitCode != 0 {
				t.Fatalf("codex exited with %d, want 0\n%s", run.exitCode, run)
			}
			ev := parseEvents(t, run)
			final := ev.finalMessage(t)
			if !strings.HasPrefix(final, "The MCP tool said: ") || !strings.Contains(final, mcpEcho) {
				t.Errorf("final message does not quote the MCP tool's answer %q:\n%s", mcpEcho, final)
			}
			calls, err := os.ReadFile(record)
			if err != nil {
				t.Fatalf("the MCP server got no tools/call: %v\n%s", err, run)
			}
			if lines := strings.Split(strings.TrimSpace(string(calls)), "\n"); len(lines) != 1 ||
				!strings.Contains(lines[0], `"name":"`+mcpTool+`"`) || !strings.Contains(lines[0], mcpText) {
				t.Errorf("MCP tools/call requests = %q, want one call of %s with %q", calls, mcpTool, mcpText)
			}
			p.stop(t)
			bodies := p.upstreamBodies()
			if len(bodies) != 3 {
				t.Fatalf("upstream got %d requests, want 3 (search, MCP call, final)", len(bodies))
			}
			checkMCPBodies(t, bodies, wireName, route.dispatch)
			if route.harness == "" {
				checkBaseSystem(t, bodies)
			}
		})
	}
}

// checkMCPBodies checks the chat requests of the MCP exchange: the first
// offers tool_search and not the MCP tool; the second renders the search
// (a tool_search call and its result) and offers the loaded MCP tool; the
// third carries the MCP tool's answer. No request offers web_search. With
// dispatch the MCP tool is never offered (the harness's tool_call runs it).
func checkMCPBodies(t *testing.T, bodies [][]byte, wireName string, dispatch bool) {
	t.Helper()
	type message struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	for i, body := range bodies {
		var b struct {
			Messages []message `json:"messages"`
			Tools    []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		offered := map[string]bool{}
		for _, tool := range b.Tools {
			offered[tool.Function.Name] = true
		}
		if !offered["tool_search"] || offered["web_search"] {
			t.Errorf("request %d offers tool_search %t, web_search %t; want true, false", i+1, offered["tool_search"], offered["web_search"])
		}
		if want := i > 0 && !dispatch; offered[wireName] != want {
			t.Errorf("request %d offers %s: %t, want %t", i+1, wireName, offered[wireName], want)
		}
		if i == 0 {
			continue
		}
		var searched, answered bool
		for _, m := range b.Messages {
			for _, c := range m.ToolCalls {
				searched = searched || c.Function.Name == "tool_search"
			}
			if m.Role == "tool" && strings.Contains(string(m.Content), wireName) {
				answered = true
			}
		}
		if !searched || !answered {
			t.Errorf("request %d: tool_search call rendered %t, its result naming %s %t\n%s", i+1, searched, wireName, answered, body)
		}
		if i == 2 && !strings.Contains(string(body), mcpEcho) {
			t.Errorf("request 3 does not carry the MCP tool's answer %q", mcpEcho)
		}
	}
}

// checkBaseSystem checks that every native chat request opens with a
// system message holding Codex's base prompt (Codex 0.171 sends it as the
// first developer message, no instructions), and has no other system
// message.
func checkBaseSystem(t *testing.T, bodies [][]byte) {
	t.Helper()
	for i, body := range bodies {
		var b struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		var base string
		if len(b.Messages) > 0 {
			_ = json.Unmarshal(b.Messages[0].Content, &base) // a system message is a plain string
		}
		if i == 0 {
			t.Logf("native request 1: system message of %d characters, %d messages", len(base), len(b.Messages))
		}
		systems := 0
		for _, m := range b.Messages {
			if m.Role == "system" {
				systems++
			}
		}
		// The base prompt of Codex 0.171 is 13-26k characters and starts
		// by naming Codex.
		if len(b.Messages) == 0 || b.Messages[0].Role != "system" || len(base) < 10000 ||
			!strings.Contains(base[:200], "Codex") || systems != 1 {
			first := ""
			if len(b.Messages) > 0 {
				first = b.Messages[0].Role + ": " + string(b.Messages[0].Content[:min(len(b.Messages[0].Content), 200)])
			}
			t.Errorf("request %d: first message %q (%d system messages), want the one system message holding Codex's base prompt", i+1, first, systems)
		}
	}
}
