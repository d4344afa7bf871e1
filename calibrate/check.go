package calibrate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/all" // the harnesses Check shapes with
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
)

// Check statuses.
const (
	Same     = "same"
	Differs  = "differs"
	Excepted = "excepted"
)

// Diff is one compared field.
type Diff struct {
	Field  string `json:"field"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// Report is the outcome of Check.
type Report struct {
	Harness string    `json:"harness"`
	Wire    string    `json:"wire"`
	Agent   AgentInfo `json:"agent"`
	Task    string    `json:"task"`
	Diffs   []Diff    `json:"fields"`

	masks []string // old/new pairs masking per-run paths in texts
}

// perRunMasks mask, in both runs' texts, the temporary home directory and
// the cwd written as a key ("/" as "-", as agents name per-project
// directories): values of a run no template field stands for.
func perRunMasks(cal *Calibration, c *Capture) []string {
	var m []string
	for _, cwd := range []string{cal.Cwd, c.Cwd} {
		if cwd == "" {
			continue
		}
		home := filepath.Join(filepath.Dir(cwd), "home")
		m = append(m, home, "<home>", strings.ReplaceAll(cwd, "/", "-"), "<cwd-key>")
	}
	return m
}

// Differences counts the fields that differ.
func (r *Report) Differences() int {
	n := 0
	for _, d := range r.Diffs {
		if d.Status == Differs {
			n++
		}
	}
	return n
}

// WriteText prints the report, one field a line.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "calibrate --check %s (wire %s), agent %s %s, task %q\n", r.Harness, r.Wire, r.Agent.Name, r.Agent.Version, r.Task)
	for _, d := range r.Diffs {
		line := fmt.Sprintf("  %-8s %s", d.Status, d.Field)
		if d.Detail != "" {
			line += ": " + d.Detail
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "%d fields differ\n", r.Differences())
}

// LoadCalibration reads DIR/HARNESS/calibration.json.
func LoadCalibration(dir, harnessName string) (*Calibration, error) {
	p := filepath.Join(dir, harnessName, "calibration.json")
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("calibrate --check: %w", err)
	}
	var c Calibration
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("calibrate --check: %s: %w", p, err)
	}
	return &c, nil
}

// Check runs the agent again on CheckTask (on the overlay's wire) and
// compares its first requests with what the harness sends with the
// overlay dir for the same task, cwd and date: texts, tools, identity
// headers, top-level fields, path and the title request.
func Check(ctx context.Context, o Options, dir string) (*Report, error) {
	cal, err := LoadCalibration(dir, o.Harness)
	if err != nil {
		return nil, err
	}
	pack, err := prompts.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("calibrate --check: %w", err)
	}
	if o.Wire == "" {
		o.Wire = cal.Wire
	}
	if o.Task == "" {
		o.Task = CheckTask
	}
	var shapedBody, shapedTitle []byte
	var shapedPath string
	var shapedHeaders map[string]string
	o.OnCaptured = func(c *Capture) error {
		main := first(c.Requests, "main")
		var model string
		var top map[string]json.RawMessage
		_ = json.Unmarshal(main.Body, &top) // a main request is an object
		_ = json.Unmarshal(top["model"], &model)
		req, err := protocol.DecodeRequest(engineRequest(model, c.Cwd, shellBase(c.Shell), c.Dates[0], c.Task))
		if err != nil {
			return fmt.Errorf("calibrate --check: engine request: %w", err)
		}
		turn, err := harness.Plan(ctx, harness.Config{Wire: harness.Wire(c.Wire), Prompts: pack,
			Workspace: harness.WorkspaceLocal}, o.Harness, req, nil)
		if err != nil {
			return fmt.Errorf("calibrate --check: harness %s with the overlay: %w", o.Harness, err)
		}
		shapedBody, shapedTitle, shapedPath, shapedHeaders = turn.Shaped.Body, turn.Shaped.TitleRequest, turn.Shaped.Path, turn.Shaped.Headers
		return nil
	}
	c, err := RunAgent(ctx, o)
	if err != nil {
		return nil, err
	}
	name, version := versionOf(c)
	rep := &Report{Harness: o.Harness, Wire: c.Wire, Agent: AgentInfo{Name: name, Version: version}, Task: c.Task}
	main := first(c.Requests, "main")
	if cal.Agent.Version != "" && version != cal.Agent.Version {
		rep.add("agent version", Differs, fmt.Sprintf("calibrated with %s, now %s", cal.Agent.Version, version))
	}
	rep.comparePath(main.Path, shapedPath)
	rep.masks = perRunMasks(cal, c)
	rep.compareRoles(c.Wire, main.Body, shapedBody)
	rep.compareTexts("", c, main.Body, shapedBody)
	rep.compareTools(main.Body, shapedBody)
	rep.compareFields(main.Body, shapedBody)
	rep.compareHeaders(main.Headers, shapedHeaders)
	title := first(c.Requests, "title")
	hasTitle := len(bytes.TrimSpace(shapedTitle)) > 0 && string(bytes.TrimSpace(shapedTitle)) != "null"
	switch {
	case title == nil && !hasTitle:
		rep.add("title request", Same, "none sent")
	case title == nil:
		rep.add("title request", Differs, "the agent sent none, the harness sends one")
	case !hasTitle:
		rep.add("title request", Differs, "the agent sent one, the harness sends none")
	default:
		rep.add("title request", Same, "both send one")
		rep.compareTexts("title ", c, title.Body, titleBody(shapedTitle))
	}
	return rep, nil
}

// titleBody is the body of a shaped title request (its "body" member
// when it has one).
func titleBody(raw []byte) []byte {
	var t struct {
		Body json.RawMessage `json:"body"`
	}
	if json.Unmarshal(raw, &t) == nil && len(t.Body) > 0 {
		return t.Body
	}
	return raw
}

// engineRequest is a Codex-shaped request for the task: a base prompt of
// the engine (which a harness replaces), the environment context naming
// cwd, shell and date, the task, and a shell tool.
func engineRequest(model, cwd, shell, date, task string) []byte {
	env := "<environment_context>\n  <cwd>" + cwd + "</cwd>\n  <shell>" + shell + "</shell>\n  <current_date>" + date +
		"</current_date>\n</environment_context>"
	msg := func(role, text string) map[string]any {
		return map[string]any{"type": "message", "role": role, "content": []any{map[string]any{"type": "input_text", "text": text}}}
	}
	req := map[string]any{
		"model":  model,
		"stream": true,
		"input": []any{msg("developer", "You are the engine's coding agent. (Calibration check base prompt.)"),
			msg("user", env), msg("user", task)},
		"tools": []any{map[string]any{"type": "function", "name": "exec_command", "description": "Runs a shell command.",
			"strict": false, "parameters": map[string]any{"type": "object", "properties": map[string]any{
				"cmd": map[string]any{"type": "string", "description": "The command."}}, "required": []string{"cmd"}}}},
		"tool_choice":         "auto",
		"parallel_tool_calls": true,
		"prompt_cache_key":    "calibrate-check",
	}
	b, _ := json.Marshal(req) // plain values always marshal
	return b
}

func (r *Report) add(field, status, detail string) {
	r.Diffs = append(r.Diffs, Diff{Field: field, Status: status, Detail: detail})
}

func (r *Report) comparePath(real, shaped string) {
	p := real
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if strings.HasSuffix(p, shaped) {
		r.add("path", Same, real)
		return
	}
	r.add("path", Differs, fmt.Sprintf("agent %s, harness %s", real, shaped))
}

// compareRoles compares the message layout of two bodies: the roles of
// their messages (input items of the responses wire) in order.
func (r *Report) compareRoles(wire string, real, shaped []byte) {
	a, b := roles(wire, real), roles(wire, shaped)
	if strings.Join(a, ",") == strings.Join(b, ",") {
		r.add("message roles", Same, strings.Join(a, ", "))
		return
	}
	r.add("message roles", Differs, fmt.Sprintf("agent [%s], harness [%s]", strings.Join(a, ", "), strings.Join(b, ", ")))
}

// roles lists the roles of a body's messages ("input" items on the
// responses wire; an item without a role by its type).
func roles(wire string, body []byte) []string {
	key := "messages"
	if wire == WireResponses {
		key = "input"
	}
	var b map[string]json.RawMessage
	_ = json.Unmarshal(body, &b) // not an object: no roles
	var list []struct {
		Role string `json:"role"`
		Type string `json:"type"`
	}
	_ = json.Unmarshal(b[key], &list) // not an array: no roles
	out := make([]string, 0, len(list))
	for _, m := range list {
		if m.Role == "" {
			m.Role = m.Type
		}
		out = append(out, m.Role)
	}
	return out
}

// compareTexts compares the texts of two bodies by location, the per-run
// values of the capture (temporary home, session ids) masked.
func (r *Report) compareTexts(prefix string, c *Capture, real, shaped []byte) {
	mask := strings.NewReplacer(r.masks...)
	rt, st := Texts(c.Wire, real, c.Task), Texts(c.Wire, shaped, c.Task)
	// A text the harness sends at another place of the same role counts
	// as found there (a reminder shifted by one the harness lacks).
	matched := make([]bool, len(st))
	find := func(t Text, eq func(a, b string) bool) int {
		for j, s := range st {
			if s.Where == t.Where && eq(t.Text, s.Text) {
				return j
			}
		}
		for j, s := range st {
			if !matched[j] && s.Role == t.Role && eq(t.Text, s.Text) {
				return j
			}
		}
		return -1
	}
	exact := func(a, b string) bool { return a == b }
	masked := func(a, b string) bool { return mask.Replace(a) == mask.Replace(b) }
	// First pass: the agent's texts the harness sends too (exactly, or
	// once masked); second pass: the others against what the harness
	// sends at the same place.
	status := make([]string, len(rt))
	partner := make([]int, len(rt))
	for i, t := range rt {
		partner[i] = -1
		if j := find(t, exact); j >= 0 {
			matched[j], status[i], partner[i] = true, Same, j
		} else if j := find(t, masked); j >= 0 {
			matched[j], status[i], partner[i] = true, Excepted, j
		}
	}
	for i, t := range rt {
		field := prefix + "text " + t.Where
		if t.Task {
			field += " (task)"
		}
		at := func(j int) string {
			if st[j].Where == t.Where {
				return ""
			}
			return " (the harness sends it at " + st[j].Where + ")"
		}
		switch status[i] {
		case Same:
			r.add(field, Same, fmt.Sprintf("%d chars%s", len(t.Text), at(partner[i])))
			continue
		case Excepted:
			r.add(field, Excepted, fmt.Sprintf("%d chars, the same once the per-run paths (home directory and the paths derived from it and the cwd) are masked%s", len(t.Text), at(partner[i])))
			continue
		}
		j := -1
		for k, s := range st {
			if s.Where == t.Where && !matched[k] {
				j = k
			}
		}
		if j < 0 {
			r.add(field, Differs, fmt.Sprintf("the harness sends no such text (agent: %d chars, starting %q)", len(t.Text), head(t.Text)))
			continue
		}
		matched[j] = true
		r.add(field, Differs, firstDifference(mask.Replace(t.Text), mask.Replace(st[j].Text)))
	}
	for j, s := range st {
		if !matched[j] {
			r.add(prefix+"text "+s.Where, Differs, fmt.Sprintf("only the harness sends this text (%d chars, starting %q)", len(s.Text), head(s.Text)))
		}
	}
}

// head is the start of a text, for a report line.
func head(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

// firstDifference describes where two texts first differ.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	clip := func(s string) string {
		e := min(len(s), i+40)
		s = s[i:e]
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("agent %d chars, harness %d; first difference at byte %d: agent %s, harness %s", len(a), len(b), i, clip(a), clip(b))
}

// compareTools compares the tool lists: names and order, then each tool's
// definition byte for byte (compact JSON).
func (r *Report) compareTools(real, shaped []byte) {
	var a, b struct {
		Tools []json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(real, &a)   // a main request is an object
	_ = json.Unmarshal(shaped, &b) // so is a shaped body
	an, bn := toolNamesOf(a.Tools), toolNamesOf(b.Tools)
	if strings.Join(an, ",") == strings.Join(bn, ",") {
		r.add("tools (names, order)", Same, strings.Join(an, ", "))
	} else {
		r.add("tools (names, order)", Differs, fmt.Sprintf("agent [%s], harness [%s]", strings.Join(an, ", "), strings.Join(bn, ", ")))
	}
	for i, t := range a.Tools {
		name := an[i]
		j := indexOf(bn, name)
		if j < 0 {
			continue
		}
		x, y := compact(t), compact(b.Tools[j])
		if x == y {
			r.add("tool "+name, Same, "")
		} else {
			r.add("tool "+name, Differs, firstDifference(x, y))
		}
	}
}

func toolNamesOf(tools []json.RawMessage) []string {
	b, _ := json.Marshal(tools) // raw messages always marshal
	return toolNames(b)
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

func compact(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// compareFields compares the top-level fields other than texts and tools;
// per-run ones are excepted.
func (r *Report) compareFields(real, shaped []byte) {
	var a, b map[string]json.RawMessage
	_ = json.Unmarshal(real, &a)   // objects, see compareTools
	_ = json.Unmarshal(shaped, &b) //
	skip := map[string]bool{"messages": true, "system": true, "input": true, "instructions": true, "tools": true}
	perRun := map[string]bool{"metadata": true, "prompt_cache_key": true, "user": true}
	var order []string
	for _, k := range orderedKeys(real) {
		if !skip[k] {
			order = append(order, k)
		}
	}
	for _, k := range orderedKeys(shaped) {
		if !skip[k] && indexOf(order, k) < 0 {
			order = append(order, k)
		}
	}
	for _, k := range order {
		x, inA := a[k]
		y, inB := b[k]
		switch {
		case perRun[k]:
			r.add("field "+k, Excepted, "per-run value")
		case !inA:
			r.add("field "+k, Differs, "only the harness sends it: "+clip(compact(y)))
		case !inB:
			r.add("field "+k, Differs, "only the agent sends it: "+clip(compact(x)))
		case compact(x) == compact(y):
			r.add("field "+k, Same, clip(compact(x)))
		default:
			r.add("field "+k, Differs, fmt.Sprintf("agent %s, harness %s", clip(compact(x)), clip(compact(y))))
		}
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// compareHeaders compares the agent's identity headers with what the
// harness adds; session ids and the like are excepted.
func (r *Report) compareHeaders(real map[string]string, shaped map[string]string) {
	low := map[string]string{}
	for k, v := range shaped {
		low[strings.ToLower(k)] = v
	}
	for _, k := range sortedKeys(real) {
		v := real[k]
		switch {
		case containsString(secretHeaders, k) || containsString(transportHeaders, k):
		case isSessionHeader(k) || uuidRe.MatchString(v):
			r.add("header "+k, Excepted, "per-run value")
		case low[k] == v:
			r.add("header "+k, Same, clip(v))
		case low[k] == "":
			r.add("header "+k, Differs, "the harness does not send it (agent: "+clip(v)+")")
		default:
			r.add("header "+k, Differs, fmt.Sprintf("agent %q, harness %q", clip(v), clip(low[k])))
		}
	}
}
