package bridge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

const readArgs = `{"filePath":"main.go","limit":20}`

func fc(id, call, name, args string) *protocol.FunctionCall {
	return &protocol.FunctionCall{ID: id, CallID: call, Name: name, Arguments: args}
}

// execRead is the exec_command call a bridged read of readArgs becomes.
func execRead(t *testing.T, id, call, args string) *protocol.FunctionCall {
	t.Helper()
	cmd := mustTag(t, "read", readArgs) + ReadCommand("main.go", 0, 20)
	if args == "" {
		return fc(id, call, "exec_command", "")
	}
	var o jsonObject
	o.str("cmd", cmd)
	return fc(id, call, "exec_command", o.String())
}

func lsc(id string, call *string, argv ...string) *protocol.LocalShellCall {
	t := uint64(30000)
	return &protocol.LocalShellCall{ID: id, CallID: call, Status: "in_progress",
		Action: protocol.LocalShellAction{Type: "exec", Command: argv, TimeoutMS: &t}}
}

func runStage(t *testing.T, opts Options, in []protocol.ResponseEvent) ([]protocol.ResponseEvent, []string) {
	t.Helper()
	var unbridged []string
	opts.OnUnbridged = func(tool string) { unbridged = append(unbridged, tool) }
	st := Stage(opts)
	var out []protocol.ResponseEvent
	emit := func(ev protocol.ResponseEvent) { out = append(out, ev) }
	for _, ev := range in {
		if err := st.Push(context.Background(), ev, emit); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.(pipeline.Finisher[protocol.ResponseEvent]).Finish(context.Background(), emit); err != nil {
		t.Fatal(err)
	}
	return out, unbridged
}

func TestStage(t *testing.T) {
	exec := DetectShell(tools(t, codexExecCommand, writeStdin, updatePlan, applyPatch))
	local := DetectShell(tools(t, localShell, updatePlan))
	none := DetectShell(tools(t, writeStdin, updatePlan))
	callLS := "call_ls"
	msg := protocol.AssistantMessage("Let me look.")
	msg.ID = "msg_1"
	completed := protocol.Completed("resp_1", nil)
	u := func(v uint64) *uint64 { return &v }

	tests := []struct {
		name      string
		client    ClientShell
		in        []protocol.ResponseEvent
		want      []protocol.ResponseEvent
		unbridged []string
	}{
		{
			name:   "read becomes exec_command; deltas dropped",
			client: exec,
			in: []protocol.ResponseEvent{
				protocol.Created(),
				protocol.Added(fc("fc_1", "call_1", "read", "")),
				protocol.ToolInputDelta("fc_1", "call_1", `{"filePath":`),
				protocol.ToolInputDelta("fc_1", "call_1", `"main.go","limit":20}`),
				protocol.Done(fc("fc_1", "call_1", "read", readArgs)),
				completed,
			},
			want: []protocol.ResponseEvent{
				protocol.Created(),
				protocol.Added(execRead(t, "fc_1", "call_1", "")),
				protocol.Done(execRead(t, "fc_1", "call_1", readArgs)),
				completed,
			},
		},
		{
			name:   "other events pass in order while a call is held",
			client: exec,
			in: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "read", "")),
				protocol.ToolInputDelta("", "call_1", readArgs),
				protocol.Added(msg), protocol.TextDelta("Let me look."), protocol.Done(msg),
				protocol.Done(fc("fc_1", "call_1", "read", readArgs)),
				completed,
			},
			want: []protocol.ResponseEvent{
				protocol.Added(msg), protocol.TextDelta("Let me look."), protocol.Done(msg),
				protocol.Added(execRead(t, "fc_1", "call_1", "")),
				protocol.Done(execRead(t, "fc_1", "call_1", readArgs)),
				completed,
			},
		},
		{
			name:   "parallel calls, interleaved deltas",
			client: exec,
			in: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "read", "")),
				protocol.Added(fc("fc_2", "call_2", "todowrite", "")),
				protocol.ToolInputDelta("fc_1", "", `{}`),
				protocol.ToolInputDelta("fc_2", "call_2", `{"todos":[]}`),
				protocol.Done(fc("fc_2", "call_2", "todowrite", `{"todos":[]}`)),
				protocol.Done(fc("fc_1", "call_1", "read", readArgs)),
			},
			want: []protocol.ResponseEvent{
				protocol.Added(fc("fc_2", "call_2", "todowrite", "")),
				protocol.ToolInputDelta("fc_2", "call_2", `{"todos":[]}`),
				protocol.Done(fc("fc_2", "call_2", "todowrite", `{"todos":[]}`)),
				protocol.Added(execRead(t, "fc_1", "call_1", "")),
				protocol.Done(execRead(t, "fc_1", "call_1", readArgs)),
			},
			unbridged: []string{"todowrite"},
		},
		{
			name:   "bad arguments pass unchanged, deltas included",
			client: exec,
			in: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "read", "")),
				protocol.ToolInputDelta("fc_1", "call_1", `{"filePath":`),
				protocol.Done(fc("fc_1", "call_1", "read", `{"filePath":`)),
				completed,
			},
			want: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "read", "")),
				protocol.ToolInputDelta("fc_1", "call_1", `{"filePath":`),
				protocol.Done(fc("fc_1", "call_1", "read", `{"filePath":`)),
				completed,
			},
			unbridged: []string{"read"},
		},
		{
			name:      "missing required argument passes unchanged",
			client:    exec,
			in:        []protocol.ResponseEvent{protocol.Done(fc("fc_1", "call_1", "edit", `{"oldString":"a"}`))},
			want:      []protocol.ResponseEvent{protocol.Done(fc("fc_1", "call_1", "edit", `{"oldString":"a"}`))},
			unbridged: []string{"edit"},
		},
		{
			name:   "done without added",
			client: exec,
			in:     []protocol.ResponseEvent{protocol.Done(fc("", "call_1", "read", readArgs)), completed},
			want:   []protocol.ResponseEvent{protocol.Done(execRead(t, "", "call_1", readArgs)), completed},
		},
		{
			name:   "native bash is a plain exec_command",
			client: exec,
			in: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "bash", "")),
				protocol.Done(fc("fc_1", "call_1", "bash", `{"command":"go test ./...","timeout":600000,"workdir":"/repo","description":"run tests"}`)),
			},
			want: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "exec_command", "")),
				protocol.Done(fc("fc_1", "call_1", "exec_command", `{"cmd":"go test ./...","workdir":"/repo","yield_time_ms":30000}`)),
			},
		},
		{
			name:   "advertised client tools pass, unknown ones are counted",
			client: exec,
			in: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "update_plan", "")),
				protocol.ToolInputDelta("fc_1", "call_1", `{}`),
				protocol.Done(fc("fc_1", "call_1", "update_plan", `{}`)),
				protocol.Done(fc("fc_2", "call_2", "exec_command", `{"cmd":"ls"}`)),
				protocol.Done(fc("fc_3", "call_3", "webfetch", `{}`)),
				protocol.Done(&protocol.FunctionCall{ID: "fc_4", CallID: "call_4", Name: "read", Namespace: "mcp", Arguments: readArgs}),
				protocol.Done(&protocol.CustomToolCall{CallID: "call_5", Name: "apply_patch", Input: "*** Begin Patch"}),
			},
			want: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "update_plan", "")),
				protocol.ToolInputDelta("fc_1", "call_1", `{}`),
				protocol.Done(fc("fc_1", "call_1", "update_plan", `{}`)),
				protocol.Done(fc("fc_2", "call_2", "exec_command", `{"cmd":"ls"}`)),
				protocol.Done(fc("fc_3", "call_3", "webfetch", `{}`)),
				protocol.Done(&protocol.FunctionCall{ID: "fc_4", CallID: "call_4", Name: "read", Namespace: "mcp", Arguments: readArgs}),
				protocol.Done(&protocol.CustomToolCall{CallID: "call_5", Name: "apply_patch", Input: "*** Begin Patch"}),
			},
			unbridged: []string{"webfetch", "read"},
		},
		{
			name:   "local_shell_call to exec_command",
			client: exec,
			in: []protocol.ResponseEvent{
				protocol.Done(msg),
				protocol.Done(lsc("", &callLS, "bash", "-lc", "ls -la")),
				completed,
			},
			want: []protocol.ResponseEvent{
				protocol.Done(msg),
				protocol.Done(fc("", "call_ls", "exec_command", `{"cmd":"ls -la","yield_time_ms":30000}`)),
				completed,
			},
		},
		{
			name:   "local_shell_call with added, no call id: the id is the call id",
			client: exec,
			in: []protocol.ResponseEvent{
				protocol.Added(lsc("lsh_1", nil, "ls")),
				protocol.Done(lsc("lsh_1", nil, "ls")),
			},
			want: []protocol.ResponseEvent{
				protocol.Added(fc("lsh_1", "lsh_1", "exec_command", "")),
				protocol.Done(fc("lsh_1", "lsh_1", "exec_command", `{"cmd":"ls","yield_time_ms":30000}`)),
			},
		},
		{
			name:      "local_shell_call without any id is counted",
			client:    exec,
			in:        []protocol.ResponseEvent{protocol.Done(lsc("", nil, "ls"))},
			want:      []protocol.ResponseEvent{protocol.Done(lsc("", nil, "ls"))},
			unbridged: []string{"local_shell"},
		},
		{
			name:   "bash without item id to local_shell: no separate added",
			client: local,
			in: []protocol.ResponseEvent{
				protocol.Added(fc("", "call_1", "bash", "")),
				protocol.Done(fc("", "call_1", "bash", `{"command":"ls"}`)),
			},
			want: []protocol.ResponseEvent{
				protocol.Done(&protocol.LocalShellCall{CallID: ptr("call_1"), Status: "completed",
					Action: protocol.LocalShellAction{Type: "exec", Command: []string{"bash", "-lc", "ls"}}}),
			},
		},
		{
			name:   "local_shell_call passes to a local_shell client",
			client: local,
			in:     []protocol.ResponseEvent{protocol.Added(lsc("lsh_1", &callLS, "ls")), protocol.Done(lsc("lsh_1", &callLS, "ls"))},
			want:   []protocol.ResponseEvent{protocol.Added(lsc("lsh_1", &callLS, "ls")), protocol.Done(lsc("lsh_1", &callLS, "ls"))},
		},
		{
			name:   "read becomes local_shell_call",
			client: local,
			in: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "bash", "")),
				protocol.ToolInputDelta("fc_1", "call_1", `{"command":"ls"}`),
				protocol.Done(fc("fc_1", "call_1", "bash", `{"command":"ls","timeout":1000}`)),
			},
			want: []protocol.ResponseEvent{
				protocol.Added(&protocol.LocalShellCall{ID: "fc_1", CallID: ptr("call_1"), Status: "in_progress",
					Action: protocol.LocalShellAction{Type: "exec", Command: []string{"bash", "-lc", "ls"}, TimeoutMS: u(1000)}}),
				protocol.Done(&protocol.LocalShellCall{ID: "fc_1", CallID: ptr("call_1"), Status: "completed",
					Action: protocol.LocalShellAction{Type: "exec", Command: []string{"bash", "-lc", "ls"}, TimeoutMS: u(1000)}}),
			},
		},
		{
			name:   "argv client",
			client: DetectShell(tools(t, argvShell)),
			in: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "bash", "")),
				protocol.Done(fc("fc_1", "call_1", "bash", `{"command":"ls","timeout":1000,"workdir":"/w"}`)),
				protocol.Done(lsc("", &callLS, "ls", "-l")),
			},
			want: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "shell", "")),
				protocol.Done(fc("fc_1", "call_1", "shell", `{"command":["bash","-lc","ls"],"workdir":"/w","timeout_ms":1000}`)),
				protocol.Done(fc("", "call_ls", "shell", `{"command":["ls","-l"],"timeout_ms":30000}`)),
			},
		},
		{
			name:   "no client shell: everything passes, bridged calls are counted",
			client: none,
			in: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "read", "")),
				protocol.ToolInputDelta("fc_1", "call_1", readArgs),
				protocol.Done(fc("fc_1", "call_1", "read", readArgs)),
				protocol.Done(lsc("", &callLS, "ls")),
				protocol.Done(fc("fc_2", "call_2", "update_plan", `{}`)),
			},
			want: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "read", "")),
				protocol.ToolInputDelta("fc_1", "call_1", readArgs),
				protocol.Done(fc("fc_1", "call_1", "read", readArgs)),
				protocol.Done(lsc("", &callLS, "ls")),
				protocol.Done(fc("fc_2", "call_2", "update_plan", `{}`)),
			},
			unbridged: []string{"read", "local_shell"},
		},
		{
			name:   "a call without done is released before completed",
			client: exec,
			in: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "read", "")),
				protocol.ToolInputDelta("fc_1", "call_1", `{"fi`),
				protocol.TextDelta("x"),
				completed,
			},
			want: []protocol.ResponseEvent{
				protocol.TextDelta("x"),
				protocol.Added(fc("fc_1", "call_1", "read", "")),
				protocol.ToolInputDelta("fc_1", "call_1", `{"fi`),
				completed,
			},
		},
		{
			name:   "released before failed",
			client: exec,
			in: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "read", "")),
				protocol.Failed(&protocol.StreamError{Kind: protocol.ErrKindTruncated}),
			},
			want: []protocol.ResponseEvent{
				protocol.Added(fc("fc_1", "call_1", "read", "")),
				protocol.Failed(&protocol.StreamError{Kind: protocol.ErrKindTruncated}),
			},
		},
		{
			name:   "released at Finish",
			client: exec,
			in:     []protocol.ResponseEvent{protocol.Added(fc("fc_1", "call_1", "read", ""))},
			want:   []protocol.ResponseEvent{protocol.Added(fc("fc_1", "call_1", "read", ""))},
		},
		{
			// The client needs a call id: such calls pass unchanged, each
			// added with its own done.
			name:   "calls without ids",
			client: exec,
			in: []protocol.ResponseEvent{
				protocol.Added(fc("", "", "read", "")),
				protocol.Added(fc("", "", "read", "")),
				protocol.ToolInputDelta("", "", "x"),
				protocol.Done(fc("", "", "read", readArgs)),
				protocol.Done(fc("", "", "read", readArgs)),
			},
			want: []protocol.ResponseEvent{
				protocol.ToolInputDelta("", "", "x"),
				protocol.Added(fc("", "", "read", "")), protocol.Done(fc("", "", "read", readArgs)),
				protocol.Added(fc("", "", "read", "")), protocol.Done(fc("", "", "read", readArgs)),
			},
			unbridged: []string{"read", "read"},
		},
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, unbridged := runStage(t, Options{Client: tc.client, Table: opencode}, tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.unbridged, unbridged); diff != "" {
				t.Errorf("unbridged (-want +got):\n%s", diff)
			}
			for _, ev := range got {
				if f, ok := ev.Item.(*protocol.FunctionCall); ok && f.Name == "exec_command" && f.Arguments != "" && !json.Valid([]byte(f.Arguments)) {
					t.Errorf("invalid arguments %q", f.Arguments)
				}
			}
		})
	}
}

