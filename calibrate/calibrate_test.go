package calibrate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/prompts"
)

// The test binary doubles as a fake agent: with HF_FAKE_AGENT set it posts
// fixed requests built from synthetic text (no real agent's text) to the
// endpoint the recipe named, then exits.
func TestMain(m *testing.M) {
	if mode := os.Getenv("HF_FAKE_AGENT"); mode != "" {
		os.Exit(fakeAgent(mode))
	}
	os.Exit(m.Run())
}

// fakeModel is the fake agent's model: a Claude name (its display name
// "Opus 7.1" is a template field too).
const fakeModel = "claude-opus-7-1"

func fakeAgent(mode string) int {
	cwd, _ := os.Getwd()
	date := time.Now().Format(time.DateOnly)
	shell := filepath.Base(os.Getenv("SHELL"))
	home := os.Getenv("HOME")
	switch mode {
	case "silent":
		fmt.Println("fake agent says hi and calls nobody")
		return 3
	case "hang":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "HF_FAKE_AGENT=sleep")
		if err := child.Start(); err != nil {
			return 4
		}
		_ = os.WriteFile(os.Getenv("HF_FAKE_PIDFILE"), []byte(strconv.Itoa(child.Process.Pid)), 0o600)
		time.Sleep(time.Hour)
		return 0
	case "sleep":
		time.Sleep(time.Hour)
		return 0
	case "wrongwire":
		_, err := post(os.Getenv("ANTHROPIC_BASE_URL")+"/v1/chat/completions", map[string]any{"model": fakeModel,
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "tools": []any{fakeTool("x")}}, nil)
		if err != nil {
			fmt.Println(err)
		}
		return 1
	case "messages":
		url := os.Getenv("ANTHROPIC_BASE_URL") + "/v1/messages?beta=true"
		system := []any{
			map[string]any{"type": "text", "text": "synthetic-billing-line"},
			map[string]any{"type": "text", "text": "Synthetic agent intro with {{braces}} kept."},
			map[string]any{"type": "text", "text": "Synthetic main prompt.\nWorking dir: " + cwd + "\nDate: " + date +
				"\nPlatform: linux\nShell: " + shell + "\nModel: " + fakeModel + "\nNotes in " + home + "/notes\nA linux word stays."},
		}
		user := map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "<reminder>synthetic reminder</reminder>"},
			map[string]any{"type": "text", "text": CalibrateTask}}}
		if os.Getenv("HF_FAKE_TASK") != "" {
			user["content"].([]any)[1] = map[string]any{"type": "text", "text": os.Getenv("HF_FAKE_TASK")}
		}
		envMsg := map[string]any{"role": "system", "content": []any{map[string]any{"type": "text",
			"text": "Synthetic environment.\nCwd: " + cwd + "\nPlatform: linux\nShell: " + shell + "\nModel " + fakeModel +
				", called Opus 7.1 here.\nKernel " + kernelRelease() + ".\nToday is " + date + "."}}}
		body := map[string]any{"model": fakeModel, "max_tokens": 4242, "system": system,
			"messages": []any{user, envMsg}, "tools": []any{fakeTool("Bash"), fakeTool("Peek")}, "stream": true,
			"metadata": map[string]any{"user_id": "u-1234"}}
		hdr := map[string]string{"User-Agent": "fake-agent/1.2.3 (synthetic)", "X-App": "fake",
			"X-Claude-Code-Session-Id": "0b8f7c1e-1111-4222-8333-944455556666"}
		resp, err := post(url, body, hdr)
		if err != nil || !strings.Contains(resp, "tool_use") {
			fmt.Println("no tool call:", resp, err)
			return 5
		}
		body["messages"] = append(body["messages"].([]any),
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_calibrate_1", "name": "Bash", "input": map[string]any{"command": "ls"}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_calibrate_1", "content": "x"}}})
		if _, err := post(url, body, hdr); err != nil {
			return 6
		}
		return 0
	case "pi":
		if len(os.Args) > 1 && os.Args[1] == "--version" {
			fmt.Fprintln(os.Stderr, "0.73.9") // pi prints its version on stderr
			return 0
		}
		var m struct {
			Providers map[string]struct {
				BaseURL string `json:"baseUrl"`
				Models  []struct {
					ID string `json:"id"`
				} `json:"models"`
			} `json:"providers"`
		}
		data, _ := os.ReadFile(filepath.Join(os.Getenv("PI_CODING_AGENT_DIR"), "models.json"))
		if err := json.Unmarshal(data, &m); err != nil || len(m.Providers["calibrate"].Models) != 1 {
			fmt.Println("models.json:", err, string(data))
			return 7
		}
		p := m.Providers["calibrate"]
		body := map[string]any{"model": p.Models[0].ID, "messages": []any{
			map[string]any{"role": "system", "content": "Synthetic pi prompt.\n- last bullet\nCurrent date: " + date + "\nCurrent working directory: " + cwd},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": CalibrateTask}}}},
			"stream": false, "store": false, "max_completion_tokens": 16384,
			"tools": []any{map[string]any{"type": "function", "function": fakeTool("bash")}}}
		resp, err := post(p.BaseURL+"/chat/completions", body, map[string]string{"User-Agent": "OpenAI/JS 6.26.0"})
		if err != nil || !strings.Contains(resp, "bash") {
			fmt.Println("no tool call:", resp, err)
			return 5
		}
		return 0
	case "chat":
		url := os.Getenv("OPENAI_BASE_URL") + "/chat/completions"
		long := time.Now().Format("Monday, January 2, 2006")
		setup := "<system-reminder>\nSynthetic setup.\nToday: " + long + "\nOS: linux\nDir: " + cwd + "\n\n" + cwd + "/\n- " +
			WorkspaceFile + "\n</system-reminder>"
		body := map[string]any{"model": os.Getenv("OPENAI_MODEL"), "messages": []any{
			map[string]any{"role": "system", "content": "Synthetic system prompt without per-turn values."},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "<system-reminder>\nSynthetic skills.\n</system-reminder>"},
				map[string]any{"type": "text", "text": setup},
				map[string]any{"type": "text", "text": "<system-reminder>\nSynthetic deferred tools.\n</system-reminder>"},
				map[string]any{"type": "text", "text": "Synthetic date line: " + long + "."},
				map[string]any{"type": "text", "text": CalibrateTask}}}},
			"tools": []any{map[string]any{"type": "function", "function": fakeTool("run_shell_command")}}, "stream": false}
		resp, err := post(url, body, map[string]string{"User-Agent": "FakeChat/0.0.1"})
		if err != nil || !strings.Contains(resp, "run_shell_command") {
			fmt.Println("no tool call:", resp, err)
			return 5
		}
		return 0
	case "kimi":
		conf, err := os.ReadFile(filepath.Join(os.Getenv("KIMI_CODE_HOME"), "config.toml"))
		m := regexp.MustCompile(`base_url = "([^"]+)"`).FindSubmatch(conf)
		if err != nil || m == nil {
			fmt.Println("no base_url in config.toml:", err)
			return 7
		}
		model := regexp.MustCompile(`(?m)^model = "([^"]+)"`).FindSubmatch(conf)
		task := CalibrateTask
		if os.Getenv("HF_FAKE_TASK") != "" {
			task = os.Getenv("HF_FAKE_TASK")
		}
		body := map[string]any{"model": string(model[1]), "messages": []any{
			map[string]any{"role": "system", "content": "Synthetic kimi prompt.\nThe cwd is `" + cwd + "`, listed:\n\n```\n└── " + WorkspaceFile + "\n```"},
			map[string]any{"role": "user", "content": task},
			map[string]any{"role": "user", "content": "<system-reminder>\nSynthetic date " + date + ".\n</system-reminder>"},
			map[string]any{"role": "user", "content": "<system-reminder>\nSynthetic auto mode.\n</system-reminder>"}},
			"tools":  []any{map[string]any{"type": "function", "function": fakeTool("Bash")}},
			"stream": true, "stream_options": map[string]any{"include_usage": true},
			"thinking": map[string]any{"type": "enabled", "keep": "all"}, "max_completion_tokens": 262144,
			"prompt_cache_key": "session_0b8f7c1e-1111-4222-8333-944455556666"}
		resp, err := post(string(m[1])+"/chat/completions", body, map[string]string{"User-Agent": "kimi-fake/2.1.0",
			"X-Msh-Device-Id": "0b8f7c1e-1111-4222-8333-944455556666"})
		if err != nil || !strings.Contains(resp, "Bash") {
			fmt.Println("no tool call:", resp, err)
			return 5
		}
		return 0
	}
	return 9
}

