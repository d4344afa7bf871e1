package deepseektui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// clientTools are DeepSeek TUI's tools that Codex has under the same name
// and shape: their calls go to the client as they are.
var clientTools = []string{"update_plan", "request_user_input"}

// bridgedTools are the tools Table runs through the client's shell.
var bridgedTools = []string{"exec_shell", "task_shell_start", "read_file", "write_file", "edit_file", "grep_files",
	"file_search", "list_dir", "apply_patch", "git_status", "git_diff", "diagnostics", "checklist_write", "todo_write"}

// ToolNames lists DeepSeek TUI's 84 tools (tools.json), for the
// unavailable ones of Table.
var ToolNames = []string{"agent_close", "agent_eval", "agent_open", "apply_patch", "automation_create",
	"automation_delete", "automation_list", "automation_pause", "automation_read", "automation_resume",
	"automation_run", "automation_update", "checklist_add", "checklist_list", "checklist_update", "checklist_write",
	"diagnostics", "edit_file", "exec_interact", "exec_shell", "exec_shell_cancel", "exec_shell_interact",
	"exec_shell_wait", "exec_wait", "fetch_url", "file_search", "fim_edit", "finance", "git_blame", "git_diff",
	"git_log", "git_show", "git_status", "github_close_issue", "github_close_pr", "github_comment",
	"github_issue_context", "github_pr_context", "grep_files", "handle_read", "image_ocr", "list_dir", "load_skill",
	"note", "notify", "pandoc_convert", "pr_attempt_list", "pr_attempt_preflight", "pr_attempt_read",
	"pr_attempt_record", "project_map", "read_file", "recall_archive", "request_user_input", "retrieve_tool_result",
	"revert_turn", "review", "rlm_close", "rlm_configure", "rlm_eval", "rlm_open", "rlm_session_objects", "run_tests",
	"task_cancel", "task_create", "task_gate_run", "task_list", "task_read", "task_shell_start", "task_shell_wait",
	"todo_add", "todo_list", "todo_update", "todo_write", "tool_agent", "update_plan", "validate_data",
	"web-x00002E-run", "web_search", "write_file", "code_execution", "js_execution", "tool_search_tool_regex",
	"tool_search_tool_bm25"}

// why says why a tool without a bridge cannot run, by name prefix.
func why(tool string) string {
	switch {
	case strings.HasPrefix(tool, "agent_") || tool == "tool_agent":
		return "sub-agents are not available through this client"
	case strings.HasPrefix(tool, "automation_"):
		return "automations are not available through this client"
	case strings.HasPrefix(tool, "checklist_") || strings.HasPrefix(tool, "todo_"):
		return "only the whole list can be kept: call checklist_write with every item"
	case strings.HasPrefix(tool, "exec_") || tool == "task_shell_wait":
		return "background shells cannot be polled through this client; run the command with exec_shell"
	case strings.HasPrefix(tool, "github_"):
		return "GitHub access is not available through this client; use exec_shell with gh if it is installed"
	case tool == "fetch_url" || strings.HasPrefix(tool, "web"):
		return "the web is not reachable through this client; use exec_shell with curl if the network is allowed"
	case strings.HasPrefix(tool, "git_"):
		return "run the git command with exec_shell"
	}
	return "this client has no such tool"
}

