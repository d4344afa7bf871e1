// Package calibrate turns what a real coding agent sends into a prompt-pack
// overlay for the harness that emulates it (README "Calibrate a harness").
//
// RunAgent starts a loopback capture endpoint speaking the harness's wire,
// runs the user's installed agent against it in a scratch workspace with a
// known task, and answers with scripted turns (one call of the agent's
// shell tool, then a final text). Write turns the captured requests into
// DIR/HARNESS/: templates whose per-turn values (cwd, date, platform,
// shell, model, directory listing) are the template fields the harness
// fills, the tool list, identity headers and top-level fields as the
// calibrated pack files of package harness, and calibration.json, which
// lists what was captured, templated and what could not be mapped. Check
// runs the agent again on another task and compares it, field by field,
// with what the harness sends using the overlay.
//
// Nothing the agent sent is stored in this repository: the overlay goes
// where the user says.
package calibrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/claudecode"
	"github.com/harnessflow/harnessflow/prompts"
)

// Calibration is calibration.json: what a run captured and what became of
// it.
type Calibration struct {
	Harness string `json:"harness"`
	Wire    string `json:"wire"`
	// Agent is the agent's product and version as its user agent names
	// them.
	Agent     AgentInfo `json:"agent"`
	Command   []string  `json:"command"`
	Task      string    `json:"task"`
	Cwd       string    `json:"cwd"`
	Dates     []string  `json:"dates"`
	Shell     string    `json:"shell"`
	ExitCode  int       `json:"agent_exit_code"`
	CreatedAt string    `json:"created_at"`
	// Captured lists the requests seen.
	Captured []CapturedInfo `json:"captured"`
	// Written lists the files written and where each came from.
	Written []Written `json:"written"`
	// Unmapped lists what the overlay cannot reproduce, and why.
	Unmapped []Unmapped `json:"unmapped"`
	// PerRun are values that change from run to run (session ids, …) and
	// are left out on purpose.
	PerRun []string `json:"per_run"`
}

// AgentInfo names the agent.
type AgentInfo struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	UserAgent string `json:"user_agent"`
}

// CapturedInfo summarizes one captured request.
type CapturedInfo struct {
	Seq   int      `json:"seq"`
	Kind  string   `json:"kind"`
	Path  string   `json:"path"`
	Texts []string `json:"texts,omitempty"`
	Tools int      `json:"tools"`
	File  string   `json:"file"`
}

// Written is one file of the overlay.
type Written struct {
	File string `json:"file"`
	// From names the captured request and text it came from.
	From string `json:"from"`
	// Templated are the per-turn values turned into template fields.
	Templated []Value `json:"templated,omitempty"`
}

// Unmapped is something captured that the overlay does not reproduce.
type Unmapped struct {
	What string `json:"what"`
	Why  string `json:"why"`
	// File is where its captured text was saved (under .capture/), if
	// anywhere.
	File string `json:"file,omitempty"`
}

// slot is where a captured text goes in the harness's pack: a template,
// the fields the harness fills it with (value kind → field name), the
// date layout the harness fills the date field in, and the text the
// harness puts around the rendered template.
type slot struct {
	template   string
	fields     map[string]string
	dateLayout string
	prefix     string
	suffix     string
	// split: the text is the template (up to the paragraph holding the
	// first per-turn value) and then splitRest (from that paragraph on),
	// joined by a blank line.
	splitRest string
	// splitBefore, when set, cuts there instead (the first occurrence;
	// the separator's first byte is the joint the harness puts back, the
	// rest goes to splitRest).
	splitBefore string
}

