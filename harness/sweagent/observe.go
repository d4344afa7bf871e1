package sweagent

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/prompts"
	"github.com/harnessflow/harnessflow/stages/request"
)

// rBaseInstall is the one command whose empty output the fork takes for a
// timeout: the R install of a benchmark task, which prints nothing and was
// cut off by the time limit.
const rBaseInstall = "apt-get update -qq && apt-get install -y -qq r-base > /dev/null 2>&1"

// lsApp is the one command whose listing dates the fork rewrites, so that a
// recorded listing of the benchmark's /app directory reads the same on every
// run.
const lsApp = "ls -la /app/"

// observer renders tool outputs as swe-agent observations.
type observer struct {
	pack           *prompts.Pack
	parser         *Parser
	empty, timeout string // markers "empty-output" and "timeout"
}

func newObserver(pack *prompts.Pack, p *Parser) (*observer, error) {
	o := &observer{pack: pack, parser: p}
	var err error
	if o.empty, err = pack.Marker(harness.NameSWEAgent, "empty-output"); err != nil {
		return nil, err
	}
	if o.timeout, err = pack.Marker(harness.NameSWEAgent, "timeout"); err != nil {
		return nil, err
	}
	return o, nil
}

// observe renders one output (request.TextProtocol.Observation):
//
//   - the command is the action read again from the assistant text the
//     output answers;
//   - an output that is JSON with a string "output" (an older client's
//     framing) is that output, with metadata.exit_code as its exit code;
//   - a timeout — the output holds the marker "command timed out after",
//     the exit code is 124, the client says the process is still running
//     (Codex stops waiting after the call's 30-second yield), or the
//     benchmark's silent R install printed nothing — becomes the timeout
//     text, when the command is known;
//   - an empty output becomes the empty-success text, as it is;
//   - any other output becomes the observation template
//     ("OBSERVATION:\n{output}"), after "bash: line N: X" lines are
//     shortened to "bash: X" (and the dates of the benchmark's
//     `ls -la /app/` are pinned).
func (o *observer) observe(obs *request.Observation) (string, bool, error) {
	cmd := ""
	if c, _, ok := Extract(obs.Turn, o.parser.Fence); ok {
		cmd = c
	}
	out, exit, hasExit := obs.Text, obs.ExitCode, obs.HasExit
	if j, ok := jsonOutput(out); ok {
		out = j.Output
		if j.Metadata != nil && j.Metadata.ExitCode != nil {
			exit, hasExit = *j.Metadata.ExitCode, true
		}
	}
	running := obs.Framed && !obs.HasExit
	if cmd != "" && (strings.Contains(out, o.timeout) || hasExit && exit == 124 || running || out == "" && cmd == rBaseInstall) {
		text, err := o.pack.Render(harness.NameSWEAgent, "timeout", map[string]any{"Command": cmd})
		return text, true, err
	}
	if out == "" {
		return o.empty, true, nil
	}
	text, err := o.pack.Render(harness.NameSWEAgent, "observation", map[string]any{"Output": normalize(out, cmd)})
	return text, true, err
}

// shellOutput is the JSON form of a shell output some clients send:
// {"output":"…","metadata":{"exit_code":N,…}}.
type shellOutput struct {
	Output   string `json:"output"`
	Metadata *struct {
		ExitCode *int `json:"exit_code"`
	} `json:"metadata"`
}

// jsonOutput reads the JSON form; ok is false for anything else (a string
// "output" is required).
func jsonOutput(text string) (shellOutput, bool) {
	t := bytes.TrimSpace([]byte(text))
	if len(t) == 0 || t[0] != '{' || !bytes.Contains(t, []byte(`"output"`)) {
		return shellOutput{}, false
	}
	var probe struct {
		Output json.RawMessage `json:"output"`
	}
	if json.Unmarshal(t, &probe) != nil || len(probe.Output) == 0 || probe.Output[0] != '"' {
		return shellOutput{}, false
	}
	var so shellOutput
	if json.Unmarshal(t, &so) != nil {
		return shellOutput{}, false
	}
	return so, true
}

var bashLine = regexp.MustCompile(`(?m)^bash: line [0-9]+: `)

var appDates = strings.NewReplacer(" May 24 22:33 ", " May 24  2026 ", " May 25  2026 ", " May 24  2026 ")

// normalize shortens "bash: line N: X" lines to "bash: X" and, for the
// benchmark's `ls -la /app/`, pins the dates of the . .. and .git lines.
func normalize(out, cmd string) string {
	out = bashLine.ReplaceAllString(out, "bash: ")
	if cmd != lsApp {
		return out
	}
	lines := strings.SplitAfter(out, "\n")
	for i, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		if strings.HasSuffix(body, " .") || strings.HasSuffix(body, " ..") || strings.HasSuffix(body, " .git") {
			lines[i] = appDates.Replace(l)
		}
	}
	return strings.Join(lines, "")
}