func fakeTool(name string) map[string]any {
	return map[string]any{"name": name, "description": "Synthetic tool " + name + ".",
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{
			"command": map[string]any{"type": "string"}, "why": map[string]any{"type": "string"}}, "required": []string{"command", "why"}},
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}}
}

func post(url string, body any, hdr map[string]string) (string, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Header.Set("x-api-key", "secret-should-not-be-kept")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return string(out), fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(out), nil
}

// opts returns options running the test binary as the fake agent in mode.
func opts(t *testing.T, harnessName, mode string) (Options, string) {
	t.Helper()
	t.Setenv("HF_FAKE_AGENT", mode)
	t.Setenv("SHELL", "/bin/bash")
	tmp := t.TempDir()
	return Options{Harness: harnessName, Command: []string{os.Args[0]}, Timeout: 20 * time.Second, TempDir: tmp}, tmp
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 0 {
		t.Errorf("temporary directory %s not cleaned up: %v %v", dir, ents, err)
	}
}

func TestCalibrateMessages(t *testing.T) {
	o, tmp := opts(t, "claude-code", "messages")
	c, err := RunAgent(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, tmp)
	if got := []string{c.Requests[0].Kind, c.Requests[1].Kind}; got[0] != "main" || got[1] != "followup" || len(c.Requests) != 2 {
		t.Fatalf("kinds = %v (%d requests)", got, len(c.Requests))
	}
	if c.Requests[0].Headers["x-api-key"] != "<redacted>" {
		t.Errorf("credential kept: %q", c.Requests[0].Headers["x-api-key"])
	}
	out := t.TempDir()
	cal, err := Write(c, out)
	if err != nil {
		t.Fatal(err)
	}
	pack, err := prompts.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, _ := pack.Text("claude-code", "system")
	for _, f := range []string{"{{.cwd}}", "{{.date}}", "{{.platform}}", "{{.shellName}}", "{{.model}}"} {
		if !strings.Contains(tmpl, f) {
			t.Errorf("system.tmpl lacks %s:\n%s", f, tmpl)
		}
	}
	if !strings.Contains(tmpl, "A linux word stays.") {
		t.Errorf("a platform word outside a value was templated:\n%s", tmpl)
	}
	intro, _ := pack.Render("claude-code", "agent", nil)
	if intro != "Synthetic agent intro with {{braces}} kept." {
		t.Errorf("agent.tmpl renders %q", intro)
	}
	data := map[string]any{"cwd": c.Cwd, "date": time.Now().Format(time.DateOnly), "platform": "linux", "shellName": "bash",
		"model": fakeModel, "shell": "Bash", "git": "x"}
	got, err := pack.Render("claude-code", "system", data)
	var want string
	for _, tx := range Texts(WireMessages, c.Requests[0].Body, "") {
		if tx.Where == "system[2]" {
			want = tx.Text
		}
	}
	if err != nil || got != want {
		t.Errorf("system.tmpl renders\n%q, %v\nwant %q", got, err, want)
	}
	tools, err := pack.Render("claude-code", harness.CalibratedTools, map[string]any{"cwd": "", "model": ""})
	if err != nil || !strings.Contains(tools, `"Peek"`) {
		t.Errorf("wire_tools = %s, %v", tools, err)
	}
	hb, _ := pack.Data("claude-code", harness.CalibratedHeaders)
	var hs map[string]string
	_ = json.Unmarshal(hb, &hs)
	if hs["user-agent"] != "fake-agent/1.2.3 (synthetic)" || hs["x-app"] != "fake" || hs["x-api-key"] != "" || hs["x-claude-code-session-id"] != "" {
		t.Errorf("headers = %v", hs)
	}
	fb, _ := pack.Data("claude-code", harness.CalibratedFields)
	if !strings.Contains(string(fb), `"max_tokens": 4242`) || strings.Contains(string(fb), "metadata") {
		t.Errorf("fields = %s", fb)
	}
	if cal.Agent.Name != "fake-agent" || cal.Agent.Version != "1.2.3" {
		t.Errorf("agent = %+v", cal.Agent)
	}
	var unmapped []string
	for _, u := range cal.Unmapped {
		unmapped = append(unmapped, u.What)
	}
	for _, w := range []string{"request 1 (main): system[0]", "request 1 (main): system[2]: home directory"} {
		if !containsString(unmapped, w) {
			t.Errorf("unmapped lacks %q: %q", w, unmapped)
		}
	}
	// The environment message and the first reminder (Claude Code 2.1.332's
	// layout) have their templates, with the model's display name a field.
	envTmpl, _ := pack.Text("claude-code", "environment")
	for _, f := range []string{"{{.cwd}}", "{{.date}}", "{{.platform}}", "{{.shellName}}", "{{.model}}", "{{.modelName}}"} {
		if !strings.Contains(envTmpl, f) {
			t.Errorf("environment.tmpl lacks %s:\n%s", f, envTmpl)
		}
	}
	if rel := kernelRelease(); rel != "" && !containsString(unmapped, "request 1 (main): messages[1].content[0]: OS version "+rel) {
		t.Errorf("the kernel release is not reported: %q", unmapped)
	}
	if rem, _ := pack.Text("claude-code", "attribution_reminder"); rem != "<reminder>synthetic reminder</reminder>" {
		t.Errorf("attribution_reminder.tmpl = %q", rem)
	}
	if !containsString(cal.PerRun, "header x-claude-code-session-id") || !containsString(cal.PerRun, "field metadata") {
		t.Errorf("per run = %v", cal.PerRun)
	}
	if tb, err := pack.Data("claude-code", harness.CalibratedTitle); err != nil || string(tb) != "{\"send\": false}\n" {
		t.Errorf("wire_title.json = %s, %v", tb, err)
	}
	if _, err := os.Stat(filepath.Join(out, "claude-code", "calibration.json")); err != nil {
		t.Error(err)
	}

	// --check on another task: the shaped request with the overlay has the
	// calibrated tools, headers and fields, and its system prompt renders
	// the new run's values.
	t.Setenv("HF_FAKE_TASK", CheckTask)
	o2, tmp2 := opts(t, "claude-code", "messages")
	rep, err := Check(context.Background(), o2, out)
	if err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, tmp2)
	status := map[string]string{}
	for _, d := range rep.Diffs {
		status[d.Field] = d.Status
	}
	for field, want := range map[string]string{
		"tools (names, order)": Same, "tool Bash": Same, "field max_tokens": Same, "header user-agent": Same,
		"header x-app": Same, "text system[1]": Same, "text system[2]": Excepted, "text system[0]": Differs,
		"text messages[0].content[0]": Same, "text messages[1].content[0]": Same, "message roles": Same,
		"header x-claude-code-session-id": Excepted, "field metadata": Excepted, "title request": Same,
	} {
		if status[field] != want {
			t.Errorf("check %s = %q, want %q", field, status[field], want)
		}
	}
	if rep.Differences() == 0 {
		t.Error("no differences reported (the billing block differs)")
	}
}

