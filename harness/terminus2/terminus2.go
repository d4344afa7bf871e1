// Package terminus2 registers the "terminus-2" harness: the terminal agent
// of terminal-bench and harbor. The model never calls tools. It answers
// every turn with one JSON object (or, in the XML variant, one <response>
// block):
//
//	{"analysis": "…", "plan": "…",
//	 "commands": [{"keystrokes": "ls -la\n", "duration": 0.1}],
//	 "task_complete": false}
//
// and the harness types the keystrokes into a tmux session, waits the
// durations and shows the model what the terminal printed.
//
// # Request
//
// The chat body is {"messages","model","temperature":0.7}: no system
// message, no tools, no "stream" (one JSON answer comes back). What the
// messages are depends on the request kind, read from the last user text by
// the marker phrases of prompts/pack/terminus-2/markers.json (the prompts
// that carry them render them from the same file):
//
//   - Action (the working loop): the task becomes the initial prompt (the
//     format instructions, the task, the empty terminal); assistant replies
//     go as they are; each shell output becomes a user message with the
//     observation: "New Terminal Output:" and what appeared since the last
//     batch, or "Current Terminal Screen:" and the screen when nothing did,
//     limited to 10000 bytes; the reply's parser warnings come first, and
//     the output of a first completion becomes the confirmation question;
//   - Summary, Questions, AnswerQuestions, Handoff: the hand-off of a long
//     task to a fresh agent — the old agent summarizes, the new one asks
//     questions, the old one answers, the new one continues from
//     [initial prompt, questions prompt, questions, answers].
//
// # Response
//
// The harness.post node reads the reply of each answer (see postStage): a
// batch of commands becomes one local_shell_call (harness.bridge hands it
// to the client's shell tool, Codex's exec_command) that runs a bash script
// driving tmux (see texts.script); a reply that does not parse gets the
// parse-error prompt as a follow-up user message; a completion is confirmed
// once before the turn ends; the hand-off steps get their next prompt as
// follow-ups.
//
// # Variants
//
// A model-capabilities entry picks them ({"variants":{"terminus-2":"xml"}},
// see ParseOptions): the reply format, json (default) or xml (the
// original's XML parser and prompts), and the execution mode, tmux
// (default: the client's machine needs tmux; the session runs on a tmux
// server of its own) or plain (each typed line runs with bash, for
// machines without tmux; no interactive programs). `harnessflow parse
// --harness terminus-2 --variant json|xml` runs one reply through a parser.
//
// # Where this follows the original rather than the Codex fork
//
// The Codex fork whose terminus-2 harness this reimplements (in Rust, on
// codex-rs) differs from the original terminus-2 in places; here the
// original wins:
//
//   - parsing: see ParseJSON and ParseXML (Python's JSON decoder and its
//     messages, all missing fields at once, the original's warnings and
//     auto-fixes);
//   - a first completion runs the reply's commands before the confirmation
//     question, whose terminal state is their output (or the last screen);
//     the fork drops the commands and shows an empty terminal;
//   - a completion stops waiting for its confirmation when a later reply
//     parses without task_complete (the fork keeps it pending for good once
//     a confirmation question was ever asked);
//   - an empty command list looks at the screen and the loop goes on (the
//     fork ends the turn);
//   - parser warnings of a reply are shown with its output;
//   - a reply cut at the output limit runs nothing and says so;
//   - after a hand-off, the working conversation starts over from the
//     hand-off (the fork replays everything and may take the old summary
//     for a new one); the summary and answer requests see the whole
//     working conversation, observations included;
//   - keystrokes that are a whole tmux key name are that key (the fork
//     knows only C-c and C-d).
//
// Through the proxy the client's working directory (from the request's
// environment context) replaces the container's /app: the initial screen
// shows it and a new session starts in it. The prompt line shows $PWD (a
// full path, never ~). The summary request is written clean (the fork's
// copy carries stray string-concatenation fragments).
package terminus2

import (
	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
)

// Name is the harness's configuration name.
const Name = harness.NameTerminus2

func init() { harness.MustRegister(Spec()) }

// Options choose between the variants of the harness.
type Options struct {
	// Variant is the reply format the model is asked for.
	Variant Variant
	// Exec is how the keystrokes reach a terminal.
	Exec Exec
}

// DefaultOptions returns the options of the registered harness: the JSON
// format, typed into tmux.
func DefaultOptions() Options { return Options{Variant: VariantJSON, Exec: ExecTmux} }

// optionsFor returns the options of a turn: o, unless the model's entry in
// the model-capabilities table picks a variant for terminus-2 (see
// ParseOptions).
func optionsFor(env *harness.Env, o Options) (Options, error) {
	if v := env.Model.Variant(Name); v != "" {
		return ParseOptions(v)
	}
	return o, nil
}

// Spec returns the terminus-2 harness with the default options.
func Spec() harness.Spec { return SpecWith(DefaultOptions()) }

// SpecWith returns the terminus-2 harness with options o (for embedding it
// with the XML format; the registry holds the default).
func SpecWith(o Options) harness.Spec {
	return harness.Spec{
		Name:        Name,
		Description: "the terminal-bench agent: JSON replies of keystrokes, typed into tmux through the client's shell",
		Wires:       []harness.Wire{harness.WireChat},
		Request:     func(env *harness.Env) (*pipeline.Graph, error) { return requestGraph(env, o) },
		Post:        func(env *harness.Env) (pipeline.Node, error) { return postNode(env, o) },
		Parse:       parseReply,
		Variants: []harness.VariantSpec{
			{Name: "format", Values: []string{string(VariantJSON), string(VariantXML)}, Default: string(VariantJSON),
				Doc: "the reply format the prompts ask for and the parser reads"},
			{Name: "exec", Values: []string{string(ExecTmux), string(ExecPlain)}, Default: string(ExecTmux),
				Doc: "tmux types the keystrokes into a tmux session on the client's machine; plain runs each line with bash, for machines without tmux"},
		},
	}
}

// parseReply is Spec.Parse: the reply through the parser of the variant
// ("" or "json", "xml").
func parseReply(reply, variant string) (any, error) {
	v, err := ParseVariant(variant)
	if err != nil {
		return nil, err
	}
	return Parse(reply, v), nil
}