// assign says which captured texts go into which template, per harness
// and kind of request ("main" or "title").
func assign(harnessName, kind string, ts []Text, c *Capture) map[int]slot {
	out := map[int]slot{}
	var sys, user []int
	for i, t := range ts {
		switch {
		case t.Task:
		case t.Role == "system":
			sys = append(sys, i)
		default:
			user = append(user, i)
		}
	}
	date, _ := foundDate(joinTexts(ts), c.Dates)
	switch harnessName + "/" + kind {
	case "claude-code/main":
		// system[0] is the billing block the harness computes.
		if len(sys) > 1 && ts[sys[1]].Where == "system[1]" {
			out[sys[1]] = slot{template: "agent"}
		}
		if len(sys) > 2 && ts[sys[2]].Where == "system[2]" {
			out[sys[2]] = slot{template: "system", dateLayout: time.DateOnly, fields: map[string]string{
				"cwd": "cwd", "date": "date", "platform": "platform", "model": "model", "shell": "shellName",
				"model_name": "modelName"}}
		}
		// Claude Code 2.1.332: a role "system" message with the
		// environment after the first user message, whose first part is
		// the attribution reminder (harness/claudecode withEnvironment).
		for _, i := range sys {
			if strings.HasPrefix(ts[i].Where, "messages[") {
				out[i] = slot{template: "environment", dateLayout: time.DateOnly, fields: map[string]string{
					"cwd": "cwd", "date": "date", "platform": "platform", "model": "model", "shell": "shellName",
					"model_name": "modelName"}}
				break
			}
		}
		if len(user) > 0 && ts[user[0]].Where == "messages[0].content[0]" {
			out[user[0]] = slot{template: "attribution_reminder", fields: map[string]string{
				"model": "model", "model_name": "modelName"}}
		}
	case "claude-code/title":
		if len(sys) > 0 {
			out[sys[len(sys)-1]] = slot{template: "title_system"}
		}
	case "opencode/main":
		if len(sys) > 0 {
			out[sys[0]] = slot{template: "system", splitRest: "env", dateLayout: "Mon Jan 02 2006",
				fields: map[string]string{"cwd": "Cwd", "date": "Date", "platform": "Platform", "model": "ModelID"}}
		}
	case "opencode/title":
		if len(sys) > 0 {
			out[sys[0]] = slot{template: "title"}
		}
		if len(user) > 0 {
			out[user[0]] = slot{template: "title_lead"}
		}
	case "pi/main":
		// pi 0.73.1: the prompt, then (no AGENTS.md in the scratch
		// workspace) "\nCurrent date: …\nCurrent working directory: …"
		// (harness/pi SystemPrompt: system.tmpl, "\n", env.tmpl).
		if len(sys) > 0 {
			out[sys[0]] = slot{template: "system", splitBefore: "\nCurrent date: ", splitRest: "env",
				dateLayout: time.DateOnly, fields: map[string]string{"cwd": "Cwd", "date": "Date"}}
		}
	case "qwen-code/main":
		if len(sys) > 0 {
			out[sys[0]] = slot{template: "system"}
		}
		setup := -1
		for _, i := range user {
			if strings.Contains(ts[i].Text, c.Cwd) {
				setup = i
				out[i] = slot{template: "setup", dateLayout: "Monday, January 2, 2006",
					prefix: "<system-reminder>\n", suffix: "\n</system-reminder>",
					fields: map[string]string{"cwd": "Cwd", "date": "Date", "platform": "OS", "listing": "Listing"}}
				break
			}
		}
		dateAt := -1
		for _, i := range user {
			if i != setup && date != "" && strings.Contains(ts[i].Text, date) {
				dateAt = i
				out[i] = slot{template: "date_reminder", dateLayout: "Monday, January 2, 2006",
					fields: map[string]string{"date": "Date"}}
				break
			}
		}
		// Qwen Code 0.24.4: the skills reminder before the setup, the
		// deferred-tools reminder between the setup and the date
		// (harness/qwencode Reminders).
		if setup >= 0 {
			for _, i := range user {
				if _, taken := out[i]; taken {
					continue
				}
				switch {
				case i < setup && !assigned(out, "skills_reminder"):
					out[i] = slot{template: "skills_reminder"}
				case i > setup && (dateAt < 0 || i < dateAt) && !assigned(out, "tools_reminder"):
					out[i] = slot{template: "tools_reminder"}
				}
			}
		}
	case "kimi-code/main":
		// Kimi Code 2.1.0: the system prompt (no date in it), then after
		// the task the date reminder and the auto-permission reminder
		// (harness/kimicode withReminders).
		if len(sys) > 0 {
			out[sys[0]] = slot{template: "system", fields: map[string]string{"cwd": "WorkDir", "shell": "Shell"}}
		}
		for _, i := range user {
			switch {
			case date != "" && strings.Contains(ts[i].Text, date) && !assigned(out, "date_reminder"):
				out[i] = slot{template: "date_reminder", dateLayout: time.DateOnly, fields: map[string]string{"date": "Date"}}
			case !assigned(out, "auto_reminder"):
				out[i] = slot{template: "auto_reminder"}
			}
		}
	}
	return out
}