func TestCalibrateListing(t *testing.T) {
	o, tmp := opts(t, "qwen-code", "chat")
	c, err := RunAgent(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, tmp)
	out := t.TempDir()
	if _, err := Write(c, out); err != nil {
		t.Fatal(err)
	}
	pack, err := prompts.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	setup, _ := pack.Text("qwen-code", "setup")
	for _, f := range []string{"{{.Cwd}}", "{{.Date}}", "{{.OS}}", "{{.Listing}}"} {
		if !strings.Contains(setup, f) {
			t.Errorf("setup.tmpl lacks %s:\n%s", f, setup)
		}
	}
	if strings.Contains(setup, "<system-reminder>") {
		t.Errorf("setup.tmpl keeps the wrapper the harness adds:\n%s", setup)
	}
	date, _ := pack.Text("qwen-code", "date_reminder")
	if date != "Synthetic date line: {{.Date}}." {
		t.Errorf("date_reminder.tmpl = %q", date)
	}
	for name, want := range map[string]string{"skills_reminder": "<system-reminder>\nSynthetic skills.\n</system-reminder>",
		"tools_reminder": "<system-reminder>\nSynthetic deferred tools.\n</system-reminder>"} {
		if got, _ := pack.Text("qwen-code", name); got != want {
			t.Errorf("%s.tmpl = %q, want %q", name, got, want)
		}
	}
	sys, _ := pack.Text("qwen-code", "system")
	if sys != "Synthetic system prompt without per-turn values." {
		t.Errorf("system.tmpl = %q", sys)
	}
}

