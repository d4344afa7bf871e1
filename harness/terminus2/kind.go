package terminus2

import (
	"path"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/harness/internal/textreply"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// Kind is what a request asks the model for. terminus-2 hands a long task
// over to a fresh agent in three extra exchanges — a summary, the new
// agent's questions, the old agent's answers — and the kind of each
// request is read from the prompt that starts it.
type Kind uint8

// The request kinds.
const (
	// KindAction is the working loop: the model answers in the JSON (or
	// XML) format and its commands run in the terminal.
	KindAction Kind = iota
	// KindSummary asks the agent to summarize its work for the next one
	// (the last user text is the summary request).
	KindSummary
	// KindQuestions shows the new agent the summary and asks for its
	// questions.
	KindQuestions
	// KindAnswerQuestions asks the old agent to answer those questions.
	KindAnswerQuestions
	// KindHandoff gives the new agent the answers; it then works as in
	// KindAction.
	KindHandoff
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindAction:
		return "action"
	case KindSummary:
		return "summary"
	case KindQuestions:
		return "questions"
	case KindAnswerQuestions:
		return "answer_questions"
	case KindHandoff:
		return "handoff"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// RequestKind is the kind of a request and what goes with it.
type RequestKind struct {
	Kind Kind
	// Workdir is the terminal's current directory (Action, Handoff).
	Workdir string
	// Instruction is the original task (Summary).
	Instruction string
	// Screen is what the terminal shows now (Summary).
	Screen string
	// Questions are the new agent's questions (AnswerQuestions).
	Questions string
}

type entryKind uint8

const (
	entryUser entryKind = iota
	entryAssistant
	entryOutput
)

// entry is one step of the conversation the kinds are read from: a user
// or assistant text, or the output of a shell call (unwrapped).
type entry struct {
	kind entryKind
	text string
	item int // index of the history item
}

// conversation is the analysed history of one request.
type conversation struct {
	t       *texts
	items   []protocol.ResponseItem
	entries []entry
	// home is the directory a session starts in when nothing in the
	// history says otherwise: the client's working directory, else /app.
	home string
	// nextCall numbers the next shell call.
	nextCall int
	kind     RequestKind
}

// defaultDir is the terminal's directory when the client gives none.
const defaultDir = "/app"

// notProblemStatement start the engine's notices that never hold the task.
var notProblemStatement = [...]string{
	"<permissions instructions>", "<skills_instructions>", "<environment_context>",
	"<plugins_instructions>", "<collaboration_mode>",
}

// userEntry reports whether a user message is the user's (or the
// harness's) words rather than the client's context: contextual fragments
// and the engine's notices are left out.
func userEntry(m *protocol.Message, text string) bool {
	if request.IsContextualUser(m) {
		return false
	}
	t := strings.TrimLeft(text, " \t\r\n")
	for _, p := range notProblemStatement {
		if len(t) >= len(p) && strings.EqualFold(t[:len(p)], p) {
			return false
		}
	}
	for i := range m.Content {
		c := &m.Content[i]
		if (c.Type == protocol.ContentInputText || c.Type == protocol.ContentOutputText) && request.IsContextualDeveloperText(c.Text) {
			return false
		}
	}
	return true
}

// analyze reads the entries of a history and the kind of its request.
// cwd is the client's working directory ("" when unknown).
func analyze(t *texts, items []protocol.ResponseItem, cwd string) *conversation {
	c := &conversation{t: t, items: items, home: cwd}
	if c.home == "" {
		c.home = defaultDir
	}
	for i, it := range items {
		switch v := it.(type) {
		case *protocol.Message:
			if v == nil {
				continue
			}
			text := textreply.Text(v.Content)
			if text == "" {
				continue
			}
			switch v.Role {
			case protocol.RoleUser:
				if userEntry(v, text) {
					c.entries = append(c.entries, entry{entryUser, text, i})
				}
			case protocol.RoleAssistant:
				c.entries = append(c.entries, entry{entryAssistant, text, i})
			}
		case *protocol.FunctionCallOutput:
			if v != nil {
				c.entries = append(c.entries, entry{entryOutput, unwrapOutput(outputText(v.Output)), i})
			}
		case *protocol.CustomToolCallOutput:
			if v != nil {
				c.entries = append(c.entries, entry{entryOutput, unwrapOutput(outputText(v.Output)), i})
			}
		case *protocol.FunctionCall:
			if v != nil {
				c.countCall(v.CallID)
			}
		case *protocol.LocalShellCall:
			if v != nil && v.CallID != nil {
				c.countCall(*v.CallID)
			}
		case *protocol.CustomToolCall:
			if v != nil {
				c.countCall(v.CallID)
			}
		}
	}
	c.kind = c.detect()
	return c
}

func outputText(p protocol.FunctionCallOutputPayload) string {
	s, _ := p.ToText()
	return s
}

// countCall keeps nextCall past the number of a shell call of the history.
func (c *conversation) countCall(id string) {
	if n, err := strconv.Atoi(strings.TrimPrefix(id, CallIDPrefix)); err == nil && n >= 0 && strings.HasPrefix(id, CallIDPrefix) {
		c.nextCall = max(c.nextCall, n+1)
	}
}

// lastUser is the index of the last user entry, or -1.
func lastIndex(es []entry, from int, match func(entry) bool) int {
	for i := min(from, len(es)) - 1; i >= 0; i-- {
		if match(es[i]) {
			return i
		}
	}
	return -1
}

func (c *conversation) isUser(marker string) func(entry) bool {
	return func(e entry) bool { return e.kind == entryUser && c.t.starts(e.text, marker) }
}

func isUserEntry(e entry) bool      { return e.kind == entryUser }
func isAssistantEntry(e entry) bool { return e.kind == entryAssistant }

// firstAfter is the index of the first entry in es[from:to] that matches,
// or -1.
func firstAfter(es []entry, from, to int, match func(entry) bool) int {
	for i := max(from, 0); i < min(to, len(es)); i++ {
		if match(es[i]) {
			return i
		}
	}
	return -1
}

// detect reads the kind of the request from the last user text L:
//
//  1. L starts the questions prompt → Questions; the answer request →
//     AnswerQuestions (the questions are L after its first line and blank
//     line); the handoff prompt with no assistant reply after it →
//     Handoff;
//  2. L is the summary request: answered already (an assistant follows
//     it: its answer is the summary) → Questions, else → Summary (the task
//     is L's "Original Task:" part, else the first user text);
//  3. otherwise → Action.
//
// The Codex fork this reimplements also turns a request into Questions when an earlier summary
// request was answered, or when the conversation ends with an assistant
// reply that has no commands; both would misread the working loop after a
// handoff, and are left out.
func (c *conversation) detect() RequestKind {
	es := c.entries
	li := lastIndex(es, len(es), isUserEntry)
	if li >= 0 {
		l := es[li].text
		answered := firstAfter(es, li+1, len(es), isAssistantEntry) >= 0
		switch {
		case c.t.starts(l, markerQuestions):
			return RequestKind{Kind: KindQuestions}
		case c.t.starts(l, markerAnswerRequest):
			return RequestKind{Kind: KindAnswerQuestions, Questions: afterFirstLine(l)}
		case c.t.starts(l, markerAnswers) && !answered:
			return RequestKind{Kind: KindHandoff, Workdir: c.workdir(es)}
		case c.t.starts(l, markerSummary) && answered:
			return RequestKind{Kind: KindQuestions}
		case c.t.starts(l, markerSummary):
			instr, ok := c.embeddedTask(l)
			if !ok {
				instr = c.originalInstruction(es[:li])
			}
			return RequestKind{Kind: KindSummary, Instruction: instr, Screen: c.screen(es)}
		}
	}
	return RequestKind{Kind: KindAction, Workdir: c.workdir(es)}
}

// afterFirstLine is the questions of an answer request: the text after its
// first line and the blank line after it (the whole text when it has no
// such line).
func afterFirstLine(s string) string {
	i := strings.IndexByte(s, '\n')
	if i < 0 || !strings.HasPrefix(s[i:], "\n\n") {
		return s
	}
	return s[i+2:]
}

// embeddedTask is the task named after "Original Task:" in a text, up to a
// double blank line, else up to a blank line before a bold heading, else to
// the end.
func (c *conversation) embeddedTask(s string) (string, bool) {
	m := c.t.marker(markerOriginalTask)
	i := strings.Index(s, m)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(m):]
	end := strings.Index(rest, "\n\n\n")
	if end < 0 {
		end = strings.Index(rest, "\n\n**")
	}
	if end < 0 {
		end = len(rest)
	}
	task := strings.TrimSpace(rest[:end])
	return task, task != ""
}

// originalInstruction is the task: the first user text of es (its
// "Original Task:" part when it has one), or "".
func (c *conversation) originalInstruction(es []entry) string {
	i := firstAfter(es, 0, len(es), isUserEntry)
	if i < 0 {
		return ""
	}
	if task, ok := c.embeddedTask(es[i].text); ok {
		return task
	}
	return es[i].text
}

// screen is what the terminal shows after the last shell call of es, or
// the initial screen.
func (c *conversation) screen(es []entry) string {
	if i := lastIndex(es, len(es), func(e entry) bool { return e.kind == entryOutput }); i >= 0 {
		return c.t.screenOf(es[i].text)
	}
	return c.t.initialState(c.home)
}

// workdir is the terminal's current directory: the one the last prompt
// line of the last shell call's screen shows, else the one that replaying
// the cd commands of the history gives, starting from home.
func (c *conversation) workdir(es []entry) string {
	if i := lastIndex(es, len(es), func(e entry) bool { return e.kind == entryOutput }); i >= 0 {
		if d := c.promptDir(c.t.screenOf(es[i].text)); d != "" {
			return d
		}
	}
	dir, prev := c.home, ""
	var pending []Command
	for _, e := range es {
		switch e.kind {
		case entryAssistant:
			r := Parse(e.text, c.t.variant)
			pending = r.Commands
		case entryOutput:
			for _, cmd := range pending {
				if next, ok := cdTarget(cmd.Keystrokes, dir, prev); ok && next != dir {
					dir, prev = next, dir
				}
			}
			pending = nil
		}
	}
	return dir
}

// promptDir is the directory of the last prompt line (root@HOST:DIR#) of a
// screen, or "".
func (c *conversation) promptDir(screen string) string {
	p := c.t.promptPrefix()
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		rest, ok := strings.CutPrefix(lines[i], p)
		if !ok {
			continue
		}
		if j := strings.LastIndexByte(rest, '#'); j >= 0 {
			if d := strings.TrimSpace(rest[:j]); d != "" {
				return d
			}
		}
	}
	return ""
}

// cdTarget is where "cd X" (the whole keystrokes, as shell words) leads
// from dir; "cd -" goes back to prev. A bare cd and ~ paths need the
// client's home directory, which the proxy does not know: they change
// nothing.
func cdTarget(keys, dir, prev string) (string, bool) {
	words, ok := shellWords(strings.TrimSpace(keys))
	if !ok || len(words) != 2 || words[0] != "cd" {
		return "", false
	}
	switch t := words[1]; {
	case t == "-":
		if prev == "" {
			return "", false
		}
		return prev, true
	case t == "" || strings.HasPrefix(t, "~"):
		return "", false
	case strings.HasPrefix(t, "/"):
		return path.Clean(t), true
	default:
		return path.Join(dir, t), true
	}
}

// shellWords splits a simple command line into words (quotes and
// backslashes as in sh); ok is false for anything with unbalanced quotes.
func shellWords(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			in = true
		case ch == '\\':
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
			in = true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, true
}
