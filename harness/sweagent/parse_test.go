package sweagent

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/prompts"
)

// fe is the format-error result.
var fe = Result{Action: "format_error", Reason: NoActionReason}

func sh(cmd string) Result  { return Result{Action: "shell", Command: cmd} }
func cst(cmd string) Result { return Result{Action: "custom", Tool: ToolName, Input: cmd} }

// parseCases are replies and what each parser makes of them. fork is the
// fork's result where it differs from SWE-agent's (nil: the same).
var parseCases = []struct {
	name  string
	reply string
	want  Result
	fork  *Result
	form  string // the form Extract reports, when the reply has an action
}{
	{name: "discussion and one fence", reply: "DISCUSSION\nList the files first.\n\n```\nls -la\n```", want: sh("ls -la"), form: FormFence},
	{name: "bash label dropped", reply: "```bash\nls -la\n```\n", want: sh("ls -la"), form: FormFence},
	{name: "sh label dropped", reply: "```sh\nmake test\n```\n", want: sh("make test"), form: FormFence},
	{name: "any label ignored", reply: "```python\nprint(1)\n```\n", want: sh("print(1)"), fork: ptr(sh("python\nprint(1)")), form: FormFence},
	{name: "two blocks: the last wins", reply: "First:\n```\nls\n```\nthen\n```\npwd\n```\n", want: sh("pwd"), fork: ptr(sh("ls")), form: FormFence},
	{name: "nested fence stays inside", reply: "```bash\ncat <<'EOF' > notes.md\n```python\nx = 1\n```\nEOF\n```\n",
		want: sh("cat <<'EOF' > notes.md\n```python\nx = 1\n```\nEOF"), fork: ptr(sh("cat <<'EOF' > notes.md")), form: FormFence},
	{name: "inline fence is no action", reply: "Run ```ls``` please.", want: fe, fork: ptr(sh("ls"))},
	{name: "indented fence is no action", reply: "Here:\n  ```\n  ls\n  ```\n", want: fe, fork: ptr(sh("ls"))},
	{name: "unclosed fence", reply: "```\nls -la\n", want: fe},
	{name: "no fence at all", reply: "I think the bug is in parse.go.", want: fe},
	{name: "empty reply", reply: "", want: fe},
	{name: "empty block", reply: "```\n```", want: fe},
	{name: "blank block", reply: "```bash\n   \n```\n", want: fe},
	{name: "CRLF line ends", reply: "DISCUSSION\r\nLook.\r\n\r\n```bash\r\nls -l\r\n```\r\n", want: sh("ls -l"), form: FormFence},
	{name: "four backticks never close", reply: "```\nls\n````\n", want: fe, fork: ptr(sh("ls"))},
	{name: "unicode command", reply: "```\necho 'héllo wörld' 🎉 > ünï.txt\n```", want: sh("echo 'héllo wörld' 🎉 > ünï.txt"), form: FormFence},
	{name: "unicode space after the label", reply: "```bash\u00a0\nls\n```", want: sh("ls"), form: FormFence},
	{name: "label with trailing blanks", reply: "```bash   \nls\n```", want: sh("ls"), form: FormFence},
	{name: "closing fence at the very end", reply: "```bash\nmake test\n```", want: sh("make test"), form: FormFence},
	{name: "text after a closing fence keeps it open", reply: "```\nls\n``` done\n", want: fe, fork: ptr(sh("ls"))},
	{name: "a block in prose, then a real one", reply: "Try ```ls``` maybe; no:\n```\npwd\n```\n", want: sh("pwd"), fork: ptr(sh("ls")), form: FormFence},
	{name: "very long reply", reply: strings.Repeat("Thinking about the problem. ", 4000) + "\n```\ngit diff\n```\n", want: sh("git diff"), form: FormFence},
	{name: "tool_invoke", reply: "<tool_invoke><name>execute_bash</name><code>ls &amp;&amp; pwd</code></tool_invoke>", want: sh("ls && pwd"), form: FormToolInvoke},
	{name: "tool_invoke of another tool first", reply: "<tool_invoke><name>think</name><code>no</code></tool_invoke><tool_invoke><name>execute_bash</name><code>whoami</code></tool_invoke>",
		want: sh("whoami"), form: FormToolInvoke},
	{name: "tool_invoke name is not trimmed", reply: "<tool_invoke><name> execute_bash</name><code>ls</code></tool_invoke>", want: fe},
	{name: "invoke with a command parameter", reply: `<invoke name="bash"><parameter name="command">git status</parameter></invoke>`, want: sh("git status"), form: FormInvoke},
	{name: "invoke with single quotes", reply: `<invoke name='execute_bash'><parameter name='command'>uname -a</parameter></invoke>`, want: sh("uname -a"), form: FormInvoke},
	{name: "invoke with a nested bare parameter", reply: `<invoke name="bash"><parameter name="command"><parameter>echo hi</parameter></parameter></invoke>`, want: sh("echo hi"), form: FormInvoke},
	{name: "invoke with a command tag", reply: `<invoke name="execute_bash"><command>ls &gt; out.txt</command></invoke>`, want: sh("ls > out.txt"), form: FormInvoke},
	{name: "invoke of another tool is skipped", reply: "<invoke name=\"python\"><parameter name=\"command\">x</parameter></invoke>\n```\nls\n```", want: sh("ls"), form: FormFence},
	{name: "execute_bash", reply: "<execute_bash>\nls -l\n</execute_bash>", want: sh("ls -l"), form: FormExecuteBash},
	{name: "execute_bash with code", reply: "<execute_bash><code>sort &lt; in.txt</code></execute_bash>", want: sh("sort < in.txt"), form: FormExecuteBash},
	{name: "XML before fences", reply: "<execute_bash>pwd</execute_bash>\n```\nls\n```\n", want: sh("pwd"), form: FormExecuteBash},
	{name: "blank XML falls through to fences", reply: "<execute_bash>   </execute_bash>\n```\nls\n```\n", want: sh("ls"), form: FormFence},
	{name: "&amp; is decoded last", reply: "<execute_bash>echo &amp;lt;&quot;&apos;</execute_bash>", want: sh(`echo &lt;"'`), form: FormExecuteBash},
	{name: "function=bash is not a form", reply: "<function=bash>\n<parameter=command>ls</parameter>\n</function>", want: fe},
	{name: "editor command", reply: "DISCUSSION\nLook at it.\n\n```\nstr_replace_editor view /repo/a.py\n```", want: cst("str_replace_editor view /repo/a.py"), form: FormFence},
	{name: "submit", reply: "Done.\n\n```\nsubmit\n```", want: cst("submit"), form: FormFence},
	{name: "submit with blanks", reply: "```\n  submit  \n```", want: cst("submit"), form: FormFence},
	{name: "submit -f is a shell command", reply: "```\nsubmit -f\n```", want: sh("submit -f"), form: FormFence},
	{name: "editor word alone is a shell command", reply: "```\nstr_replace_editor\n```", want: sh("str_replace_editor"), form: FormFence},
}