func ptr(s string) *string { return &s }

// TestStageDoesNotModifyInput: rewritten items are new values.
func TestStageDoesNotModifyInput(t *testing.T) {
	in := fc("fc_1", "call_1", "read", readArgs)
	call := "c"
	ls := lsc("l", &call, "ls")
	runStage(t, Options{Client: DetectShell(tools(t, codexExecCommand)), Table: opencode},
		[]protocol.ResponseEvent{protocol.Added(in), protocol.Done(in), protocol.Added(ls), protocol.Done(ls)})
	if diff := cmp.Diff(fc("fc_1", "call_1", "read", readArgs), in); diff != "" {
		t.Errorf("input changed: %s", diff)
	}
	if diff := cmp.Diff(lsc("l", &call, "ls"), ls); diff != "" {
		t.Errorf("input changed: %s", diff)
	}
}

// TestNode runs the node in a graph, both modes, twice: no state is shared
// between runs, and OnUnbridged may be nil.
func TestNode(t *testing.T) {
	n := Node(Options{Client: DetectShell(tools(t, codexExecCommand)), Table: opencode})
	if n.Name() != NodeBridge {
		t.Fatalf("name %q", n.Name())
	}
	g, err := pipeline.New("test", n)
	if err != nil {
		t.Fatal(err)
	}
	in := []protocol.ResponseEvent{
		protocol.Added(fc("fc_1", "call_1", "read", "")),
		protocol.ToolInputDelta("fc_1", "call_1", readArgs),
		protocol.Done(fc("fc_1", "call_1", "read", readArgs)),
		protocol.Added(fc("fc_2", "call_2", "read", "")), // never done: released at the end
		protocol.Done(fc("fc_3", "call_3", "nope", "{}")),
	}
	want := []protocol.ResponseEvent{
		protocol.Added(execRead(t, "fc_1", "call_1", "")),
		protocol.Done(execRead(t, "fc_1", "call_1", readArgs)),
		protocol.Done(fc("fc_3", "call_3", "nope", "{}")),
		protocol.Added(fc("fc_2", "call_2", "read", "")),
	}
	for _, mode := range []pipeline.Mode{pipeline.Fused, pipeline.Async, pipeline.Fused} {
		var got []protocol.ResponseEvent
		src := pipeline.SourceFunc[protocol.ResponseEvent](func(_ context.Context, emit func(protocol.ResponseEvent) error) error {
			for _, ev := range in {
				if err := emit(ev); err != nil {
					return err
				}
			}
			return nil
		})
		sink := pipeline.SinkFunc[protocol.ResponseEvent](func(ev protocol.ResponseEvent) error { got = append(got, ev); return nil })
		if err := pipeline.Run(context.Background(), g, src, sink, pipeline.WithMode(mode)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", mode, diff)
		}
	}
}
