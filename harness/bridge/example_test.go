package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/protocol"
)

// A harness's bridge table, the response-side stage that sends a native
// read to Codex's exec_command, and the way back for the next request.
func Example() {
	table := bridge.Table{
		bridge.ShellSpec{Tool: "bash", Workdir: "workdir", Timeout: "timeout", Plain: true}.Mapping(),
		bridge.ReadSpec{Tool: "read", Path: "filePath"}.Mapping(),
	}
	var tools []protocol.ToolSpec
	_ = json.Unmarshal([]byte(`[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"}}}}]`), &tools)
	client := bridge.DetectShell(tools)

	st := bridge.Stage(bridge.Options{Client: client, Table: table, OnUnbridged: func(tool string) { fmt.Println("unbridged:", tool) }})
	var rewritten *protocol.FunctionCall
	for _, ev := range []protocol.ResponseEvent{
		protocol.Done(&protocol.FunctionCall{CallID: "call_1", Name: "read", Arguments: `{"filePath":"go.mod","limit":3}`}),
		protocol.Done(&protocol.FunctionCall{CallID: "call_2", Name: "webfetch", Arguments: `{}`}),
	} {
		_ = st.Push(context.Background(), ev, func(ev protocol.ResponseEvent) {
			if fc := ev.Item.(*protocol.FunctionCall); fc.Name == client.Name {
				rewritten = fc
			}
		})
	}
	var args struct{ Cmd string }
	_ = json.Unmarshal([]byte(rewritten.Arguments), &args)
	fmt.Println(rewritten.Name, rewritten.CallID)
	first, _, _ := strings.Cut(args.Cmd, "\n")
	fmt.Println(first)

	fmt.Println(table.Reverse(rewritten.Name, rewritten.Arguments))
	fmt.Println(table.Reverse("exec_command", `{"cmd":"go test ./...","workdir":"/repo"}`))

	out, code, hasExit, ok := bridge.UnwrapOutput("Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOriginal token count: 2\nOutput:\nmodule x\n")
	fmt.Printf("%q %d %v %v\n", out, code, hasExit, ok)
	// Output:
	// unbridged: webfetch
	// exec_command call_1
	// # harnessflow-bridge read {"filePath":"go.mod","limit":3}
	// read {"filePath":"go.mod","limit":3} true
	// bash {"command":"go test ./...","workdir":"/repo"} true
	// "module x\n" 0 true true
}
