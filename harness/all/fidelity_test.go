package all_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/harnesstest"
	"github.com/harnessflow/harnessflow/protocol"
)

// route is one (config name, wire) pair served by an emulating harness.
type route struct {
	name string
	wire harness.Wire
}

// emulatingRoutes lists every route of this build that a harness other
// than native serves.
func emulatingRoutes() []route {
	var out []route
	for _, name := range harness.KnownNames() {
		for _, w := range harness.Wires() {
			r, err := harness.Resolve(w, name)
			if err != nil || r.Harness == harness.NativeName {
				continue
			}
			if _, ok := harness.Lookup(r.Harness); !ok {
				continue
			}
			out = append(out, route{name, w})
		}
	}
	return out
}

func sharedReq(t *testing.T, name string) *protocol.ResponsesRequest {
	t.Helper()
	data, err := harnesstest.SharedRequest(name)
	if err != nil {
		t.Fatal(err)
	}
	req, err := protocol.DecodeRequest(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return req
}

func decode(t *testing.T, data []byte) *protocol.ResponsesRequest {
	t.Helper()
	req, err := protocol.DecodeRequest(data)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func clockAt(t time.Time) harness.Config {
	return harness.Config{Now: func() time.Time { return t }}
}

func plan(cfg harness.Config, r route, req *protocol.ResponsesRequest) (*harness.Turn, error) {
	cfg.Wire = r.wire
	return harness.Plan(context.Background(), cfg, r.name, req, nil)
}

// sent is everything a turn sends upstream: the body and the title request.
func sent(t *harness.Turn) []byte {
	return append(append([]byte(nil), t.Shaped.Body...), t.Shaped.TitleRequest...)
}

// bodyTools counts the tools of a shaped body on any wire.
func bodyTools(t *testing.T, body []byte) int {
	t.Helper()
	var b struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("body: %v", err)
	}
	return len(b.Tools)
}

// systemPrompt is the system part of a shaped body: the leading system
// messages on chat, "system" on messages, "instructions" on responses.
func systemPrompt(t *testing.T, w harness.Wire, body []byte) string {
	t.Helper()
	var b struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		System       json.RawMessage `json:"system"`
		Instructions string          `json:"instructions"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("body: %v", err)
	}
	switch w {
	case harness.WireResponses:
		return b.Instructions
	case harness.WireMessages:
		// The billing block hashes the whole request (as Claude Code's
		// does) and stands before the cache breakpoint: not the prompt.
		var blocks []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(b.System, &blocks) != nil {
			return string(b.System)
		}
		var texts []string
		for _, bl := range blocks {
			if !strings.HasPrefix(bl.Text, "x-anthropic-billing-header:") {
				texts = append(texts, bl.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	var parts []string
	for _, m := range b.Messages {
		if m.Role != "system" {
			break
		}
		parts = append(parts, string(m.Content))
	}
	return strings.Join(parts, "\n")
}

// Codex 0.171's request shapes: no text of its base prompt (the first
// developer message) reaches any emulating harness's request; a harness
// that sends tools for the custom-model shape sends tools for the
// default-model shape too, or refuses it with the no-shell error.
func TestBasePromptNeverSent(t *testing.T) {
	shapes := []string{"plain", "tool_history", "namespaced_tools", "default_model", "default_model_followup", "agents_md"}
	for _, r := range emulatingRoutes() {
		for _, shape := range shapes {
			req := sharedReq(t, shape)
			norm, err := harness.HarnessRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			base := strings.TrimSpace(norm.Instructions)
			if base == "" {
				t.Fatalf("%s: no base instructions recognized", shape)
			}
			turn, err := plan(clockAt(harnesstest.DefaultNow), r, req)
			if errors.Is(err, harness.ErrNoClientShell) {
				continue
			}
			if err != nil {
				t.Errorf("%s on %s, %s: %v", r.name, r.wire, shape, err)
				continue
			}
			if bytes.Contains(sent(turn), []byte(base[:40])) {
				t.Errorf("%s on %s, %s: the engine's base prompt reached the upstream", r.name, r.wire, shape)
			}
		}
	}
}

func TestDefaultModelKeepsTools(t *testing.T) {
	for _, r := range emulatingRoutes() {
		custom, err := plan(clockAt(harnesstest.DefaultNow), r, sharedReq(t, "plain"))
		if err != nil {
			t.Fatalf("%s on %s: %v", r.name, r.wire, err)
		}
		if bodyTools(t, custom.Shaped.Body) == 0 {
			continue // a text-protocol harness: no tools on the wire
		}
		for _, shape := range []string{"default_model", "default_model_followup"} {
			turn, err := plan(clockAt(harnesstest.DefaultNow), r, sharedReq(t, shape))
			switch {
			case errors.Is(err, harness.ErrNoClientShell):
				spec, _ := harness.Lookup(turn2harness(t, r))
				if spec.Bridge == nil {
					t.Errorf("%s on %s, %s: no-shell error from a harness that bridges nothing", r.name, r.wire, shape)
				}
				if !strings.Contains(err.Error(), "exec_command") || !strings.Contains(err.Error(), "code-mode") {
					t.Errorf("%s on %s: the error does not say what is missing: %v", r.name, r.wire, err)
				}
			case err != nil:
				t.Errorf("%s on %s, %s: %v", r.name, r.wire, shape, err)
			case bodyTools(t, turn.Shaped.Body) == 0:
				t.Errorf("%s on %s, %s: the request lost its tools", r.name, r.wire, shape)
			}
		}
	}
}

func turn2harness(t *testing.T, r route) string {
	t.Helper()
	rt, err := harness.Resolve(r.wire, r.name)
	if err != nil {
		t.Fatal(err)
	}
	return rt.Harness
}

// withAdditionalShell is the default-model shape whose additional_tools
// item also carries exec_command: the tools there are the request's tools
// (the bridge finds the shell) and the item is not conversation (the
// first turn is still a first turn).
func withAdditionalShell(t *testing.T) *protocol.ResponsesRequest {
	t.Helper()
	var v map[string]any
	data, _ := harnesstest.SharedRequest("default_model")
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	plain, _ := harnesstest.SharedRequest("plain")
	var p map[string]any
	if err := json.Unmarshal(plain, &p); err != nil {
		t.Fatal(err)
	}
	at := v["input"].([]any)[0].(map[string]any)
	at["tools"] = append(at["tools"].([]any), p["tools"].([]any)...)
	out, _ := json.Marshal(v)
	return decode(t, out)
}

// A title request goes with the first turn wherever the harness sends one
// for the custom-model shape, also when the tools come in an
// additional_tools item.
func TestTitleRequestWithAdditionalTools(t *testing.T) {
	for _, r := range emulatingRoutes() {
		custom, err := plan(clockAt(harnesstest.DefaultNow), r, sharedReq(t, "plain"))
		if err != nil {
			t.Fatal(err)
		}
		turn, err := plan(clockAt(harnesstest.DefaultNow), r, withAdditionalShell(t))
		if err != nil {
			t.Errorf("%s on %s: %v", r.name, r.wire, err)
			continue
		}
		if (custom.Shaped.TitleRequest != nil) != (turn.Shaped.TitleRequest != nil) {
			t.Errorf("%s on %s: title request %v for the custom-model shape, %v with additional_tools",
				r.name, r.wire, custom.Shaped.TitleRequest != nil, turn.Shaped.TitleRequest != nil)
		}
		if bodyTools(t, custom.Shaped.Body) > 0 && bodyTools(t, turn.Shaped.Body) == 0 {
			t.Errorf("%s on %s: no tools from the additional_tools item", r.name, r.wire)
		}
	}
}

// The same request shapes to the same bytes whatever the proxy's clock
// says, and two turns of one conversation carry the same system prompt.
func TestDeterministicShaping(t *testing.T) {
	t1 := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	t2 := time.Date(2026, 1, 9, 23, 59, 58, 999999000, time.FixedZone("", -7*3600))
	noDate := func(req *protocol.ResponsesRequest) *protocol.ResponsesRequest {
		// The environment block without a current_date: the
		// conversation key (a UUIDv7) fixes the time.
		data, _ := req.MarshalJSON()
		data = bytes.ReplaceAll(data, []byte(`\n  <current_date>2026-01-02</current_date>`), nil)
		out := decode(t, data)
		out.PromptCacheKey = "019b7d3c-1a2b-7c3d-8e4f-0123456789ab"
		return out
	}
	for _, r := range emulatingRoutes() {
		for _, shape := range []string{"plain", "agents_md"} {
			for _, mk := range []func(*protocol.ResponsesRequest) *protocol.ResponsesRequest{
				func(r *protocol.ResponsesRequest) *protocol.ResponsesRequest { return r }, noDate,
			} {
				first := mk(sharedReq(t, shape))
				a, err := plan(clockAt(t1), r, first)
				if err != nil {
					t.Fatal(err)
				}
				b, err := plan(clockAt(t2), r, mk(sharedReq(t, shape)))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(sent(a), sent(b)) {
					t.Errorf("%s on %s, %s: the same request shaped differently at two clock times:\n%s\n---\n%s", r.name, r.wire, shape, a.Shaped.Body, b.Shaped.Body)
				}
				// The next turn: the model ran a command and saw its output.
				next := *first
				next.Input = append(append(protocol.Items{}, first.Input...),
					&protocol.FunctionCall{CallID: "call_9", Name: "exec_command", Arguments: `{"cmd":"ls"}`},
					&protocol.FunctionCallOutput{CallID: "call_9", Output: protocol.FunctionCallOutputPayload{Text: ptr("main.go\n")}})
				c, err := plan(clockAt(t2.Add(26*time.Hour)), r, &next)
				if err != nil {
					t.Fatal(err)
				}
				if sa, sc := systemPrompt(t, r.wire, a.Shaped.Body), systemPrompt(t, r.wire, c.Shaped.Body); sa != sc {
					t.Errorf("%s on %s, %s: the system prompt changed between two turns:\n%s\n---\n%s", r.name, r.wire, shape, sa, sc)
				}
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// A request naming a directory of this machine as its cwd: under the
// workspace policy none nothing of it reaches any body; under local the
// listing harnesses show it (so the test can fail).
func TestWorkspaceNoneReadsNothing(t *testing.T) {
	dir := t.TempDir()
	const marker = "MARKER-7f3a-listed-file.txt"
	if err := os.WriteFile(filepath.Join(dir, marker), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("MARKER-7f3a-agents-file"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, _ := harnesstest.SharedRequest("plain")
	data = bytes.ReplaceAll(data, []byte("<cwd>/work/project</cwd>"), []byte("<cwd>"+dir+"</cwd>"))
	shownLocally := 0
	for _, r := range emulatingRoutes() {
		for _, p := range []harness.WorkspacePolicy{harness.WorkspaceNone, harness.WorkspaceLocal} {
			cfg := clockAt(harnesstest.DefaultNow)
			cfg.Workspace = p
			turn, err := plan(cfg, r, decode(t, data))
			if err != nil {
				t.Fatal(err)
			}
			body := sent(turn)
			if bytes.Contains(body, []byte("MARKER-7f3a-agents-file")) {
				t.Errorf("%s on %s (%s): an AGENTS.md file of this machine was read", r.name, r.wire, p)
			}
			switch {
			case p == harness.WorkspaceNone && bytes.Contains(body, []byte(marker)):
				t.Errorf("%s on %s: workspace none, yet the directory listing reached the body", r.name, r.wire)
			case p == harness.WorkspaceLocal && bytes.Contains(body, []byte(marker)):
				shownLocally++
			}
		}
	}
	if shownLocally < 3 { // kimi-cli, qwen-code and kimi-code list the directory
		t.Errorf("the listing reached %d bodies under local, want kimi-cli's, qwen-code's and kimi-code's", shownLocally)
	}
}

func TestDefaultWorkspacePolicy(t *testing.T) {
	tests := []struct {
		listen string
		keys   bool
		want   harness.WorkspacePolicy
	}{
		{"127.0.0.1:8080", false, harness.WorkspaceLocal},
		{"[::1]:0", false, harness.WorkspaceLocal},
		{"localhost:9000", false, harness.WorkspaceLocal},
		{"127.0.0.1:8080", true, harness.WorkspaceNone},
		{"0.0.0.0:8080", false, harness.WorkspaceNone},
		{":8080", false, harness.WorkspaceNone},
		{"10.1.2.3:80", false, harness.WorkspaceNone},
	}
	for _, tt := range tests {
		if got := harness.DefaultWorkspacePolicy(tt.listen, tt.keys); got != tt.want {
			t.Errorf("DefaultWorkspacePolicy(%q, keys %v) = %s, want %s", tt.listen, tt.keys, got, tt.want)
		}
	}
	if _, err := harness.ParseWorkspacePolicy("remote"); err == nil {
		t.Error("ParseWorkspacePolicy(remote): no error")
	}
}

// projectDocsPlace says where each harness puts the client's AGENTS.md
// instructions, as the agent it emulates puts its project instructions:
// "system" (in the system prompt), "user" (in a user message) or "none"
// (the agent has no project instructions; the harness drops them). A
// harness missing here fails the test: add it.
var projectDocsPlace = map[string]string{
	harness.NameClaudeCode:     "user",
	harness.NameClaudeCodeBare: "user",
	harness.NameZCode:          "user",
	harness.NameKimiCLI:        "system",
	harness.NameOpenCode:       "system",
	harness.NameQwenCode:       "system",
	harness.NamePi:             "system",
	harness.NameLittleCoder:    "system",
	harness.NameKimiCode:       "system",
	harness.NameDeepSeekTUI:    "system",
	harness.NameMinimal:        "none",
	harness.NameMiniSWEAgent:   "none",
	harness.NameSWEAgent:       "none",
	harness.NameTerminus2:      "none",
}

// The client's AGENTS.md text reaches each body where the emulated agent
// puts project instructions, and nowhere else.
func TestProjectDocsPlaced(t *testing.T) {
	const marker = "PROJECT-RULE-MARKER"
	for _, r := range emulatingRoutes() {
		want, ok := projectDocsPlace[r.name]
		if !ok {
			t.Errorf("%s: not in projectDocsPlace; say where the agent puts project instructions", r.name)
			continue
		}
		turn, err := plan(clockAt(harnesstest.DefaultNow), r, sharedReq(t, "agents_md"))
		if err != nil {
			t.Fatalf("%s on %s: %v", r.name, r.wire, err)
		}
		body := turn.Shaped.Body
		got := "none"
		switch {
		case strings.Contains(systemPrompt(t, r.wire, body), marker):
			got = "system"
		case bytes.Contains(body, []byte(marker)):
			got = "user"
		}
		if got != want {
			t.Errorf("%s on %s: the AGENTS.md text is in %q, want %q", r.name, r.wire, got, want)
		}
		if n := bytes.Count(body, []byte(marker)); n > 1 {
			t.Errorf("%s on %s: the AGENTS.md text is sent %d times", r.name, r.wire, n)
		}
	}
}