// Table is deepseek-tui's bridge (see the package doc).
func Table() bridge.Table {
	t := bridge.Table{
		bridge.ShellSpec{Tool: "exec_shell", Command: "command", Workdir: "cwd", Timeout: "timeout_ms",
			TimeoutUnit: time.Millisecond, Plain: true}.Mapping(),
		bridge.ShellSpec{Tool: "task_shell_start", Command: "command", Workdir: "cwd", Timeout: "timeout_ms",
			TimeoutUnit: time.Millisecond}.Mapping(),
		bridge.ReadSpec{Tool: "read_file", Path: "path", Offset: "start_line", Limit: "max_lines"}.Mapping(),
		bridge.WriteSpec{Tool: "write_file", Path: "path", Content: "content"}.Mapping(),
		bridge.EditSpec{Tool: "edit_file", Path: "path", Old: "search", New: "replace", ReplaceAll: bridge.NoKey}.Mapping(),
		bridge.GrepSpec{Tool: "grep_files", Pattern: "pattern", Path: "path", Include: bridge.NoKey}.Mapping(),
		script("file_search", func(a map[string]json.RawMessage) (string, error) {
			q, err := str(a, "query")
			if err != nil || q == "" {
				return "", errors.Join(errors.New("query: missing"), err)
			}
			p, err := str(a, "path")
			return bridge.GlobCommand("*"+q+"*", p), err
		}),
		script("list_dir", func(a map[string]json.RawMessage) (string, error) {
			p, err := str(a, "path")
			if p == "" {
				p = "."
			}
			return "ls -la -- " + bridge.Quote(p), err
		}),
		script("apply_patch", applyPatch),
		script("git_status", func(map[string]json.RawMessage) (string, error) { return "git status --short --branch", nil }),
		script("git_diff", func(a map[string]json.RawMessage) (string, error) {
			cmd := "git diff"
			var cached bool
			if raw, ok := a["cached"]; ok && json.Unmarshal(raw, &cached) == nil && cached {
				cmd += " --cached"
			}
			var u int
			if raw, ok := a["unified"]; ok && json.Unmarshal(raw, &u) == nil {
				cmd += " -U" + strconv.Itoa(min(max(u, 0), 50))
			}
			if p, err := str(a, "path"); err != nil {
				return "", err
			} else if p != "" {
				cmd += " -- " + bridge.Quote(p)
			}
			return cmd, nil
		}),
		script("diagnostics", func(map[string]json.RawMessage) (string, error) {
			return `printf 'cwd: %s\n' "$(pwd)"; git status --short --branch 2>&1 | head -n 1; uname -sr; ` +
				`command -v cargo >/dev/null 2>&1 && cargo --version; command -v rustc >/dev/null 2>&1 && rustc --version; true`, nil
		}),
		script("checklist_write", checklistWrite),
		script("todo_write", checklistWrite),
	}
	for _, n := range ToolNames {
		if slices.Contains(bridgedTools, n) || slices.Contains(clientTools, n) {
			continue
		}
		t = append(t, bridge.UnavailableSpec{Tool: n, Why: why(n)}.Mapping())
	}
	return t
}

// script is a mapping whose shell script build makes from the arguments.
func script(tool string, build func(a map[string]json.RawMessage) (string, error)) bridge.Mapping {
	return bridge.Mapping{Tool: tool, Shell: func(raw json.RawMessage) (bridge.ShellCall, error) {
		a := map[string]json.RawMessage{}
		if len(bytes.TrimSpace(raw)) > 0 {
			if err := json.Unmarshal(raw, &a); err != nil {
				return bridge.ShellCall{}, fmt.Errorf("arguments: %w", err)
			}
		}
		s, err := build(a)
		if err != nil {
			return bridge.ShellCall{}, err
		}
		return bridge.ShellCall{Script: s}, nil
	}}
}

func str(a map[string]json.RawMessage, k string) (string, error) {
	raw, ok := a[k]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s: not a string", k)
	}
	return s, nil
}

// applyPatch writes each of "changes" whole, or applies the unified diff
// "patch" with git apply (patch -p1 where git refuses).
func applyPatch(a map[string]json.RawMessage) (string, error) {
	if raw, ok := a["changes"]; ok && string(raw) != "null" {
		var cs []struct{ Path, Content string }
		if err := json.Unmarshal(raw, &cs); err != nil {
			return "", fmt.Errorf("changes: %w", err)
		}
		var parts []string
		for _, c := range cs {
			if c.Path == "" {
				return "", errors.New("changes: a change has no path")
			}
			parts = append(parts, "{ "+bridge.WriteCommand(c.Path, c.Content)+"; } || exit 1")
		}
		if len(parts) > 0 {
			return strings.Join(parts, "; "), nil
		}
	}
	p, err := str(a, "patch")
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", errors.New("patch: missing (or give changes)")
	}
	q := bridge.Quote(p)
	return "printf '%s' " + q + " | git apply --whitespace=nowarn - 2>/dev/null || printf '%s' " + q + " | patch -p1 --forward --batch", nil
}

