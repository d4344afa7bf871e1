package terminus2

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Variant names the reply format the model is asked for.
type Variant string

// The reply formats of terminus-2.
const (
	// VariantJSON is the default format: one JSON object with analysis,
	// plan, commands and task_complete.
	VariantJSON Variant = "json"
	// VariantXML is the <response> format with <analysis>, <plan>,
	// <commands> of <keystrokes duration="…"> and <task_complete>.
	VariantXML Variant = "xml"
)

// ParseVariant reads a variant name; "" is VariantJSON.
func ParseVariant(s string) (Variant, error) {
	switch v := Variant(strings.ToLower(strings.TrimSpace(s))); v {
	case "", VariantJSON:
		return VariantJSON, nil
	case VariantXML:
		return v, nil
	}
	return "", fmt.Errorf("terminus-2: unknown reply format %q: want json or xml", s)
}

// Command is one batch of keystrokes and how long to wait after sending it.
type Command struct {
	// Keystrokes are typed into the terminal as they are; a string that
	// is a whole tmux key name ("C-c", "Escape") is that key.
	Keystrokes string `json:"keystrokes"`
	// Duration is the wait in seconds, 1.0 when the model gave none or an
	// unusable one, limited to 0..MaxDuration.
	Duration float64 `json:"duration"`
}

// MaxDuration caps the wait of one command, in seconds.
const MaxDuration = 60

// DefaultDuration is the wait of a command that does not give one.
const DefaultDuration = 1.0

// Result is what the parser makes of one model reply. Error is empty when
// the reply is usable; Warnings are shown to the model either way.
type Result struct {
	Commands     []Command
	TaskComplete bool
	Analysis     string
	Plan         string
	Error        string
	Warnings     []string
}

// OK reports whether the reply parsed.
func (r *Result) OK() bool { return r.Error == "" }

// Warning is the warnings as the model sees them: "- a\n- b", or "".
func (r *Result) Warning() string {
	if len(r.Warnings) == 0 {
		return ""
	}
	return "- " + strings.Join(r.Warnings, "\n- ")
}

// MarshalJSON gives {"commands":[…],"task_complete":b,"warnings":[…]} for
// a usable reply and {"error":"…","warnings":[…]} otherwise.
func (r Result) MarshalJSON() ([]byte, error) {
	w := r.Warnings
	if w == nil {
		w = []string{}
	}
	if r.Error != "" {
		return json.Marshal(struct {
			Error    string   `json:"error"`
			Warnings []string `json:"warnings"`
		}{r.Error, w})
	}
	c := r.Commands
	if c == nil {
		c = []Command{}
	}
	return json.Marshal(struct {
		Commands     []Command `json:"commands"`
		TaskComplete bool      `json:"task_complete"`
		Warnings     []string  `json:"warnings"`
	}{c, r.TaskComplete, w})
}

// Parse runs a reply through the parser of variant.
func Parse(reply string, v Variant) Result {
	if v == VariantXML {
		return ParseXML(reply)
	}
	return ParseJSON(reply)
}

// effectiveDuration limits a requested wait to 0..MaxDuration; NaN is the
// default wait.
func effectiveDuration(d float64) float64 {
	switch {
	case math.IsNaN(d):
		return DefaultDuration
	case d < 0:
		return 0
	case d > MaxDuration:
		return MaxDuration
	}
	return d
}

const newlineWarning = "Command %d should end with newline when followed by another command." +
	" Without one, its keystrokes and the next command's end up on the same line."

// ---------------------------------------------------------------------------
// JSON

