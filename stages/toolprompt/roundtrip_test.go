package toolprompt

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/textcall"
)

// roundTrip writes a call with CallText and reads it back with the
// response side's parser of the same format; the name and the arguments
// (as JSON values) must survive.
func roundTrip(t *testing.T, format string, c request.Call, schema map[string]string) {
	t.Helper()
	text := CallText(format, c)
	rep, err := textcall.ParseReply(textcall.ReaderOptions{Format: format,
		Config: textcall.Config{Schemas: textcall.Schemas{c.Name: schema}}}, "Some text first.\n"+text)
	if err != nil {
		t.Fatalf("%s: parse %q: %v", format, text, err)
	}
	if len(rep.Calls) != 1 || rep.Calls[0].Name != c.Name {
		t.Fatalf("%s: %q read back as %+v", format, text, rep)
	}
	var want, got any
	if err := json.Unmarshal([]byte(c.Arguments), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rep.Calls[0].Arguments, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s: arguments %s read back as %s from %q", format, c.Arguments, rep.Calls[0].Arguments, text)
	}
}

func TestCallTextRoundTrip(t *testing.T) {
	schema := map[string]string{"cmd": "string", "n": "integer", "ok": "boolean", "env": "object", "list": "array"}
	for _, args := range []string{
		`{"cmd":"ls -la"}`,
		`{"cmd":"echo \"a\"\n\tb </parameter> c","n":3,"ok":false}`,
		`{"cmd":"  padded  ","env":{"A":"1"},"list":[1,"x"]}`,
		`{"cmd":"*** Begin Patch\n*** Add File: x\n+y\n*** End Patch"}`,
		`{}`,
	} {
		for _, format := range Formats() {
			roundTrip(t, format, request.Call{Name: "exec_command", Arguments: args}, schema)
		}
	}
}

func FuzzCallTextRoundTrip(f *testing.F) {
	f.Add("ls -la", int64(3), true)
	f.Add("a\nb\n", int64(-1), false)
	f.Add("<tool_call>{}</tool_call>", int64(0), true)
	f.Fuzz(func(t *testing.T, cmd string, n int64, ok bool) {
		args, err := json.Marshal(map[string]any{"cmd": cmd, "n": n, "ok": ok})
		if err != nil {
			t.Skip()
		}
		// Text that itself holds markup of the format, or that the format
		// cannot carry raw (qwen3_coder strips one newline at each end of a
		// value), is not what this property is about.
		for _, format := range Formats() {
			if !carries(format, cmd) {
				continue
			}
			roundTrip(t, format, request.Call{Name: "f", Arguments: string(args)}, map[string]string{"cmd": "string", "n": "integer", "ok": "boolean"})
		}
	})
}

// carries says whether a string value survives format's text unchanged by
// construction: valid UTF-8, for qwen3_coder no closing markup inside and
// no leading or trailing newline (one is stripped on reading).
func carries(format, s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	if format != FormatQwen3Coder {
		return true
	}
	for _, m := range []string{"</parameter>", "</function>", "</tool_call>", "<parameter=", "<function=", "<tool_call>"} {
		if strings.Contains(s, m) {
			return false
		}
	}
	return len(s) == 0 || s[0] != '\n' && s[len(s)-1] != '\n'
}
