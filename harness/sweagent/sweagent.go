// Package sweagent registers the "swe-agent" harness: SWE-agent's way of
// working, where the model gets no tools and writes one command per reply
// as text, and the harness runs it and answers with an observation.
//
// # Request
//
// The body is {"model","messages","temperature":1.0,"top_p":0.95}: no
// tools, and no "stream" key, so the upstream answers with one JSON body
// (the unary path); ToolKinds is empty. The messages are, built by the
// shared text-protocol renderer (request.TextProtocol):
//
//   - a one-line system prompt of our own (prompts/pack/swe-agent/system);
//   - the task: of the user messages before the first assistant turn or
//     tool output, the last one that is not one of the engine's notices
//     (permissions, skills, plugins, collaboration mode, the environment
//     block) is the change request, sent inside the instance prompt
//     (instance.tmpl: <uploaded_files>{repo}</uploaded_files>, then the
//     request in <pr_description>, then how to work), {repo} being the
//     client's working directory or ".";
//   - each assistant message as its text; the calls the harness made from
//     it are not shown (the text holds the command);
//   - each tool output as a user message, the observation: the client's
//     exec framing (Codex's "Chunk ID: …\nOutput:\n…") is taken off first,
//     then SWE-agent's rules apply (see observer.observe): a timeout gives
//     the timeout text, an empty output the empty-success text
//     ("Your command ran successfully and did not produce any output."),
//     anything else "OBSERVATION:\n{output}";
//   - later user messages as they are; developer messages and reasoning
//     are dropped;
//   - an assistant message answered by the format correction is dropped,
//     with the correction, once a later assistant message exists.
//
// # Response
//
// The post stage ([Post]) reads the command of every assistant message
// (Extract): the pseudo-XML forms first (<tool_invoke>, <invoke
// name="bash">, <execute_bash>), then the fenced blocks. A shell command
// becomes a local_shell_call `bash -lc CMD` with the 30-second timeout,
// which harness.bridge hands to the client's exec_command; a reply without
// a command gets one follow-up user message (our format correction: a
// DISCUSSION, then exactly one fenced command) and completed gets
// end_turn:false, so the client asks again.
//
// SWE-agent's own tools are commands too; through a client they become:
//
//   - str_replace_editor …: the equivalent shell command, generated and
//     quoted here (EditorCommand: view, create, str_replace and insert
//     map to reading, writing and editing commands of package bridge;
//     undo_edit cannot be kept without state and fails with a message).
//     The command runs through the client's shell like any other;
//   - submit: ends the task. Nothing is added after the assistant message,
//     so it is the final answer and the client's turn ends there. The
//     original asks for a review first (its submit prints a checklist and
//     the marker "Run the submit command again to confirm.", and only the
//     second submit submits); here the client's work tree is the
//     submission, so the first submit ends. A submit after a tool output
//     that shows the review marker ends the run too (the fork's rule).
//
// A client without any shell tool gets the fork's items unchanged: the
// custom_tool_call swe_agent_command for an editor command or a submit
// before the review.
//
// # Fences: SWE-agent's rule, not the fork's
//
// The Codex fork whose swe-agent harness this package reimplements (the
// source of its request shape, its post stage and its follow-up texts'
// structure — "the fork" below) takes the text between the first ``` and
// the next one, anywhere in the reply, and drops its first line only when
// it is bash, sh or shell. This package reads fences as SWE-agent's own
// thought/action parser does (FenceLast): a fence is a line starting with
// ``` at column 0; fences nest (a labelled fence inside an open block opens
// an inner one); the action is the last top-level block that closed, and
// any label is left out (a ```python block runs in bash). So several blocks
// are not an error — the last one wins, prose between fences that are not
// at the start of a line is not a command, and a command holding a nested
// fenced block (a heredoc with ``` lines) stays whole. The fork's rule is
// the variant "fork" (a model table entry {"variants":{"swe-agent":"fork"}},
// or `harnessflow parse --harness swe-agent --variant fork`).
//
// Also different from the original: no blocklist of interactive commands,
// no limit on format retries (the client decides), and `exit` is an
// ordinary command.
package sweagent

import (
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/request"
)

func init() { harness.MustRegister(Spec()) }

// Spec returns the swe-agent harness.
func Spec() harness.Spec {
	return harness.Spec{
		Name:        harness.NameSWEAgent,
		Description: "SWE-agent: no tools; one fenced command per reply, run through the client's shell; observations as user messages",
		Wires:       []harness.Wire{harness.WireChat},
		Request:     RequestGraph,
		Post:        PostNode,
		Parse:       Parse,
		Variants: []harness.VariantSpec{{Name: "fence", Values: []string{VariantFork},
			Doc: "fork reads the first fenced block of a reply, as the Codex fork does; the default reads the last, as SWE-agent does"}},
	}
}

// Sampling settings of the body.
const (
	temperature = "1.0"
	topP        = "0.95"
)

// RequestGraph returns the swe-agent request graph for env.Wire (chat
// only): request.system → request.history (text protocol) →
// request.options → request.provider → request.encode.
func RequestGraph(env *harness.Env) (*pipeline.Graph, error) {
	tp, err := TextProtocol(env)
	if err != nil {
		return nil, err
	}
	system, err := env.Prompts.Render(harness.NameSWEAgent, "system", nil)
	if err != nil {
		return nil, err
	}
	system = strings.TrimRight(system, "\n")
	opts := env.RequestOptions()
	return pipeline.New("request.swe-agent",
		request.FixedSystemNode(system),
		request.TextHistoryNode(tp),
		request.ChatBodyNode(request.ChatBody{Extra: map[string]string{"temperature": temperature, "top_p": topP}},
			"model, temperature 1.0, top_p 0.95; no tools, no stream (unary)"),
		request.ProviderNode(opts),
		request.ChatEncodeNode(request.ChatStyle{}),
	)
}

// TextProtocol returns the history rendering of swe-agent for env (see the
// package doc).
func TextProtocol(env *harness.Env) (*request.TextProtocol, error) {
	p, err := NewParser(env.Prompts, env.Model.Variant(harness.NameSWEAgent))
	if err != nil {
		return nil, err
	}
	obs, err := newObserver(env.Prompts, p)
	if err != nil {
		return nil, err
	}
	correction, err := env.Prompts.Render(harness.NameSWEAgent, "format_error", nil)
	if err != nil {
		return nil, err
	}
	repo := env.Workspace.Cwd
	if repo == "" {
		repo = "."
	}
	pack := env.Prompts
	task := func(pr string) (string, error) {
		text, err := pack.Render(harness.NameSWEAgent, "instance", map[string]any{"Repo": repo, "PR": pr})
		return strings.TrimRight(text, "\n"), err
	}
	if _, err := task(""); err != nil {
		return nil, err
	}
	return &request.TextProtocol{
		Task:        request.TaskCollect,
		Candidate:   request.IsTaskCandidate,
		RenderTask:  task,
		Developer:   request.DeveloperDrop,
		Unwrap:      bridge.UnwrapOutput,
		Observation: obs.observe,
		Retry:       func(text string) bool { return text == correction },
	}, nil
}