// pi's prompt is cut before its date line: system.tmpl and env.tmpl, and
// the harness renders the captured text back.
func TestCalibratePi(t *testing.T) {
	o, _ := opts(t, "pi", "pi")
	c, err := RunAgent(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cal, err := Write(c, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Unmapped) != 0 {
		t.Errorf("unmapped: %+v", cal.Unmapped)
	}
	if cal.Agent.Name != "pi" || cal.Agent.Version != "0.73.9" || cal.Agent.UserAgent != "OpenAI/JS 6.26.0" {
		t.Errorf("agent = %+v, want pi 0.73.9 from --version", cal.Agent)
	}
	pack, err := prompts.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if sys, _ := pack.Text("pi", "system"); sys != "Synthetic pi prompt.\n- last bullet" {
		t.Errorf("system.tmpl = %q", sys)
	}
	if env, _ := pack.Text("pi", "env"); env != "Current date: {{.Date}}\nCurrent working directory: {{.Cwd}}" {
		t.Errorf("env.tmpl = %q", env)
	}
}

func TestRunAgentErrors(t *testing.T) {
	cases := []struct {
		name, harness, mode string
		command             []string
		want                error
		output              string
	}{
		{"not found", "claude-code", "messages", []string{"no-such-agent-binary-hf"}, ErrCommandNotFound, ""},
		{"never called", "claude-code", "silent", nil, ErrNoRequest, "fake agent says hi"},
		{"wrong wire", "claude-code", "wrongwire", nil, ErrWrongWire, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, tmp := opts(t, tc.harness, tc.mode)
			if tc.command != nil {
				o.Command = tc.command
			}
			_, err := RunAgent(context.Background(), o)
			if !errors.Is(err, tc.want) || !strings.Contains(fmt.Sprint(err), tc.output) {
				t.Fatalf("err = %v, want %v with %q", err, tc.want, tc.output)
			}
			assertEmpty(t, tmp)
		})
	}
	if _, err := RunAgent(context.Background(), Options{Harness: "nope", Command: []string{"x"}}); err == nil {
		t.Error("unknown harness accepted")
	}
	if _, err := RunAgent(context.Background(), Options{Harness: "claude-code", Wire: "chat", Command: []string{"x"}}); err == nil {
		t.Error("a wire the agent does not speak accepted")
	}
}

