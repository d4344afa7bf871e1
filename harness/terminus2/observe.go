package terminus2

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/harness/bridge"
)

// OutputLimit caps an observation, in bytes: longer ones keep their first
// and last halves.
const OutputLimit = 10000

// ScreenRows is the height of the terminal.
const ScreenRows = 40

// ScreenCols is the width of the terminal.
const ScreenCols = 160

// terminal is what one shell call reported: the sections the tmux script
// prints between its markers.
type terminal struct {
	previous, current, screen string
}

// unwrapOutput is the text a shell call printed: the client's framing
// taken off (Codex's "Chunk ID: …\nOutput:\n…") and a JSON {"output": …}
// reduced to its output.
func unwrapOutput(text string) string {
	if out, _, _, ok := bridge.UnwrapOutput(text); ok {
		text = out
	}
	return unwrapJSONOutput(text)
}

// unwrapJSONOutput reduces a JSON {"output": …} (a client that reports its
// shell output as JSON) to its output; other text is returned as it is.
func unwrapJSONOutput(text string) string {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "{") {
		var o struct {
			Output *string `json:"output"`
		}
		if json.Unmarshal([]byte(t), &o) == nil && o.Output != nil {
			text = *o.Output
		}
	}
	return text
}

// section returns the text between a start marker (and the line break
// after it) and an end marker.
func section(text, start, end string) (string, bool) {
	i := strings.Index(text, start)
	if i < 0 {
		return "", false
	}
	rest := strings.TrimPrefix(text[i+len(start):], "\n")
	j := strings.Index(rest, end)
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

// parseTerminal finds the three sections of a shell call's output.
func (t *texts) parseTerminal(text string) (terminal, bool) {
	var term terminal
	var ok1, ok2, ok3 bool
	term.previous, ok1 = section(text, t.m[markerPrevStart], t.m[markerPrevEnd])
	term.current, ok2 = section(text, t.m[markerCurStart], t.m[markerCurEnd])
	term.screen, ok3 = section(text, t.m[markerScreenStart], t.m[markerScreenEnd])
	return term, ok1 && ok2 && ok3
}

// newContent is the part of the current buffer after the previous one, as
// the original finds it: when the previous buffer (stripped) occurs in the
// current one, the new content starts at the previous buffer's last line
// (a one-line buffer: at the buffer itself). The original takes that
// line's offset inside the previous buffer; here it is counted from where
// the buffer was found, which is the same whenever the current buffer
// starts with the previous one.
func newContent(previous, current string) (string, bool) {
	pb := pyStrip(previous)
	at := strings.Index(current, pb)
	if at < 0 {
		return "", false
	}
	if nl := strings.LastIndexByte(pb, '\n'); nl >= 0 {
		at += nl
	}
	return current[at:], true
}

// observation is what the model sees of a shell call's output: the new
// terminal output ("New Terminal Output:\n…") or, when nothing new
// appeared, the screen ("Current Terminal Screen:\n…"); an output without
// the sections is shown as its last 40 lines. Either is limited to
// OutputLimit bytes. text is the output unwrapped (unwrapOutput).
func (t *texts) observation(text string) (string, error) {
	term, ok := t.parseTerminal(text)
	if !ok {
		return limitOutput(screenHeight(text)), nil
	}
	var s string
	var err error
	if nc, found := newContent(term.previous, term.current); found && pyStrip(nc) != "" {
		s, err = t.render(tmplOutputNew, map[string]any{"Output": nc})
	} else {
		s, err = t.render(tmplOutputScreen, map[string]any{"Screen": term.screen})
	}
	if err != nil {
		return "", err
	}
	return limitOutput(s), nil
}

// screenOf is the screen a shell call's output (unwrapped) shows: its
// screen section, or its last 40 lines.
func (t *texts) screenOf(text string) string {
	if term, ok := t.parseTerminal(text); ok {
		return term.screen
	}
	return screenHeight(text)
}

// screenHeight is the last ScreenRows lines of text (trailing blanks of
// each line removed), padded with empty lines to ScreenRows.
func screenHeight(text string) string {
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" && strings.HasSuffix(text, "\n") {
		lines = lines[:n-1] // the line break ending the text starts no line
	}
	if len(lines) > ScreenRows {
		lines = lines[len(lines)-ScreenRows:]
	}
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(strings.TrimSuffix(l, "\r"), unicode.IsSpace)
	}
	missing := ScreenRows - len(lines)
	return strings.Join(lines, "\n") + "\n" + strings.Repeat("\n", missing)
}

// limitOutput keeps the first and last OutputLimit/2 bytes of a longer
// text (cut at character boundaries) around a note of what was left out.
func limitOutput(s string) string {
	if len(s) <= OutputLimit {
		return s
	}
	half := OutputLimit / 2
	head := half
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - half
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	omitted := len(s) - head - (len(s) - tail)
	return fmt.Sprintf("%s\n[... output limited to %d bytes; %d interior bytes omitted ...]\n%s", s[:head], OutputLimit, omitted, s[tail:])
}