// ParseJSON parses a reply in the JSON format the way the original
// terminus-2 parser does:
//
//   - the first balanced {…} is the object (a brace counter that skips the
//     character after every backslash and ignores braces inside strings);
//     text before or after it is a warning, no object at all an error;
//   - the object is read by a decoder that behaves like Python's json.loads
//     (strict strings, NaN and Infinity accepted, Python's error messages);
//   - missing analysis, plan and commands are reported together; a
//     non-string analysis or plan, a misplaced field and an odd
//     task_complete are warnings; commands must be a list;
//   - task_complete is true for true, for the strings "true", "1" and "yes"
//     in any case, and for any other value Python finds true;
//   - each command needs a string "keystrokes"; a missing or non-numeric
//     duration is 1.0 with a warning, unknown keys and a missing final
//     newline before another command are warnings; when the task is
//     complete, a bad command is a warning and no command runs;
//   - a reply that fails is tried again once closing braces are added (for
//     replies cut short) and then as the first small JSON object found in
//     the text; the first that parses wins, with an AUTO-CORRECTED warning.
//
// Durations are limited to 0..60 seconds (NaN: 1.0). Unlike the Codex fork this
// follows, missing fields come together, decoder errors keep Python's
// detail, and the duration, field, newline and order warnings are there.
func ParseJSON(reply string) Result {
	r := tryJSON(reply)
	if r.OK() {
		return r
	}
	for _, fix := range jsonFixes {
		fixed, ok := fix.apply(reply, r.Error)
		if !ok {
			continue
		}
		if c := tryJSON(fixed); c.OK() {
			c.Warnings = append([]string{"AUTO-CORRECTED: " + fix.name + " - please fix this in future responses"}, c.Warnings...)
			return c
		}
	}
	return r
}

type jsonFix struct {
	name  string
	apply func(reply, err string) (string, bool)
}

var jsonFixes = []jsonFix{
	{"Fixed incomplete JSON by adding missing closing brace", fixIncomplete},
	{"Extracted JSON from mixed content", fixMixed},
}

// fixIncomplete appends the closing braces the reply lacks (it counts every
// brace of the text, and never adds a ']').
func fixIncomplete(reply, err string) (string, bool) {
	if !strings.Contains(err, "Invalid JSON") && !strings.Contains(err, "Expecting") &&
		!strings.Contains(err, "Unterminated") && !strings.Contains(err, "No valid JSON found") {
		return reply, false
	}
	n := strings.Count(reply, "{") - strings.Count(reply, "}")
	if n <= 0 {
		return reply, false
	}
	return reply + strings.Repeat("}", n), true
}

// mixedObject finds brace-balanced objects with at most one level of
// nesting (and no braces inside their strings).
var mixedObject = regexp.MustCompile(`\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}`)

// fixMixed returns the first such object that decodes.
func fixMixed(reply, _ string) (string, bool) {
	for _, m := range mixedObject.FindAllString(reply, -1) {
		if _, err := pyLoads(m); err == nil {
			return m, true
		}
	}
	return reply, false
}

// extractJSON finds the first balanced top-level object of a reply.
func extractJSON(reply string) (content string, warnings []string, found bool) {
	start, depth := -1, 0
	inString, skip := false, false
	for i, c := range reply {
		switch {
		case skip:
			skip = false
			continue
		case c == '\\':
			skip = true
			continue
		case c == '"':
			inString = !inString
			continue
		case inString:
			continue
		case c == '{':
			if depth == 0 {
				start = i
			}
			depth++
		case c == '}':
			depth--
			if depth == 0 && start >= 0 {
				end := i + 1
				if pyStrip(reply[:start]) != "" {
					warnings = append(warnings, "Extra text detected before JSON object")
				}
				if pyStrip(reply[end:]) != "" {
					warnings = append(warnings, "Extra text detected after JSON object")
				}
				return reply[start:end], warnings, true
			}
		}
	}
	return "", nil, false
}

var requiredFields = [...]string{"analysis", "plan", "commands"}

