package request

import (
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
)

func TestShellCallArguments(t *testing.T) {
	ms := uint64(12345)
	wd := "/tmp"
	withTimeout := &protocol.LocalShellAction{Command: []string{"bash", "-lc", `echo "hi"`}, TimeoutMS: &ms, WorkingDirectory: &wd}
	noTimeout := &protocol.LocalShellAction{Command: []string{"ls"}}
	empty := &protocol.LocalShellAction{}
	tests := []struct {
		name    string
		a       *protocol.LocalShellAction
		timeout ShellTimeout
		want    string
	}{
		{"none", withTimeout, ShellTimeoutNone, `{"command":["bash","-lc","echo \"hi\""]}`},
		{"none empty", empty, ShellTimeoutNone, `{"command":[]}`},
		{"seconds", withTimeout, ShellTimeoutSeconds, `{"command":["bash","-lc","echo \"hi\""],"timeout":12}`},
		{"seconds unset", noTimeout, ShellTimeoutSeconds, `{"command":["ls"],"timeout":null}`},
		{"millis", withTimeout, ShellTimeoutMillis, `{"command":["bash","-lc","echo \"hi\""],"timeout":12345}`},
		{"millis unset", noTimeout, ShellTimeoutMillis, `{"command":["ls"],"timeout":null}`},
	}
	for _, tt := range tests {
		if got := ShellCallArguments(tt.a, tt.timeout); got != tt.want {
			t.Errorf("%s: ShellCallArguments = %s, want %s", tt.name, got, tt.want)
		}
	}
	if got, want := localShellArguments(withTimeout), `{"command":["bash","-lc","echo \"hi\""],"timeout_ms":12345,"workdir":"/tmp"}`; got != want {
		t.Errorf("localShellArguments = %s, want %s", got, want)
	}
}

func TestOutputPayload(t *testing.T) {
	fc := &protocol.FunctionCallOutput{CallID: "a"}
	cc := &protocol.CustomToolCallOutput{CallID: "b"}
	var nilFC *protocol.FunctionCallOutput
	if p := OutputPayload(fc); p != &fc.Output {
		t.Errorf("function_call_output: got %p, want %p", p, &fc.Output)
	}
	if p := OutputPayload(cc); p != &cc.Output {
		t.Errorf("custom_tool_call_output: got %p, want %p", p, &cc.Output)
	}
	for _, it := range []protocol.ResponseItem{nilFC, &protocol.Message{}, nil} {
		if p := OutputPayload(it); p != nil {
			t.Errorf("OutputPayload(%T) = %v, want nil", it, p)
		}
	}
}
