package textcall

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/protocol"
)

func TestQwen3CoderReplies(t *testing.T) { runReplyCases(t, "qwen3_coder", qwen3CoderCases()) }

func qwen3CoderCases() []replyCase {
	return []replyCase{
		{
			name: "one call typed by the schema, text before",
			input: "I'll look around.\n<tool_call>\n<function=shell>\n<parameter=command>\n[\"ls\", \"-la\"]\n</parameter>\n" +
				"<parameter=workdir>\n/tmp\n</parameter>\n<parameter=timeout_ms>\n5000\n</parameter>\n" +
				"<parameter=with_escalated_permissions>\nfalse\n</parameter>\n</function>\n</tool_call>",
			tools: qwenTools,
			want: Reply{Content: "I'll look around.\n", Calls: []Call{
				fmtCall("shell", `{"command":["ls","-la"],"workdir":"/tmp","timeout_ms":5000,"with_escalated_permissions":false}`),
			}},
		},
		{
			name: "Python literals: True, a dict, a list of dicts",
			input: "<tool_call>\n<function=update_plan>\n<parameter=plan>\n[{'step': 'read', 'status': 'completed'}, {'step': \"it's\", 'status': 'pending'}]\n</parameter>\n" +
				"<parameter=meta>\n{'urgent': True, 'owner': None, 'n': (1, 2)}\n</parameter>\n<parameter=ratio>\n0.5\n</parameter>\n</function>\n</tool_call>",
			tools: qwenTools,
			want: Reply{Calls: []Call{fmtCall("update_plan",
				`{"plan":[{"step":"read","status":"completed"},{"step":"it's","status":"pending"}],"meta":{"urgent":true,"owner":null,"n":[1,2]},"ratio":0.5}`)}},
		},
		{
			name:  "schema types: True for a boolean, a value that fits no type stays a string",
			input: "<tool_call>\n<function=shell>\n<parameter=with_escalated_permissions>\nTrue\n</parameter>\n<parameter=timeout_ms>\nsoon\n</parameter>\n</function>\n</tool_call>",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"with_escalated_permissions":true,"timeout_ms":"soon"}`)}},
		},
		{
			name:  "without a schema every value is a string",
			input: "<tool_call>\n<function=shell>\n<parameter=command>\n[\"ls\"]\n</parameter>\n<parameter=timeout_ms>\n10\n</parameter>\n</function>\n</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":"[\"ls\"]","timeout_ms":"10"}`)}},
		},
		{
			name:  "a parameter the schema does not list stays a string",
			input: "<tool_call>\n<function=shell>\n<parameter=command>\n[\"ls\"]\n</parameter>\n<parameter=retries>\n3\n</parameter>\n</function>\n</tool_call>",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls"],"retries":"3"}`)}},
		},
		{
			name:  "exactly one leading and one trailing newline are stripped",
			input: "<tool_call>\n<function=apply_patch>\n<parameter=input>\n\n  indented\n\n</parameter>\n</function>\n</tool_call>",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("apply_patch", `{"input":"\n  indented\n"}`)}},
		},
		{
			name: "apply_patch: code with tags, < and closing tags that are not structure",
			input: "<tool_call>\n<function=apply_patch>\n<parameter=input>\n*** Begin Patch\n*** Update File: p.py\n@@\n-if a < b and c > d:\n+if a <= b:\n+    s = \"</parameter> or </function> here\"\n" +
				"+    t = '<tool_call>'\n*** End Patch\n</parameter>\n</function>\n</tool_call>",
			tools: qwenTools,
			want: Reply{Calls: []Call{fmtCall("apply_patch",
				`{"input":"*** Begin Patch\n*** Update File: p.py\n@@\n-if a < b and c > d:\n+if a <= b:\n+    s = \"</parameter> or </function> here\"\n+    t = '<tool_call>'\n*** End Patch"}`)}},
		},
		{
			name:  "missing </parameter>: the next <parameter= line ends the value",
			input: "<tool_call>\n<function=shell>\n<parameter=command>\n[\"ls\"]\n<parameter=workdir>\n/srv\n</parameter>\n</function>\n</tool_call>",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls"],"workdir":"/srv"}`)}},
		},
		{
			name:  "a <parameter= line naming a parameter the tool lacks is part of the value",
			input: "<tool_call>\n<function=apply_patch>\n<parameter=input>\ndoc:\n<parameter=x>\n</parameter>\n</function>\n</tool_call>",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("apply_patch", `{"input":"doc:\n<parameter=x>"}`)}},
		},
		{
			name:  "missing </parameter> and </function>",
			input: "<tool_call>\n<function=shell>\n<parameter=workdir>\n/srv\n</tool_call>",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"workdir":"/srv"}`)}},
		},
		{
			name:  "missing </function>",
			input: "<tool_call>\n<function=shell>\n<parameter=workdir>\n/srv\n</parameter>\n</tool_call>\nDone.",
			tools: qwenTools,
			want:  Reply{Content: "\nDone.", Calls: []Call{fmtCall("shell", `{"workdir":"/srv"}`)}},
		},
		{
			name:  "missing opening <tool_call>",
			input: "Running it.\n<function=shell>\n<parameter=command>\n[\"make\"]\n</parameter>\n</function>\n</tool_call>",
			tools: qwenTools,
			want:  Reply{Content: "Running it.\n", Calls: []Call{fmtCall("shell", `{"command":["make"]}`)}},
		},
		{
			name:  "missing </tool_call> at the end of the output",
			input: "<tool_call>\n<function=shell>\n<parameter=command>\n[\"make\"]\n</parameter>\n</function>\n",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["make"]}`)}},
		},
		{
			name:  "the output ends after a complete parameter",
			input: "<tool_call>\n<function=shell>\n<parameter=command>\n[\"make\"]\n</parameter>\n",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["make"]}`)}},
		},
		{
			name: "two calls, and two functions in one block",
			input: "<tool_call>\n<function=shell>\n<parameter=command>\n[\"pwd\"]\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=shell>\n<parameter=command>\n[\"ls\"]\n</parameter>\n</function>\n" +
				"<function=update_plan>\n<parameter=explanation>\nnext\n</parameter>\n</function>\n</tool_call>",
			tools: qwenTools,
			want: Reply{Calls: []Call{
				fmtCall("shell", `{"command":["pwd"]}`), fmtCall("shell", `{"command":["ls"]}`), fmtCall("update_plan", `{"explanation":"next"}`),
			}},
		},
		{
			name:  "missing </function> and </tool_call> before the next block",
			input: "<tool_call>\n<function=shell>\n<parameter=workdir>\n/a\n</parameter>\n<tool_call>\n<function=shell>\n<parameter=workdir>\n/b\n</parameter>\n</function>\n</tool_call>",
			tools: qwenTools,
			want:  Reply{Calls: []Call{fmtCall("shell", `{"workdir":"/a"}`), fmtCall("shell", `{"workdir":"/b"}`)}},
		},
		{
			name:  "zero-argument call",
			input: "<tool_call>\n<function=list_mcp_resources>\n</function>\n</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("list_mcp_resources", `{}`)}},
		},
		{
			name:  "a hermes JSON body is read too",
			input: "<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}\n</tool_call>",
			want:  Reply{Calls: []Call{fmtCall("shell", `{"command":["ls"]}`)}},
		},
		{
			name:  "unterminated value is given back",
			input: "Patch:\n<tool_call>\n<function=apply_patch>\n<parameter=input>\n*** Begin Patch\n*** Add File: a",
			tools: qwenTools,
			want: Reply{Content: "Patch:\n<tool_call>\n<function=apply_patch>\n<parameter=input>\n*** Begin Patch\n*** Add File: a",
				Malformed: []string{"qwen3_coder: unterminated <parameter=input> value"}},
		},
		{
			name:  "a function cut before any parameter is given back",
			input: "<tool_call>\n<function=shell>\n",
			want:  Reply{Content: "<tool_call>\n<function=shell>\n", Malformed: []string{"qwen3_coder: unterminated <function=…> call"}},
		},
		{
			name:  "stray text between parameters is given back",
			input: "<tool_call>\n<function=shell>\nhello\n</function>\n</tool_call>",
			want: Reply{Content: "<tool_call>\n<function=shell>\nhello\n</function>\n</tool_call>",
				Malformed: []string{"qwen3_coder: unexpected text in a <function=…> call"}},
		},
		{
			name:  "a <function= in prose is text",
			input: "Write <function=name> then <parameter ... and a <function=x y> tag.",
			want:  Reply{Content: "Write <function=name> then <parameter ... and a <function=x y> tag."},
		},
	}
}

// TestQwen3CoderStreamsParameters shows that each parameter is passed on
// when its value ends, before </function> arrives.
func TestQwen3CoderStreamsParameters(t *testing.T) {
	cfg := Config{Schemas: schemasFor(t, []byte(qwenTools))}
	p := parserFor(t, "qwen3_coder", cfg)()
	ev := p.Feed(nil, "<tool_call>\n<function=shell>\n<parameter=command>\n[\"ls\"]\n</parameter>\n<parameter=workdir>\n/t")
	var args string
	for _, e := range ev {
		if e.Kind == CallArgs {
			args += e.Text
		}
	}
	if !slices.ContainsFunc(ev, func(e Event) bool { return e.Kind == CallBegin && e.Name == "shell" }) || args != `{"command":["ls"]` {
		t.Fatalf("before </function>: events %+v (arguments %q)", ev, args)
	}
	rep, err := Collect(p.Close(p.Feed(ev, "mp\n</parameter>\n</function>\n</tool_call>")))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Calls) != 1 || string(rep.Calls[0].Arguments) != `{"command":["ls"],"workdir":"/tmp"}` {
		t.Fatalf("calls = %+v", rep.Calls)
	}
}

func TestQwen3CoderGoldens(t *testing.T) { runGoldens(t, "qwen3_coder", "qwen3_coder") }

func FuzzQwen3Coder(f *testing.F) {
	fuzzFormat(f, "qwen3_coder", true,
		"<tool_call>\n<function=f>\n<parameter=p>\nv\n</parameter>\n</function>\n</tool_call>",
		"x\n<function=f>\n<parameter=a>\n1\n<parameter=b>\n</parameter> y\n</parameter>\n</function>",
		"<tool_call>\n<function=f>\n<parameter=p>\nv\n</function>\n</tool_call><tool_call>\n{\"name\":\"g\"}",
		"<function=f x> <parameter=",
	)
}

// TestFmtAStage runs Qwen3-Coder XML and hermes replies through the chat
// response graph: a <function=apply_patch> call becomes Codex's custom
// tool call, an exec_command call a function call, and the turn ends for
// tools.
func TestFmtAStage(t *testing.T) {
	kinds := protocol.ToolKinds{"apply_patch": {Kind: protocol.KindCustom}}
	patch := "*** Begin Patch\n*** Add File: hello.txt\n+hello <world>\n*** End Patch"
	for _, c := range []struct {
		format string
		body   string
	}{
		{"qwen3_coder", sseOf("I'll add the file.\n<tool_call>\n<function=apply_patch>\n<parameter=input>\n", patch[:20], patch[20:],
			"\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=exec_command>\n<parameter=cmd>\ncat hello.txt\n</parameter>\n</function>\n</tool_call>")},
		{"hermes", sseOf("I'll add the file.\n<tool_call>\n{\"name\": \"apply_patch\", \"arguments\": {\"input\": ", fmt.Sprintf("%q", patch),
			"}}\n</tool_call>\n<tool_call>\n{\"name\": \"exec_command\", \"arguments\": {\"cmd\": \"cat hello.txt\"}}\n</tool_call>")},
	} {
		for _, format := range []string{c.format, Auto} {
			got := runAll(t, format, kinds, c.body)
			want := []string{
				`{"type":"server_model","model":"m"}`,
				`{"type":"created"}`,
				`{"type":"output_item.added","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":""}]}}`,
				`{"type":"output_text.delta","delta":"I'll add the file.\n"}`,
				`{"type":"output_item.done","item":{"type":"message","id":"chat-message-1","role":"assistant","content":[{"type":"output_text","text":"I'll add the file.\n"}]}}`,
				`{"type":"output_item.done","item":{"type":"custom_tool_call","call_id":"call_chatcmpl-1_0","name":"apply_patch","input":"*** Begin Patch\n*** Add File: hello.txt\n+hello <world>\n*** End Patch"}}`,
				`{"type":"output_item.done","item":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cat hello.txt\"}","call_id":"call_chatcmpl-1_1"}}`,
				`{"type":"completed","response_id":"chatcmpl-1","finish_reason":"tool_calls"}`,
			}
			if c.format == "hermes" {
				want[6] = `{"type":"output_item.done","item":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\": \"cat hello.txt\"}","call_id":"call_chatcmpl-1_1"}}`
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s as %s (-want +got):\n%s", c.format, format, d)
			}
		}
	}
}

// FuzzQwen3CoderTyped is FuzzQwen3Coder with the request's schemas, so the
// typed values and the schema's say on a missing </parameter> are cut
// anywhere too.
func FuzzQwen3CoderTyped(f *testing.F) {
	for _, s := range []string{
		"<tool_call>\n<function=shell>\n<parameter=command>\n['ls', True]\n<parameter=workdir>\n/a\n</parameter>\n</function>\n</tool_call>",
		"<function=update_plan>\n<parameter=meta>\n{'a': None}\n</parameter>\n<parameter=ratio>\n1.\n</parameter>\n</function>",
	} {
		f.Add(s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, input string, seed uint64) {
		cfg := Config{Schemas: schemasFor(t, []byte(qwenTools))}
		newParser := func() Parser { return newTCParser("qwen3_coder", cfg, true) }
		whole := coalesce(feed(t, newParser, input, nil))
		rng := rand.New(rand.NewPCG(seed, 5))
		if d := cmp.Diff(whole, coalesce(feed(t, newParser, input, randomSizes(rng, len(input), 1+rng.IntN(8))))); d != "" {
			t.Fatalf("chunked replay differs (-whole +chunks):\n%s", d)
		}
		rep, err := Collect(whole)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Calls) == 0 && rep.Content != input {
			t.Fatalf("text lost: got %q from %q", rep.Content, input)
		}
	})
}