func tryJSON(reply string) Result {
	content, warnings, found := extractJSON(reply)
	if !found {
		return Result{Error: "No valid JSON found in response", Warnings: []string{"No valid JSON object found"}}
	}
	v, err := pyLoads(content)
	if err != nil {
		msg := "Invalid JSON: " + err.Error()
		if rs := []rune(content); len(rs) < 200 {
			msg += " | Content: " + pyRepr(content)
		} else {
			msg += " | Content preview: " + pyRepr(string(rs[:100])) + "..."
		}
		return Result{Error: msg, Warnings: warnings}
	}
	obj, ok := v.(*pyObject)
	if !ok {
		return Result{Error: "Response must be a JSON object", Warnings: warnings}
	}
	var missing []string
	for _, f := range requiredFields {
		if _, ok := obj.get(f); !ok {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return Result{Error: "Missing required fields: " + strings.Join(missing, ", "), Warnings: warnings}
	}
	analysis, ok := obj.vals["analysis"].(string)
	if !ok {
		warnings = append(warnings, "Field 'analysis' should be a string")
	}
	plan, ok := obj.vals["plan"].(string)
	if !ok {
		warnings = append(warnings, "Field 'plan' should be a string")
	}
	list, ok := obj.vals["commands"].([]any)
	if !ok {
		return Result{Error: "Field 'commands' must be an array", Warnings: warnings}
	}
	warnings = checkFieldOrder(obj, content, warnings)
	complete := false
	if tc, has := obj.get("task_complete"); has {
		switch x := tc.(type) {
		case string:
			switch strings.ToLower(x) {
			case "true", "1", "yes":
				complete = true
			}
		case bool, nil:
			complete = truthy(x)
		default:
			warnings = append(warnings, "Field 'task_complete' should be a boolean or a string")
			complete = truthy(x)
		}
	}
	cmds, cerr := jsonCommands(list, &warnings)
	if cerr != "" {
		if complete {
			return Result{TaskComplete: true, Analysis: analysis, Plan: plan, Warnings: append(warnings, cerr)}
		}
		return Result{Error: cerr, Warnings: warnings}
	}
	return Result{Commands: cmds, TaskComplete: complete, Analysis: analysis, Plan: plan, Warnings: warnings}
}

// checkFieldOrder warns when the required fields, located by the first
// `"field"\s*:` of the text, are out of order.
func checkFieldOrder(obj *pyObject, content string, warnings []string) []string {
	type at struct {
		name string
		pos  int
	}
	var found []at
	for _, f := range requiredFields {
		if _, ok := obj.get(f); !ok {
			continue
		}
		if p := fieldPosition(content, f); p >= 0 {
			found = append(found, at{f, p})
		}
	}
	if len(found) < 2 {
		return warnings
	}
	expected := make([]string, len(found))
	for i, f := range found {
		expected[i] = f.name
	}
	sorted := append([]at(nil), found...)
	for i := 1; i < len(sorted); i++ { // insertion sort, stable
		for j := i; j > 0 && sorted[j].pos < sorted[j-1].pos; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	actual := make([]string, len(sorted))
	same := true
	for i, f := range sorted {
		actual[i] = f.name
		same = same && actual[i] == expected[i]
	}
	if same {
		return warnings
	}
	return append(warnings, fmt.Sprintf("Fields appear in wrong order. Found: %s, expected: %s",
		strings.Join(actual, " → "), strings.Join(expected, " → ")))
}

// fieldPosition is the byte offset of the first `"name"` followed by white
// space and a colon, or -1.
func fieldPosition(s, name string) int {
	quoted := `"` + name + `"`
	for off := 0; ; {
		i := strings.Index(s[off:], quoted)
		if i < 0 {
			return -1
		}
		p := off + i
		rest := strings.TrimLeftFunc(s[p+len(quoted):], isPySpace)
		if strings.HasPrefix(rest, ":") {
			return p
		}
		off = p + 1
	}
}

// jsonCommands reads the command list; a non-empty string is the error of
// the first bad command.
func jsonCommands(list []any, warnings *[]string) ([]Command, string) {
	cmds := make([]Command, 0, len(list))
	for i, item := range list {
		n := i + 1
		obj, ok := item.(*pyObject)
		if !ok {
			return nil, fmt.Sprintf("Command %d must be an object", n)
		}
		kv, ok := obj.get("keystrokes")
		if !ok {
			return nil, fmt.Sprintf("Command %d missing required 'keystrokes' field", n)
		}
		keys, ok := kv.(string)
		if !ok {
			return nil, fmt.Sprintf("Command %d 'keystrokes' must be a string", n)
		}
		d := DefaultDuration
		if dv, ok := obj.get("duration"); ok {
			switch x := dv.(type) {
			case float64:
				d = x
			case bool: // Python's bool is an int
				d = 0
				if x {
					d = 1
				}
			default:
				*warnings = append(*warnings, fmt.Sprintf("Command %d: Invalid duration value, using default 1.0", n))
			}
		} else {
			*warnings = append(*warnings, fmt.Sprintf("Command %d: Missing duration field, using default 1.0", n))
		}
		var unknown []string
		for _, k := range obj.keys {
			if k != "keystrokes" && k != "duration" {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			*warnings = append(*warnings, fmt.Sprintf("Command %d: Unknown fields: %s", n, strings.Join(unknown, ", ")))
		}
		if i < len(list)-1 && !strings.HasSuffix(keys, "\n") {
			*warnings = append(*warnings, fmt.Sprintf(newlineWarning, n))
		}
		cmds = append(cmds, Command{Keystrokes: keys, Duration: effectiveDuration(d)})
	}
	return cmds, ""
}

// ---------------------------------------------------------------------------
// XML

// KeystrokesOpen opens a command block of the XML variant, in the replies
// it reads and in the example of its initial prompt.
const KeystrokesOpen = "<keystrokes"

// pySpaceClass is the set of characters Python's \s matches in a str
// pattern (Go's \s is ASCII only and lacks \v).
const pySpaceClass = `[\t\n\x0b\f\r \x1c-\x1f\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`

var (
	xmlSections   = [...]string{"analysis", "plan", "commands", "task_complete"}
	xmlBlock      = map[string]*regexp.Regexp{}
	xmlSelfClosed = map[string]*regexp.Regexp{}
	xmlComplete   = regexp.MustCompile(`(?i)<task_complete>` + pySpaceClass + `*true` + pySpaceClass + `*</task_complete>`)
	xmlKeystrokes = regexp.MustCompile(`(?s)` + KeystrokesOpen + `([^>]*)>(.*?)</keystrokes>`)
	xmlDuration   = regexp.MustCompile(`duration` + pySpaceClass + `*=` + pySpaceClass + `*["']([^"']*)["']`)
	xmlDurationEq = regexp.MustCompile(`duration` + pySpaceClass + `*=`)
	xmlSingleQ    = regexp.MustCompile(`duration` + pySpaceClass + `*=` + pySpaceClass + `*'`)
	xmlAttrName   = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_:.-]*)` + pySpaceClass + `*=`)
	xmlOpenTag    = regexp.MustCompile(`<([A-Za-z_][A-Za-z0-9_.-]*)`)
	xmlEntities   = [...][2]string{{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}, {"&quot;", `"`}, {"&apos;", "'"}}
)

func init() {
	for _, s := range xmlSections {
		xmlBlock[s] = regexp.MustCompile(`(?s)<` + s + `>(.*?)</` + s + `>`)
		xmlSelfClosed[s] = regexp.MustCompile(`<` + s + pySpaceClass + `*/>`)
	}
}

// ParseXML parses a reply in the XML format the way the original
// terminus-2 XML parser does:
//
//   - the reply must hold <response>; without </response> the rest of the
//     text is used (silently). Text around the block is a warning, and so
//     is a second <response> block (only when text follows </response>);
//   - <analysis>, <plan>, <commands> and <task_complete> are read with a
//     non-greedy match (the first of each; a self-closing tag is empty);
//     missing analysis or plan, unknown tags, repeated sections and a wrong
//     order are warnings;
//   - an empty <commands> is a success with a warning, a missing one an
//     error unless the task is complete;
//   - each <keystrokes duration="…">…</keystrokes> is one command, its text
//     used as it is: entities such as &lt; are not decoded (each one found is
//     a warning), and so is a literal \r\n. A missing, unquoted or bad
//     duration is 1.0 with warnings; single quotes, unknown attributes and a
//     missing final newline before another command are warnings;
//   - the task is complete only for <task_complete>true</task_complete>
//     (any case, white space around the word).
//
// The original's one auto-fix (inserting a missing </response>) never
// applies, since no error names its trigger, and is left out. The warning
// texts are ours except where they are the original's protocol strings.
func ParseXML(reply string) Result {
	var warnings []string
	start := strings.Index(reply, "<response>")
	if start >= 0 {
		if pyStrip(reply[:start]) != "" {
			warnings = append(warnings, "Extra text detected before <response> tag")
		}
		if end := strings.Index(reply, "</response>"); end >= 0 {
			if pyStrip(reply[end+len("</response>"):]) != "" {
				warnings = append(warnings, "Extra text detected after </response> tag")
				if n := strings.Count(reply, "<response>"); n > 1 {
					warnings = append(warnings, fmt.Sprintf(
						"IMPORTANT: Only issue one <response> block at a time. You issued %d and only the first was executed.", n))
				}
			}
		}
	}
	content := ""
	if start >= 0 {
		rest := reply[start+len("<response>"):]
		if end := strings.Index(rest, "</response>"); end >= 0 {
			rest = rest[:end]
		}
		content = pyStrip(rest)
	}
	if content == "" {
		return Result{Error: "No <response> tag found", Warnings: warnings}
	}
	sections, warnings := xmlReadSections(content, warnings)
	complete := xmlComplete.MatchString(content)
	cmds, has := sections["commands"]
	r := Result{TaskComplete: complete, Analysis: sections["analysis"], Plan: sections["plan"]}
	if cmds == "" {
		switch {
		case has && !complete:
			warnings = append(warnings, "Commands section is empty; not taking any action."+
				" To wait, send <keystrokes duration=\"10\"></keystrokes>; to let a command finish, wait again.")
		case !has && !complete:
			return Result{Error: "Missing <commands> section", Warnings: warnings}
		}
		r.Warnings = warnings
		return r
	}
	r.Commands, warnings = xmlCommands(cmds, warnings)
	r.Warnings = warnings
	return r
}

// xmlReadSections reads the four sections of the response body and warns
// about missing, unknown, repeated and misplaced ones.
func xmlReadSections(content string, warnings []string) (map[string]string, []string) {
	sections := map[string]string{}
	pos := map[string]int{}
	for _, s := range xmlSections {
		if m := xmlBlock[s].FindStringSubmatchIndex(content); m != nil {
			sections[s] = pyStrip(content[m[2]:m[3]])
			pos[s] = m[0]
		} else if m := xmlSelfClosed[s].FindStringIndex(content); m != nil {
			sections[s] = ""
			pos[s] = m[0]
		}
	}
	for _, s := range [...]string{"analysis", "plan"} {
		if _, ok := sections[s]; !ok {
			warnings = append(warnings, fmt.Sprintf("Missing <%s> section", s))
		}
	}
	for _, s := range xmlSections {
		n := strings.Count(content, "<"+s+">")
		switch {
		case n <= 1:
		case s == "commands":
			warnings = append(warnings, fmt.Sprintf(
				"IMPORTANT: Only issue one <commands> block at a time. You issued %d and only the first was executed.", n))
		default:
			warnings = append(warnings, fmt.Sprintf("Multiple <%s> sections found; only the first one is read", s))
		}
	}
	outside := content
	for _, s := range xmlSections {
		outside = xmlBlock[s].ReplaceAllString(outside, "")
		outside = xmlSelfClosed[s].ReplaceAllString(outside, "")
	}
	seen := map[string]bool{}
	for _, m := range xmlOpenTag.FindAllStringSubmatch(outside, -1) {
		tag := m[1]
		if seen[tag] || tag == "response" {
			continue
		}
		seen[tag] = true
		known := false
		for _, s := range xmlSections {
			known = known || tag == s
		}
		if !known {
			warnings = append(warnings, fmt.Sprintf(
				"Unknown tag <%s> outside the known sections; only <analysis>, <plan>, <commands> and <task_complete> are read", tag))
		}
	}
	var order, want []string
	for _, s := range [...]string{"analysis", "plan", "commands"} {
		if _, ok := pos[s]; ok {
			want = append(want, s)
			order = append(order, s)
		}
	}
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && pos[order[j]] < pos[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		warnings = append(warnings, fmt.Sprintf("Sections appear in wrong order. Found: %s, expected: %s",
			strings.Join(order, " → "), strings.Join(want, " → ")))
	}
	return sections, warnings
}

// xmlCommands reads the keystrokes blocks of the commands section.
func xmlCommands(section string, warnings []string) ([]Command, []string) {
	matches := xmlKeystrokes.FindAllStringSubmatch(section, -1)
	cmds := make([]Command, 0, len(matches))
	for i, m := range matches {
		n, attrs, keys := i+1, m[1], m[2]
		d := DefaultDuration
		if dm := xmlDuration.FindStringSubmatch(attrs); dm != nil {
			if xmlSingleQ.MatchString(attrs) {
				warnings = append(warnings, fmt.Sprintf("Command %d: write the duration in double quotes, e.g. duration=\"1.0\"", n))
			}
			if f, ok := pyFloat(dm[1]); ok {
				d = f
			} else {
				warnings = append(warnings, fmt.Sprintf("Command %d: Invalid duration value %s, using default 1.0", n, pyRepr(dm[1])))
			}
		} else {
			if xmlDurationEq.MatchString(attrs) {
				warnings = append(warnings, fmt.Sprintf("Command %d: the duration attribute should be quoted, e.g. duration=\"1.0\"", n))
			}
			warnings = append(warnings, fmt.Sprintf("Command %d: Missing duration attribute, using default 1.0", n))
		}
		var unknown []string
		for _, am := range xmlAttrName.FindAllStringSubmatch(attrs, -1) {
			if am[1] != "duration" {
				unknown = append(unknown, am[1])
			}
		}
		if len(unknown) > 0 {
			warnings = append(warnings, fmt.Sprintf("Command %d: Unknown attributes: %s (only duration is read)", n, strings.Join(unknown, ", ")))
		}
		if i < len(matches)-1 && !strings.HasSuffix(keys, "\n") {
			warnings = append(warnings, fmt.Sprintf(newlineWarning, n))
		}
		cmds = append(cmds, Command{Keystrokes: keys, Duration: effectiveDuration(d)})
	}
	for _, e := range xmlEntities {
		if strings.Contains(section, e[0]) {
			warnings = append(warnings, fmt.Sprintf(
				"%s is typed as those %d characters, not as %s: write the character itself unless you mean the entity", e[0], len(e[0]), e[1]))
		}
	}
	if strings.Contains(section, `\r\n`) {
		warnings = append(warnings, `the text \r\n is typed literally; end a line with a real newline instead`)
	}
	return cmds, warnings
}

// pyFloat parses a number as Python's float() does: surrounding white
// space, a sign, inf/infinity/nan in any case and underscores between
// digits are accepted; hexadecimal is not.
func pyFloat(s string) (float64, bool) {
	s = pyStrip(s)
	if s == "" || strings.ContainsAny(s, "xXpP") && !isInfName(s) {
		return 0, false
	}
	if strings.Contains(s, "_") {
		for i := 0; i < len(s); i++ {
			if s[i] == '_' && (i == 0 || i == len(s)-1 || !isDigitByte(s[i-1]) || !isDigitByte(s[i+1])) {
				return 0, false
			}
		}
		s = strings.ReplaceAll(s, "_", "")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

func isInfName(s string) bool {
	t := strings.ToLower(strings.TrimLeft(s, "+-"))
	return t == "inf" || t == "infinity" || t == "nan"
}