// checklistWrite prints the checklist back: the call's arguments are the
// checklist, kept in the history (a proxy keeps no state of its own).
func checklistWrite(a map[string]json.RawMessage) (string, error) {
	items, err := checklist(a["todos"])
	if err != nil {
		return "", err
	}
	return "printf '%s\\n' " + bridge.Quote(renderChecklist(items)), nil
}

type checkItem struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

func checklist(raw json.RawMessage) ([]checkItem, error) {
	var items []checkItem
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("todos: %w", err)
	}
	return items, nil
}

// renderChecklist is "Checklist empty", or "Checklist (P% complete)" and a
// "- [ ] / [~] / [x] item" line per item (P rounded half up).
func renderChecklist(items []checkItem) string {
	if len(items) == 0 {
		return "Checklist empty"
	}
	done := 0
	var lines []string
	for _, it := range items {
		box := "[ ]"
		switch it.Status {
		case "in_progress":
			box = "[~]"
		case "completed":
			box = "[x]"
			done++
		}
		lines = append(lines, "- "+box+" "+it.Content)
	}
	pct := (done*200 + len(items)) / (2 * len(items))
	return "Checklist (" + strconv.Itoa(pct) + "% complete)\n" + strings.Join(lines, "\n")
}

// isTool reports whether name is one of DeepSeek TUI's tools.
func isTool(name string) bool { return slices.Contains(ToolNames, name) }

// historyNode is request.history: deepseek-tui's flattening; the client's
// shell calls are first shown as the DeepSeek TUI calls they came from
// and their outputs rendered as the fork renders them.
func historyNode(env *harness.Env) pipeline.Node {
	table := Table()
	return pipeline.StageNode(request.NodeHistory, request.Update(func(s *request.Shaping) error {
		out, err := flatten(s, table)
		if err != nil {
			return err
		}
		s.Transcript = out
		return nil
	}), pipeline.Describe("history → transcript, client shell calls shown as DeepSeek TUI calls, outputs as the fork renders them"))
}

func flatten(s *request.Shaping, table bridge.Table) ([]request.Message, error) {
	p := Policy()
	bridged := map[string]string{}
	base := p.MapCall
	p.MapCall = func(c *request.Call) {
		if tool, ok := reverse(table, c); ok {
			bridged[c.ID] = tool
		}
		base(c)
	}
	p.MapOutput = func(o *request.Output) {
		if tool, ok := bridged[o.CallID()]; ok && render(o, tool) {
			return
		}
		emptyKept(o)
	}
	return request.Flatten(s.Transcript, s.Request.Input, &p, s.ToolNames)
}

// reverse turns a call of the client's shell tool back into the DeepSeek
// TUI call it stands for.
func reverse(table bridge.Table, c *request.Call) (string, bool) {
	switch v := c.Item.(type) {
	case *protocol.FunctionCall:
		if isTool(v.Name) {
			return "", false
		}
	case *protocol.LocalShellCall:
	default:
		return "", false
	}
	tool, args, ok := table.ReverseItem(c.Item)
	if !ok {
		return "", false
	}
	c.Name, c.Arguments = tool, args
	return tool, true
}

// Output compaction: outputs longer than CompactAt are cut to a head of
// CompactHead and a tail of CompactTail characters, as the fork does.
const (
	CompactAt   = 900
	CompactHead = 572
	CompactTail = 286
)