// assigned reports whether a slot of out writes the template.
func assigned(out map[int]slot, template string) bool {
	for _, s := range out {
		if s.template == template {
			return true
		}
	}
	return false
}

func joinTexts(ts []Text) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString(t.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// values are the per-turn values of a capture, as the fields of slot s.
func (s slot) values(c *Capture, text, model string) ([]Value, []Unmapped) {
	var vals []Value
	var un []Unmapped
	field := func(kind string) (string, bool) {
		f, ok := s.fields[kind]
		return f, ok
	}
	if f, ok := field("cwd"); ok {
		vals = append(vals, Value{Kind: "cwd", Field: f, Literal: c.Cwd})
	}
	if d, layout := foundDate(text, c.Dates); d != "" {
		if f, ok := field("date"); ok && layout == s.dateLayout {
			vals = append(vals, Value{Kind: "date", Field: f, Literal: d})
		} else if ok {
			un = append(un, Unmapped{What: s.template + ".tmpl: date " + d,
				Why: fmt.Sprintf("the agent writes the date as %q, the harness fills {{.%s}} as %q; kept literal", layout, f, s.dateLayout)})
		} else {
			un = append(un, Unmapped{What: s.template + ".tmpl: date " + d, Why: "the harness fills no date field in this template; kept literal"})
		}
	}
	if f, ok := field("platform"); ok {
		vals = append(vals, Value{Kind: "platform", Field: f, Literal: "linux", Word: true})
	}
	if f, ok := field("shell"); ok && shellBase(c.Shell) != "" {
		vals = append(vals, Value{Kind: "shell", Field: f, Literal: shellBase(c.Shell), Word: true})
	}
	if f, ok := field("model"); ok && model != "" {
		vals = append(vals, Value{Kind: "model", Field: f, Literal: model})
	}
	if f, ok := field("model_name"); ok && model != "" {
		if name := claudecode.ModelDisplayName(model); name != model {
			vals = append(vals, Value{Kind: "model_name", Field: f, Literal: name})
		}
	}
	return vals, un
}

// Write turns a capture into the overlay DIR/HARNESS/ and returns its
// calibration.json (also written). The raw captured requests and the texts
// that could not be mapped are saved under DIR/HARNESS/.capture/, which
// prompts.Load ignores.
func Write(c *Capture, dir string) (*Calibration, error) {
	hdir := filepath.Join(dir, c.Harness)
	capDir := filepath.Join(hdir, ".capture")
	if err := os.MkdirAll(capDir, 0o755); err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	name, version := versionOf(c)
	cal := &Calibration{Harness: c.Harness, Wire: c.Wire, Command: c.Command, Task: c.Task, Cwd: c.Cwd,
		Dates: c.Dates, Shell: c.Shell, ExitCode: c.ExitCode, CreatedAt: time.Now().UTC().Format(time.RFC3339),
		Agent: AgentInfo{Name: name, Version: version}, Unmapped: []Unmapped{}, PerRun: []string{}}
	write := func(rel string, data []byte) error {
		if err := os.WriteFile(filepath.Join(hdir, rel), data, 0o644); err != nil {
			return fmt.Errorf("calibrate: %w", err)
		}
		return nil
	}
	for _, r := range c.Requests {
		file := fmt.Sprintf(".capture/%04d-%s.json", r.Seq, r.Kind)
		raw, _ := json.MarshalIndent(r, "", "  ") // a Captured always marshals
		if err := write(file, raw); err != nil {
			return nil, err
		}
		info := CapturedInfo{Seq: r.Seq, Kind: r.Kind, Path: r.Path, File: file}
		for _, t := range Texts(c.Wire, r.Body, c.Task) {
			info.Texts = append(info.Texts, t.Where)
		}
		var b struct {
			Tools []json.RawMessage `json:"tools"`
		}
		_ = json.Unmarshal(r.Body, &b) // not an object: no tools
		info.Tools = len(b.Tools)
		cal.Captured = append(cal.Captured, info)
		if cal.Agent.UserAgent == "" && r.Kind != "other" {
			cal.Agent.UserAgent = r.Headers["user-agent"]
		}
	}
	main := first(c.Requests, "main")
	if main == nil {
		return nil, fmt.Errorf("calibrate: %w", ErrNoMainRequest)
	}
	var top map[string]json.RawMessage
	_ = json.Unmarshal(main.Body, &top) // a main request is an object
	var model string
	_ = json.Unmarshal(top["model"], &model)
	perRun := perRunLiterals(c)

	for _, kind := range []string{"main", "title"} {
		r := first(c.Requests, kind)
		if kind == "title" {
			send := r != nil
			if err := write(harness.CalibratedTitle, fmt.Appendf(nil, "{\"send\": %t}\n", send)); err != nil {
				return nil, err
			}
			from := "no title request in this run: the harness sends none either"
			if send {
				from = fmt.Sprintf("request %d (title) was sent", r.Seq)
			}
			cal.Written = append(cal.Written, Written{File: harness.CalibratedTitle, From: from})
		}
		if r == nil {
			continue
		}
		ts := Texts(c.Wire, r.Body, c.Task)
		slots := assign(c.Harness, kind, ts, c)
		for i, t := range ts {
			if t.Task {
				continue
			}
			from := fmt.Sprintf("request %d (%s): %s", r.Seq, kind, t.Where)
			s, ok := slots[i]
			if !ok {
				file := fmt.Sprintf(".capture/unmapped-%d-%s.txt", r.Seq, safeName(t.Where))
				if err := write(file, []byte(t.Text)); err != nil {
					return nil, err
				}
				cal.Unmapped = append(cal.Unmapped, Unmapped{What: from,
					Why: "no template of the " + c.Harness + " harness carries this text", File: file})
				continue
			}
			ws, un, err := s.write(hdir, t.Text, c, model)
			if err != nil {
				return nil, err
			}
			for _, w := range ws {
				w.From = from
				cal.Written = append(cal.Written, w)
			}
			cal.Unmapped = append(cal.Unmapped, un...)
			// The root is a prefix of the cwd and the home: look for it
			// elsewhere only.
			rest := strings.NewReplacer(c.Cwd, "", c.Home, "").Replace(t.Text)
			if c.Home != "" && strings.Contains(t.Text, c.Home) {
				cal.Unmapped = append(cal.Unmapped, Unmapped{What: from + ": home directory",
					Why: "a per-run value no template field stands for; kept literal"})
			}
			if rel := kernelRelease(); rel != "" && strings.Contains(t.Text, rel) {
				cal.Unmapped = append(cal.Unmapped, Unmapped{What: from + ": OS version " + rel,
					Why: "this machine's kernel release, which no template field stands for (a proxy does not know the client's); kept literal"})
			}
			for _, what := range sortedKeys(perRun) {
				if lit := perRun[what]; lit != "" && strings.Contains(rest, lit) {
					cal.Unmapped = append(cal.Unmapped, Unmapped{What: from + ": " + what,
						Why: "a per-run value no template field stands for; kept literal"})
				}
			}
		}
	}

	// Tools: the main request's list, as wire_tools.tmpl.
	if raw, ok := top["tools"]; ok {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, raw, "", "  "); err != nil {
			return nil, fmt.Errorf("calibrate: tools: %w", err)
		}
		tmpl, used := templatize(pretty.String(), []Value{{Kind: "cwd", Field: "cwd", Literal: c.Cwd},
			{Kind: "model", Field: "model", Literal: model}})
		if d, _ := foundDate(pretty.String(), c.Dates); d != "" {
			cal.Unmapped = append(cal.Unmapped, Unmapped{What: "tools: date " + d, Why: "kept literal in wire_tools.tmpl"})
		}
		if err := write(harness.CalibratedTools+".tmpl", []byte(tmpl)); err != nil {
			return nil, err
		}
		cal.Written = append(cal.Written, Written{File: harness.CalibratedTools + ".tmpl",
			From: fmt.Sprintf("request %d (main): tools (%s)", main.Seq, strings.Join(toolNames(raw), ", ")), Templated: used})
	}

	// Identity headers.
	hs := map[string]string{}
	for k, v := range main.Headers {
		switch {
		case containsString(secretHeaders, k) || containsString(transportHeaders, k):
		case isSessionHeader(k) || uuidRe.MatchString(v):
			cal.PerRun = append(cal.PerRun, "header "+k)
		default:
			hs[k] = v
		}
	}
	hb, _ := json.MarshalIndent(hs, "", "  ") // strings always marshal
	if err := write(harness.CalibratedHeaders, hb); err != nil {
		return nil, err
	}
	cal.Written = append(cal.Written, Written{File: harness.CalibratedHeaders,
		From: fmt.Sprintf("request %d (main): headers %s", main.Seq, strings.Join(sortedKeys(hs), ", "))})

	// Top-level fields other than texts, tools and per-run values.
	var fields bytes.Buffer
	fields.WriteString("{")
	var names []string
	for _, f := range orderedKeys(main.Body) {
		switch f {
		case "model", "messages", "system", "input", "instructions", "tools", "stream":
			continue
		case "metadata", "prompt_cache_key", "user", "previous_response_id":
			cal.PerRun = append(cal.PerRun, "field "+f)
			continue
		}
		if len(names) > 0 {
			fields.WriteString(",")
		}
		k, _ := json.Marshal(f) // a string always marshals
		fmt.Fprintf(&fields, "\n  %s: %s", k, top[f])
		names = append(names, f)
	}
	fields.WriteString("\n}\n")
	if err := write(harness.CalibratedFields, fields.Bytes()); err != nil {
		return nil, err
	}
	cal.Written = append(cal.Written, Written{File: harness.CalibratedFields,
		From: fmt.Sprintf("request %d (main): fields %s", main.Seq, strings.Join(names, ", "))})

	cb, _ := json.MarshalIndent(cal, "", "  ") // plain data always marshals
	if err := write("calibration.json", append(cb, '\n')); err != nil {
		return nil, err
	}
	if _, err := prompts.Load(dir); err != nil {
		return cal, fmt.Errorf("calibrate: the overlay written to %s does not load: %w", dir, err)
	}
	return cal, nil
}

