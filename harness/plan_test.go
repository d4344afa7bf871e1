package harness_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sinks"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/request"
)

// testHarness is a name no package of this build registers (every name of
// the routing matrix now has its package); the tests register a spec under
// it.
const testHarness = "test-post-harness"

// shellPost is a post stage that synthesizes a shell call after every
// assistant message, the way the text-protocol harnesses do.
type shellPost struct{}

func (shellPost) Push(_ context.Context, ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) error {
	emit(ev)
	if m, ok := ev.Item.(*protocol.Message); ok && ev.Type == protocol.EventOutputItemDone && m.Role == protocol.RoleAssistant {
		timeout := uint64(5000)
		wd := "/work/project"
		id := "call_synth_1"
		call := &protocol.LocalShellCall{ID: "lsh_1", CallID: &id, Status: "completed",
			Action: protocol.LocalShellAction{Type: "exec", Command: []string{"bash", "-lc", "ls -la 'my dir'"}, TimeoutMS: &timeout, WorkingDirectory: &wd}}
		emit(protocol.Added(call))
		emit(protocol.Done(call))
	}
	return nil
}

func init() {
	harness.MustRegister(harness.Spec{
		Name:        testHarness,
		Description: "test harness: native request, a post stage synthesizing shell calls",
		Wires:       []harness.Wire{harness.WireChat},
		Request: func(env *harness.Env) (*pipeline.Graph, error) {
			return request.NewChatGraph(env.RequestOptions())
		},
		Post: func(*harness.Env) (pipeline.Node, error) {
			return pipeline.StageNode("test.post", pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent](shellPost{})), nil
		},
	})
}

const textStream = `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Looking."}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: [DONE]

`