func ptr[T any](v T) *T { return &v }

// fencePattern is SWE-agent's fence pattern written as a regular
// expression, with Python's \s (Unicode white space) spelled out: the
// oracle of fenceLines.
var fencePattern = regexp.MustCompile("(?m)^```([^" + pySpace + "]*)[" + pySpace + "]*\n|^```[" + pySpace + "]*$")

const pySpace = `\t\n\v\f\r\x1c-\x1f\x{85}\p{Z}`

func regexFenceLines(s string) []fenceLine {
	var out []fenceLine
	for _, m := range fencePattern.FindAllStringSubmatchIndex(s, -1) {
		f := fenceLine{start: m[0], end: m[1], hasLabel: m[2] >= 0}
		if f.hasLabel {
			f.label = s[m[2]:m[3]]
		}
		out = append(out, f)
	}
	return out
}

func TestFenceLinesMatchThePattern(t *testing.T) {
	extra := []string{"```\n\n\n```", "```bash \t\n \n```  ", "x\n```  \r\n", "```a\u2028\n```\u00a0", "````\n```", "\xff```\n```\xff\n"}
	for _, s := range extra {
		if got, want := fenceLines(s), regexFenceLines(s); !slices.Equal(got, want) {
			t.Errorf("fenceLines(%q) = %+v, want %+v", s, got, want)
		}
	}
	for _, c := range parseCases {
		if got, want := fenceLines(c.reply), regexFenceLines(c.reply); !slices.Equal(got, want) {
			t.Errorf("%s: fenceLines = %+v, want %+v", c.name, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	if len(parseCases) < 30 {
		t.Fatalf("only %d parse cases", len(parseCases))
	}
	orig, err := NewParser(prompts.Default(), VariantDefault)
	if err != nil {
		t.Fatal(err)
	}
	fork, err := NewParser(prompts.Default(), VariantFork)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range parseCases {
		t.Run(c.name, func(t *testing.T) {
			if got := orig.Parse(c.reply); got != c.want {
				t.Errorf("SWE-agent rule: %+v, want %+v", got, c.want)
			}
			want := c.want
			if c.fork != nil {
				want = *c.fork
			}
			if got := fork.Parse(c.reply); got != want {
				t.Errorf("fork rule: %+v, want %+v", got, want)
			}
			if _, form, ok := Extract(c.reply, FenceLast); ok && form != c.form {
				t.Errorf("form %q, want %q", form, c.form)
			}
		})
	}
}

// SWE-agent's thought/action split: the thought is the text around the
// action block; the action is returned raw.
func TestLastFenceThought(t *testing.T) {
	action, thought, ok := lastFence("Let's look.\n```\nls -l\n```\nAfter.")
	if !ok || action != "ls -l\n" || thought != "Let's look.\nAfter." {
		t.Errorf("lastFence = %q, %q, %t", action, thought, ok)
	}
}

func TestParseVariants(t *testing.T) {
	for _, v := range []string{"", "fork"} {
		out, err := Parse("```\nls\n```", v)
		if err != nil || out.(Result) != sh("ls") {
			t.Errorf("Parse(variant %q) = %v, %v", v, out, err)
		}
	}
	if _, err := Parse("x", "xml"); err == nil || !strings.Contains(err.Error(), `unknown variant "xml"`) {
		t.Errorf("unknown variant: %v", err)
	}
}

func TestClassify(t *testing.T) {
	p, err := NewParser(prompts.Default(), "")
	if err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]Kind{
		"ls":                              KindShell,
		"submit":                          KindSubmit,
		" \nsubmit":                       KindSubmit,
		"submit now":                      KindShell,
		"str_replace_editor view a":       KindEditor,
		"  str_replace_editor create b":   KindEditor,
		"str_replace_editorx":             KindShell,
		"echo str_replace_editor view /x": KindShell,
	} {
		if got := p.Classify(cmd); got != want {
			t.Errorf("Classify(%q) = %d, want %d", cmd, got, want)
		}
	}
}

// FuzzParse: no panic, and every reply is exactly one of an action and a
// format error; an action is trimmed and not empty; both rules agree on
// whether the pseudo-XML forms found something.
func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		if len(c.reply) < 2000 {
			f.Add(c.reply)
		}
	}
	orig, err := NewParser(prompts.Default(), VariantDefault)
	if err != nil {
		f.Fatal(err)
	}
	fork, err := NewParser(prompts.Default(), VariantFork)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		if got, want := fenceLines(reply), regexFenceLines(reply); !slices.Equal(got, want) {
			t.Fatalf("fenceLines = %+v, the pattern gives %+v", got, want)
		}
		for _, p := range []*Parser{orig, fork} {
			r := p.Parse(reply)
			switch r.Action {
			case "shell":
				if r.Command == "" || r.Command != strings.TrimSpace(r.Command) || r.Tool != "" || r.Input != "" || r.Reason != "" {
					t.Fatalf("bad shell result %+v", r)
				}
			case "custom":
				if r.Tool != ToolName || r.Input == "" || r.Command != "" || r.Reason != "" {
					t.Fatalf("bad custom result %+v", r)
				}
			case "format_error":
				if r.Reason != NoActionReason || r.Command != "" || r.Input != "" {
					t.Fatalf("bad format error %+v", r)
				}
			default:
				t.Fatalf("unknown action %+v", r)
			}
		}
		c1, f1, ok1 := Extract(reply, FenceLast)
		c2, f2, ok2 := Extract(reply, FenceFirst)
		if ok1 && f1 != FormFence && (!ok2 || c1 != c2 || f1 != f2) {
			t.Fatalf("XML form differs between rules: %q/%s vs %q/%s", c1, f1, c2, f2)
		}
	})
}