// write writes the slot's template(s) for text and checks that rendering
// them with the captured values gives text back.
func (s slot) write(hdir, text string, c *Capture, model string) ([]Written, []Unmapped, error) {
	vals, un := s.values(c, text, model)
	body := text
	if s.prefix != "" || s.suffix != "" {
		if !strings.HasPrefix(body, s.prefix) || !strings.HasSuffix(body, s.suffix) || len(body) < len(s.prefix)+len(s.suffix) {
			un = append(un, Unmapped{What: s.template + ".tmpl", Why: fmt.Sprintf(
				"the harness wraps it in %q…%q but the captured text is not wrapped so", s.prefix, s.suffix)})
		} else {
			body = body[len(s.prefix) : len(body)-len(s.suffix)]
		}
	}
	type piece struct{ name, text string }
	pieces := []piece{{s.template, body}}
	if s.splitBefore != "" {
		if cut := strings.Index(body, s.splitBefore); cut >= 0 {
			pieces = []piece{{s.template, body[:cut]}, {s.splitRest, body[cut+1:]}}
		} else {
			un = append(un, Unmapped{What: s.splitRest + ".tmpl", Why: fmt.Sprintf("%q not found; left as the embedded template", s.splitBefore)})
			vals = nil
		}
	} else if s.splitRest != "" {
		at := len(body)
		for _, v := range vals {
			if i := strings.Index(body, v.Literal); v.Literal != "" && i >= 0 && i < at {
				at = i
			}
		}
		cut := strings.LastIndex(body[:at], "\n\n")
		if cut < 0 {
			un = append(un, Unmapped{What: s.splitRest + ".tmpl", Why: "no paragraph with per-turn values found; left as the embedded template"})
			vals = nil
		} else {
			pieces = []piece{{s.template, body[:cut]}, {s.splitRest, body[cut+2:]}}
		}
	}
	var out []Written
	for _, p := range pieces {
		text := p.text
		var listingVal []Value
		if _, ok := s.fields["listing"]; ok {
			if i, j, found := listingSpan(text, c.Cwd); found {
				listingVal = []Value{{Kind: "listing", Field: s.fields["listing"], Literal: text[i:j]}}
			} else {
				un = append(un, Unmapped{What: p.name + ".tmpl: directory listing", Why: "no listing of the workspace found in the text"})
			}
		}
		tmpl, used := templatize(text, append(listingVal, vals...))
		if s.splitRest != "" && p.name == s.template {
			used = nil // the first part holds no per-turn value (cut before it)
		}
		if err := os.WriteFile(filepath.Join(hdir, p.name+".tmpl"), []byte(tmpl), 0o644); err != nil {
			return nil, nil, fmt.Errorf("calibrate: %w", err)
		}
		if got, err := renderWith(tmpl, used); err != nil || got != text {
			un = append(un, Unmapped{What: p.name + ".tmpl", Why: fmt.Sprintf("the template does not render back to the captured text (%v)", err)})
		}
		out = append(out, Written{File: p.name + ".tmpl", Templated: used})
	}
	return out, un, nil
}

// kernelRelease is this machine's kernel release ("6.8.0-45-generic"),
// which agents write into their environment texts; "" where it cannot be
// read (not Linux).
func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// renderWith renders a template with each used value's literal as its
// field.
func renderWith(tmpl string, vals []Value) (string, error) {
	data := map[string]any{}
	for _, v := range vals {
		data[v.Field] = v.Literal
	}
	return renderText(tmpl, data)
}

func safeName(s string) string {
	r := strings.NewReplacer("[", "-", "]", "", ".", "-", "/", "-")
	return strings.Trim(r.Replace(s), "-")
}

// toolNames lists the tool names of a tools array (any wire).
func toolNames(raw json.RawMessage) []string {
	var tools []map[string]any
	_ = json.Unmarshal(raw, &tools) // not an array: none
	var out []string
	for _, t := range tools {
		name, _ := t["name"].(string)
		if fn, ok := t["function"].(map[string]any); ok {
			name, _ = fn["name"].(string)
		}
		out = append(out, name)
	}
	return out
}

// orderedKeys lists a JSON object's keys in order.
func orderedKeys(obj []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}