// run plans a turn for tools and runs textStream through its response graph.
func run(t *testing.T, tools string) []protocol.ResponseEvent {
	t.Helper()
	req, err := protocol.DecodeRequest([]byte(`{"model":"m","stream":true,"input":"hi","tools":` + tools + `}`))
	if err != nil {
		t.Fatal(err)
	}
	turn, err := harness.Plan(context.Background(), harness.Config{}, testHarness, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := turn.ResponseGraph(harness.ResponseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if names := strings.Join(g.Names(), " "); !strings.Contains(names, harness.NodePost+" harness.bridge") {
		t.Errorf("response graph %s: want harness.post then harness.bridge", names)
	}
	var got []protocol.ResponseEvent
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async} {
		c := sinks.Collect[protocol.ResponseEvent]()
		if err := pipeline.Run(context.Background(), g, sources.Slice([][]byte{[]byte(textStream)}), c, pipeline.WithMode(mode)); err != nil {
			t.Fatal(err)
		}
		if got == nil {
			got = c.Items()
		} else if len(c.Items()) != len(got) {
			t.Errorf("async gave %d events, fused %d", len(c.Items()), len(got))
		}
	}
	return got
}

func doneItems(evs []protocol.ResponseEvent) []protocol.ResponseItem {
	var items []protocol.ResponseItem
	for _, ev := range evs {
		if ev.Type == protocol.EventOutputItemDone {
			items = append(items, ev.Item)
		}
	}
	return items
}

// A shell call synthesized by a post stage reaches a Codex-shaped client
// as a call of its exec_command tool with a valid cmd, and a client that
// advertised local_shell gets a local_shell_call.
func TestSynthesizedShellCallReachesTheClientsTool(t *testing.T) {
	codexTools := `[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{` +
		`"cmd":{"type":"string"},"workdir":{"type":"string"},"yield_time_ms":{"type":"number","description":"effective range is 250-30000 ms"}},"required":["cmd"]}}]`
	items := doneItems(run(t, codexTools))
	if len(items) != 2 {
		t.Fatalf("done items %v, want the message and one call", items)
	}
	fc, ok := items[1].(*protocol.FunctionCall)
	if !ok || fc.Name != "exec_command" || fc.CallID != "call_synth_1" {
		t.Fatalf("call = %#v, want exec_command call_synth_1", items[1])
	}
	var args struct {
		Cmd     string `json:"cmd"`
		Workdir string `json:"workdir"`
		Yield   int64  `json:"yield_time_ms"`
	}
	if err := json.Unmarshal([]byte(fc.Arguments), &args); err != nil {
		t.Fatalf("arguments %s: %v", fc.Arguments, err)
	}
	if args.Cmd != "ls -la 'my dir'" || args.Workdir != "/work/project" || args.Yield != 5000 {
		t.Errorf("arguments %s: want cmd \"ls -la 'my dir'\", workdir, yield_time_ms 5000", fc.Arguments)
	}

	items = doneItems(run(t, `[{"type":"local_shell"}]`))
	if len(items) != 2 {
		t.Fatalf("done items %v", items)
	}
	ls, ok := items[1].(*protocol.LocalShellCall)
	if !ok || ls.CallID == nil || *ls.CallID != "call_synth_1" || strings.Join(ls.Action.Command, " ") != "bash -lc ls -la 'my dir'" {
		t.Errorf("call = %#v, want the local_shell_call as synthesized", items[1])
	}
}

func TestParseWorkspace(t *testing.T) {
	env := "<environment_context>\n  <cwd>/a/b</cwd>\n  <shell>zsh</shell>\n  <current_date>2026-12-01</current_date>\n  <timezone>Europe/Paris</timezone>\n</environment_context>"
	items := []protocol.ResponseItem{protocol.UserMessage(env), protocol.UserMessage("hi")}
	w := harness.ParseWorkspace(items, harness.Workspace{Date: "1999-01-01"})
	want := harness.Workspace{Cwd: "/a/b", Shell: "zsh", Date: "2026-12-01", Timezone: "Europe/Paris", OS: "linux"}
	if w != want {
		t.Errorf("workspace %+v, want %+v", w, want)
	}
	if w := harness.ParseWorkspace(nil, harness.Workspace{Date: "1999-01-01"}); w.Date != "1999-01-01" || w.Cwd != "" || w.OS != "linux" {
		t.Errorf("no block: %+v", w)
	}
}

func TestPlanEnv(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	req, err := protocol.DecodeRequest([]byte(`{"model":"GLM-4.6-air","input":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	hdr := http.Header{}
	hdr.Set("session-id", "sess-1")
	turn, err := harness.Prepare(harness.Config{Now: func() time.Time { return now }, BaseURL: "http://x"}, testHarness, req, hdr)
	if err != nil {
		t.Fatal(err)
	}
	e := turn.Env
	if e.ConversationKey != "sess-1" || e.Model.Reasoning != request.ReasoningThinkingToggle || e.Workspace.Date != "2026-03-04" || e.BaseURL != "http://x" {
		t.Errorf("env %+v", e)
	}
	req.PromptCacheKey = "pck"
	if turn, err = harness.Prepare(harness.Config{}, testHarness, req, hdr); err != nil || turn.Env.ConversationKey != "pck" {
		t.Errorf("prompt_cache_key wins: %+v %v", turn, err)
	}
	// (Every harness of the fork is built now: no fork name is left to
	// show the "not available in this build" refusal with.)
}

// Configured variants replace the model table's for their harness, on a
// copy: the table itself is unchanged.
func TestConfigVariants(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/models.json"
	if err := os.WriteFile(f, []byte(`[{"match":"m","variants":{"terminus-2":"xml","mini-swe-agent":"text"}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	models, err := harness.LoadModelTable(f)
	if err != nil {
		t.Fatal(err)
	}
	req := &protocol.ResponsesRequest{Model: "m"}
	turn, err := harness.Prepare(harness.Config{Models: models, Variants: map[string]string{"terminus-2": "plain"}}, testHarness, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := turn.Env.Model.Variant("terminus-2"); got != "plain" {
		t.Errorf("terminus-2 variant %q, want plain", got)
	}
	if got := turn.Env.Model.Variant("mini-swe-agent"); got != "text" {
		t.Errorf("mini-swe-agent variant %q, want the table's text", got)
	}
	if got := models.Lookup("m").Variant("terminus-2"); got != "xml" {
		t.Errorf("the table changed: %q", got)
	}
}