func TestTemplatize(t *testing.T) {
	cases := []struct {
		text string
		vals []Value
		want string
	}{
		{"cwd /a/b and /a/b/c", []Value{{Kind: "cwd", Field: "cwd", Literal: "/a/b"}}, "cwd {{.cwd}} and {{.cwd}}/c"},
		{"{{x}} at /a", []Value{{Kind: "cwd", Field: "Cwd", Literal: "/a"}}, `{{"{{"}}x}} at {{.Cwd}}`},
		{"OS: linux, linux-ish", []Value{{Kind: "platform", Field: "p", Literal: "linux", Word: true}}, "OS: {{.p}}, linux-ish"},
		{"/root/work then /root", []Value{{Kind: "root", Field: "r", Literal: "/root"}, {Kind: "cwd", Field: "c", Literal: "/root/work"}},
			"{{.c}} then {{.r}}"},
	}
	for _, tc := range cases {
		got, _ := templatize(tc.text, tc.vals)
		if got != tc.want {
			t.Errorf("templatize(%q) = %q, want %q", tc.text, got, tc.want)
		}
		if back, err := renderWith(got, tc.vals); err != nil || back != tc.text {
			t.Errorf("render back = %q, %v", back, err)
		}
	}
}

// Texts are compared by place, then found at another place of the same
// role (a reminder the harness lacks shifts the others), per-run paths
// masked; what only one side sends is reported.
func TestCompareTexts(t *testing.T) {
	chat := func(parts ...string) []byte {
		var ps []any
		for _, p := range parts {
			ps = append(ps, map[string]any{"type": "text", "text": p})
		}
		b, _ := json.Marshal(map[string]any{"messages": []any{
			map[string]any{"role": "system", "content": "sys /r/home/x"},
			map[string]any{"role": "user", "content": ps}}})
		return b
	}
	c := &Capture{Wire: WireChat, Task: "the task", Cwd: "/r/work", Home: "/r/home"}
	r := &Report{masks: perRunMasks(&Calibration{Cwd: "/old/work"}, c)}
	real := chat("skills", "setup", "date", "the task")
	shaped := []byte(strings.Replace(string(chat("setup", "date", "the task", "extra")), "/r/home", "/old/home", 1))
	r.compareTexts("", c, real, shaped)
	got := map[string]string{}
	for _, d := range r.Diffs {
		got[d.Field] = d.Status
	}
	want := map[string]string{
		"text messages[0].content":           Excepted,
		"text messages[1].content[0]":        Differs, // skills: the harness sends none
		"text messages[1].content[1]":        Same,    // setup, at the harness's [0]
		"text messages[1].content[2]":        Same,
		"text messages[1].content[3] (task)": Same,
		"text messages[1].content[3]":        Differs, // only the harness: "extra"
	}
	for f, s := range want {
		if got[f] != s {
			t.Errorf("%s = %q, want %q (all: %v)", f, got[f], s, r.Diffs)
		}
	}
}