// render writes a bridged call's output the fork's way; false when the
// output is not in the client's exec framing.
func render(o *request.Output, tool string) bool {
	text := o.Text
	if !o.IsText() {
		t, _ := protocol.FunctionCallOutputPayload{Items: o.Items}.ToText()
		text = t
	}
	out, code, hasExit, ok := bridge.UnwrapOutput(text)
	if !ok {
		return false
	}
	out = strings.TrimRight(out, "\n")
	var body string
	switch {
	case hasExit && code != 0:
		body = "Command failed (exit code: " + strconv.Itoa(code) + ")\n\nSTDOUT:\n\n\nSTDERR:\n" + out
	case out == "":
		body = "(no output)"
	default:
		body = out
	}
	if tool == "exec_shell" && len(body) > CompactAt {
		body = compactOutput(body)
	}
	o.Text, o.Items, o.Success = body, nil, nil
	return true
}

// compactOutput shortens a long shell output as the fork does: a summary
// of the first three lines, a head and a tail, and what was left out.
func compactOutput(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	summary := strings.Join(lines[:min(3, len(lines))], " | ")
	head, tail := cutRunes(s, CompactHead, false), cutRunes(s, CompactTail, true)
	n := len([]rune(s))
	return "[exec_shell output compacted to protect context]\nSummary: " + summary + "\nSnippet: " + head +
		"\n\n[... output truncated for context ...]\n\n" + tail + "\n(Original: " + strconv.Itoa(n) +
		" chars, omitted: " + strconv.Itoa(n-CompactAt) + " chars.)"
}

func cutRunes(s string, n int, fromEnd bool) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if fromEnd {
		return string(r[len(r)-n:])
	}
	return string(r[:n])
}

// planOutputs rewrites the output "Plan updated" of an update_plan call
// whose arguments parse: the counts of the plan's steps, then the plan.
func planOutputs(ts []request.Message, items []protocol.ResponseItem, done string) {
	if done == "" {
		return
	}
	plans := map[string]string{}
	for _, it := range items {
		if c, ok := it.(*protocol.FunctionCall); ok && c.Name == "update_plan" {
			plans[c.CallID] = c.Arguments
		}
	}
	for i := range ts {
		m := &ts[i]
		if m.Output == nil || !m.Output.IsText() || m.Output.Text != done {
			continue
		}
		args, ok := plans[m.CallID]
		if !ok {
			continue
		}
		if text, ok := planSummary(done, args); ok {
			m.Output.Text = text
		}
	}
}

// planSummary is "Plan updated: P pending, I in progress, C completed (N%
// done)" and the plan as indented JSON.
func planSummary(done, args string) (string, bool) {
	var p struct {
		Explanation *string `json:"explanation"`
		Plan        []struct {
			Step   string `json:"step"`
			Status string `json:"status"`
		} `json:"plan"`
	}
	if json.Unmarshal([]byte(args), &p) != nil {
		return "", false
	}
	counts := map[string]int{}
	for _, s := range p.Plan {
		counts[s.Status]++
	}
	pct := 0
	if len(p.Plan) > 0 {
		pct = counts["completed"] * 100 / len(p.Plan)
	}
	type item struct {
		Step   string `json:"step"`
		Status string `json:"status"`
	}
	details := struct {
		Explanation *string `json:"explanation"`
		Items       []item  `json:"items"`
	}{Explanation: p.Explanation, Items: []item{}}
	for _, s := range p.Plan {
		details.Items = append(details.Items, item(s))
	}
	b, err := json.MarshalIndent(details, "", "  ")
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%s: %d pending, %d in progress, %d completed (%d%% done)\n%s", done,
		counts["pending"], counts["in_progress"], counts["completed"], pct, b), true
}

// compactArguments removes the white space outside strings of a call's
// arguments, keeping the key order; arguments that are not JSON stay.
func compactArguments(args string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(args)) != nil {
		return args
	}
	return b.String()
}
