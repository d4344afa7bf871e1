package miniswe

import (
	"strings"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// Long outputs are cut as mini-swe-agent cuts them: beyond maxOutput
// characters, the first and the last keepOutput are shown.
const (
	maxOutput  = 10000
	keepOutput = 5000
)

// observer renders tool outputs the way mini-swe-agent shows them to its
// model, and recognises the submission.
type observer struct {
	pack    *prompts.Pack
	submits []string // the sentinels: marker "submit", then "submit-legacy"
}

func newObserver(pack *prompts.Pack) (*observer, error) {
	o := &observer{pack: pack}
	for _, k := range []string{"submit", "submit-legacy"} {
		m, err := pack.Marker(harness.NameMiniSWEAgent, k)
		if err != nil {
			return nil, err
		}
		o.submits = append(o.submits, m)
	}
	return o, nil
}

// render is the observation of one output: the client's exec framing is
// taken off (bridge.UnwrapOutput), then the observation template shows the
// exit code (when known), a note for a process still running, and the
// output — or, beyond 10000 characters, its first and last 5000 with a
// warning.
func (o *observer) render(text string) (string, error) {
	out, code, hasExit, framed := bridge.UnwrapOutput(text)
	data := map[string]any{"HasExit": hasExit, "ReturnCode": code, "Running": framed && !hasExit,
		"Truncated": false, "Output": out}
	if utf8.RuneCountInString(out) > maxOutput {
		head, tail := cutRunes(out, keepOutput)
		data["Truncated"], data["Head"], data["Tail"] = true, head, tail
		data["Elided"] = utf8.RuneCountInString(out) - 2*keepOutput
	} else if out != "" && !strings.HasSuffix(out, "\n") {
		data["Output"] = out + "\n"
	}
	return o.pack.Render(harness.NameMiniSWEAgent, "observation", data)
}

// cutRunes returns the first and the last n runes of s.
func cutRunes(s string, n int) (head, tail string) {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	j := len(s)
	for k := 0; k < n && j > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:j])
		j -= size
	}
	return s[:i], s[j:]
}

// mapOutput is the tool-mode policy's MapOutput: the output becomes its
// rendered observation (content items: their texts joined with "\n").
func (o *observer) mapOutput(out *request.Output) {
	text := out.Text
	if !out.IsText() {
		text = itemsText(out.Items)
	}
	if r, err := o.render(text); err == nil {
		out.Text, out.Items = r, nil
	}
}

// observe is the text-mode TextProtocol.Observation.
func (o *observer) observe(obs *request.Observation) (string, bool, error) {
	text := obs.Output.Text
	if !obs.Output.IsText() {
		text = itemsText(obs.Output.Items)
	}
	r, err := o.render(text)
	return r, true, err
}

func itemsText(items []protocol.FunctionCallOutputContentItem) string {
	var texts []string
	for i := range items {
		if items[i].Type == protocol.ContentInputText {
			texts = append(texts, items[i].Text)
		}
	}
	return strings.Join(texts, "\n")
}

// submitted applies mini-swe-agent's completion rule to the outputs at the
// end of a history (those after its last message): an output whose first
// line, after leading white space, is the sentinel, and whose exit code is
// 0 when the client says one, means the task was submitted; the submission
// is the rest of the output.
func (o *observer) submitted(items []protocol.ResponseItem) (submission string, ok bool) {
	for i := len(items) - 1; i >= 0; i-- {
		if _, isMessage := items[i].(*protocol.Message); isMessage {
			return "", false
		}
		p := request.OutputPayload(items[i])
		if p == nil {
			continue
		}
		text, isText := p.TextContent()
		if !isText {
			text = itemsText(p.Items)
		}
		out, code, hasExit, _ := bridge.UnwrapOutput(text)
		if hasExit && code != 0 {
			continue
		}
		first, rest, _ := strings.Cut(strings.TrimLeft(out, " \t\r\n\v\f"), "\n")
		for _, s := range o.submits {
			if pyStrip(first) == s {
				return rest, true
			}
		}
	}
	return "", false
}

// isSubmit reports whether a command is the submit command alone:
// `echo SENTINEL`, the sentinel possibly quoted.
func (o *observer) isSubmit(cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	for _, s := range o.submits {
		for _, q := range [...]string{s, `"` + s + `"`, "'" + s + "'"} {
			if cmd == "echo "+q {
				return true
			}
		}
	}
	return false
}