func TestCompareRoles(t *testing.T) {
	cases := []struct {
		name, wire, real, shaped, want string
	}{
		{"same", WireMessages, `{"messages":[{"role":"user"},{"role":"system"}]}`, `{"messages":[{"role":"user"},{"role":"system"}]}`, Same},
		{"moved", WireMessages, `{"messages":[{"role":"user"},{"role":"system"}]}`, `{"messages":[{"role":"user"}]}`, Differs},
		{"responses items", WireResponses, `{"input":[{"role":"user"},{"type":"function_call"}]}`, `{"input":[{"role":"user"},{"type":"function_call"}]}`, Same},
		{"chat order", WireChat, `{"messages":[{"role":"system"},{"role":"user"}]}`, `{"messages":[{"role":"user"},{"role":"system"}]}`, Differs},
		{"not json", WireChat, `nope`, `{"messages":[]}`, Same},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r Report
			r.compareRoles(c.wire, []byte(c.real), []byte(c.shaped))
			if len(r.Diffs) != 1 || r.Diffs[0].Status != c.want {
				t.Errorf("diffs %+v, want one %s", r.Diffs, c.want)
			}
		})
	}
}

// Kimi Code's reminders come as user messages of their own after the task:
// each becomes its template, the date a field; the check then finds no
// difference.
func TestCalibrateKimiCode(t *testing.T) {
	o, tmp := opts(t, "kimi-code", "kimi")
	c, err := RunAgent(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, tmp)
	out := t.TempDir()
	if _, err := Write(c, out); err != nil {
		t.Fatal(err)
	}
	pack, err := prompts.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"system":        "Synthetic kimi prompt.\nThe cwd is `{{.WorkDir}}`, listed:\n\n```\n└── " + WorkspaceFile + "\n```",
		"date_reminder": "<system-reminder>\nSynthetic date {{.Date}}.\n</system-reminder>",
		"auto_reminder": "<system-reminder>\nSynthetic auto mode.\n</system-reminder>",
	} {
		if got, _ := pack.Text("kimi-code", name); got != want {
			t.Errorf("%s.tmpl = %q, want %q", name, got, want)
		}
	}
	o2, _ := opts(t, "kimi-code", "kimi")
	o2.Task = CheckTask
	t.Setenv("HF_FAKE_TASK", CheckTask)
	rep, err := Check(context.Background(), o2, out)
	if err != nil {
		t.Fatal(err)
	}
	if n := rep.Differences(); n != 0 {
		var b bytes.Buffer
		rep.WriteText(&b)
		t.Errorf("%d fields differ:\n%s", n, b.String())
	}
}
