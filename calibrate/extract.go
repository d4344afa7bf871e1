package calibrate

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"
	"time"
)

// Text is one text of a captured request body.
type Text struct {
	// Where is its JSON location, e.g. "system[2]" or "messages[0].content[1]".
	Where string `json:"where"`
	// Role is "system" (system prompt, system or developer message) or
	// "user" (a part of a user message before the first answer).
	Role string `json:"role"`
	// Task is set on the user part that holds the task.
	Task bool   `json:"task,omitempty"`
	Text string `json:"-"`
}

// Texts lists the fixed texts of a request body of a wire: the system
// prompt(s), system/developer messages, and the parts of the user
// messages before the first answer (where agents put their reminders:
// in the first one, or as messages of their own after it; the part holding
// task is marked).
func Texts(wire string, body []byte, task string) []Text {
	var b map[string]json.RawMessage
	if json.Unmarshal(body, &b) != nil {
		return nil
	}
	var out []Text
	add := func(where, role string, raw json.RawMessage) {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out = append(out, Text{Where: where, Role: role, Text: s})
			return
		}
		var parts []map[string]any
		if json.Unmarshal(raw, &parts) != nil {
			return
		}
		for j, p := range parts {
			if t, ok := p["text"].(string); ok {
				out = append(out, Text{Where: fmt.Sprintf("%s[%d]", where, j), Role: role, Text: t})
			}
		}
	}
	var list []map[string]json.RawMessage
	key := "messages"
	switch wire {
	case WireMessages:
		if raw, ok := b["system"]; ok {
			add("system", "system", raw)
		}
	case WireResponses:
		if raw, ok := b["instructions"]; ok {
			add("instructions", "system", raw)
		}
		key = "input"
	}
	_ = json.Unmarshal(b[key], &list)
	// The user messages before the first answer: the first one, and the
	// ones an agent sends right after it (Kimi Code's reminders).
	answered := false
	for i, m := range list {
		var role string
		_ = json.Unmarshal(m["role"], &role)
		where := fmt.Sprintf("%s[%d].content", key, i)
		switch {
		case role == "system" || role == "developer":
			add(where, "system", m["content"])
		case role == "user" && !answered:
			add(where, "user", m["content"])
		case role == "assistant" || role == "tool" || m["type"] != nil && role == "":
			answered = true
		}
	}
	if task != "" {
		for i := range out {
			if out[i].Role == "user" && strings.Contains(out[i].Text, task) {
				out[i].Task = true
			}
		}
	}
	return out
}

// Value is a per-turn value found in a captured text and the template
// field it becomes.
type Value struct {
	// Kind is what it is: cwd, date, platform, shell, model, model_name
	// (Claude Code's display name of the model, "Opus 5.5"), listing.
	Kind string `json:"kind"`
	// Field is the template field, e.g. "cwd" or "Cwd".
	Field string `json:"field"`
	// Literal is the captured value.
	Literal string `json:"value"`
	// Word: only where the literal stands as a value after ": ".
	Word bool `json:"-"`
}

// escapeTemplate makes literal text safe inside a text/template.
func escapeTemplate(s string) string {
	return strings.ReplaceAll(s, "{{", `{{"{{"}}`)
}

// templatize turns text into a template: every occurrence of a value's
// literal (longest first) becomes {{.Field}}, the rest is escaped. It
// returns the template and the values used.
func templatize(text string, vals []Value) (string, []Value) {
	type hit struct {
		at, end int
		v       Value
	}
	sorted := append([]Value(nil), vals...)
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i].Literal) > len(sorted[j].Literal) })
	var hits []hit
	taken := make([]bool, len(text))
	for _, v := range sorted {
		if v.Literal == "" {
			continue
		}
		for from := 0; ; {
			i := strings.Index(text[from:], v.Literal)
			if i < 0 {
				break
			}
			at, end := from+i, from+i+len(v.Literal)
			from = end
			if v.Word && !(at >= 2 && text[at-2:at] == ": " && (end == len(text) || !isWordByte(text[end]))) {
				continue
			}
			free := true
			for k := at; k < end; k++ {
				if taken[k] {
					free = false
					break
				}
			}
			if !free {
				continue
			}
			for k := at; k < end; k++ {
				taken[k] = true
			}
			hits = append(hits, hit{at, end, v})
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].at < hits[j].at })
	var b strings.Builder
	var used []Value
	seen := map[string]bool{}
	pos := 0
	for _, h := range hits {
		b.WriteString(escapeTemplate(text[pos:h.at]))
		b.WriteString("{{." + h.v.Field + "}}")
		pos = h.end
		if !seen[h.v.Kind] {
			seen[h.v.Kind] = true
			used = append(used, h.v)
		}
	}
	b.WriteString(escapeTemplate(text[pos:]))
	return b.String(), used
}

func isWordByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Date layouts an agent may write its date in.
var dateLayouts = []string{time.DateOnly, "Mon Jan 02 2006", "Mon Jan 2 2006", "Monday, January 2, 2006",
	"January 2, 2006", "1/2/2006", "2006/01/02"}

// foundDate returns the first of the capture's dates, in any layout,
// that text contains: the literal and its layout.
func foundDate(text string, days []string) (string, string) {
	for _, d := range days {
		t, err := time.Parse(time.DateOnly, d)
		if err != nil {
			continue
		}
		for _, l := range dateLayouts {
			if s := t.Format(l); strings.Contains(text, s) {
				return s, l
			}
		}
	}
	return "", ""
}

// listingRe matches a directory listing of the scratch workspace: the
// line naming the cwd with a slash, then the lines up to the one naming
// the workspace file (built per capture).
func listingSpan(text, cwd string) (int, int, bool) {
	head := cwd + "/"
	i := strings.Index(text, head+"\n")
	if i < 0 {
		return 0, 0, false
	}
	rest := text[i:]
	j := strings.Index(rest, WorkspaceFile)
	if j < 0 {
		return 0, 0, false
	}
	end := i + j + len(WorkspaceFile)
	if k := strings.IndexByte(text[end:], '\n'); k >= 0 {
		end += k
	} else {
		end = len(text)
	}
	return i, end, true
}

// perRun finds the per-run values of a capture that could stand in a
// text but have no template field anywhere: the temporary home and root,
// session ids from the headers.
func perRunLiterals(c *Capture) map[string]string {
	m := map[string]string{}
	for _, r := range c.Requests {
		for k, v := range r.Headers {
			if isSessionHeader(k) && len(v) >= 8 {
				m["header "+k] = v
			}
		}
	}
	if c.Root != "" {
		m["temporary root"] = c.Root
	}
	return m
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// isSessionHeader reports whether a header carries a per-run id.
func isSessionHeader(name string) bool {
	name = strings.ToLower(name)
	return strings.Contains(name, "session") || strings.Contains(name, "request-id") ||
		strings.Contains(name, "affinity") || strings.Contains(name, "trace") || strings.HasSuffix(name, "-id")
}

// transportHeaders are set by the HTTP client, not the agent's identity.
var transportHeaders = []string{"host", "content-length", "connection", "accept-encoding", "transfer-encoding",
	"content-type", "accept"}

// shellBase is the shell's name ("bash" for /bin/bash).
func shellBase(shell string) string {
	if shell == "" {
		return ""
	}
	return filepath.Base(shell)
}

// renderText renders a template text as the prompt pack does (missing
// keys are errors).
func renderText(tmpl string, data map[string]any) (string, error) {
	t, err := template.New("t").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}
