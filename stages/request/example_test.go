package request_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// Shape a Codex-style follow-up request into a Chat Completions body.
func ExampleShape() {
	var req protocol.ResponsesRequest
	err := json.Unmarshal([]byte(`{
	  "model": "my-model",
	  "input": [
	    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]},
	    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "List the files."}]},
	    {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}", "call_id": "call_1"},
	    {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}
	  ],
	  "tools": [{"type": "function", "name": "exec_command", "description": "Run a command",
	             "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}],
	  "tool_choice": "auto", "parallel_tool_calls": true, "stream": true
	}`), &req)
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := request.NewChatGraph(request.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := request.Shape(context.Background(), g, &req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Path)
	fmt.Println(string(out.Body))
	kinds, _ := json.Marshal(out.ToolKinds)
	fmt.Println(string(kinds))
	// Output:
	// /chat/completions
	// {"model":"my-model","messages":[{"role":"user","content":"Be brief."},{"role":"user","content":"List the files."},{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}}]},{"role":"tool","content":"a.txt","tool_call_id":"call_1"}],"stream":true,"tools":[{"type":"function","function":{"name":"exec_command","description":"Run a command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}}],"tool_choice":"auto","parallel_tool_calls":true}
	// {"exec_command":{"kind":"function"}}
}
