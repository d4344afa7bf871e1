package terminus2

import (
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/request"
)

// Temperature is the sampling temperature of every terminus-2 request.
const Temperature = "0.7"

// RequestGraph returns the terminus-2 request graph for env.Wire (chat
// only): request.history (the conversation of the request's kind) →
// request.options (model and temperature) → request.provider →
// request.encode. There is no system message, no tools and no "stream"
// (the answer is one JSON body).
func RequestGraph(env *harness.Env) (*pipeline.Graph, error) {
	return requestGraph(env, DefaultOptions())
}

func requestGraph(env *harness.Env, o Options) (*pipeline.Graph, error) {
	o, err := optionsFor(env, o)
	if err != nil {
		return nil, err
	}
	t, err := newTexts(env.Prompts, o.Variant)
	if err != nil {
		return nil, err
	}
	opts := env.RequestOptions()
	cwd := env.Workspace.Cwd
	return pipeline.New("request.terminus-2",
		pipeline.StageNode(request.NodeHistory, request.Update(func(s *request.Shaping) error {
			msgs, _, err := analyze(t, s.Request.Input, cwd).messages()
			if err != nil {
				return err
			}
			s.Transcript = append(s.Transcript, msgs...)
			return nil
		}), pipeline.Describe("history → the conversation of the request's kind (action, summary, questions, answers, handoff)")),
		request.ChatBodyNode(request.ChatBody{Extra: map[string]string{"temperature": Temperature}},
			"model, temperature 0.7; no stream, no tools"),
		request.ProviderNode(opts),
		request.ChatEncodeNode(request.ChatStyle{}),
	)
}

// initialPrompt is the first user message: the format instructions, the
// task and the terminal as it starts.
func (c *conversation) initialPrompt(instruction string) (string, error) {
	return c.t.render(tmplInitial, map[string]any{"Instruction": instruction, "State": c.t.initialState(c.home)})
}

func user(text string) request.Message {
	return request.Message{Role: request.RoleUser, Content: request.TextParts(text)}
}

func assistant(text string) request.Message {
	return request.Message{Role: request.RoleAssistant, Content: request.TextParts(text)}
}

// messages are the upstream messages of the request's kind, and whether a
// completion waits for its confirmation (Action).
//
//   - Action: the working conversation (chat).
//   - Summary: the working conversation before the summary request, then
//     the summary request (our text).
//   - Questions: the questions prompt alone, the conversation of the new
//     agent (when the summary request was answered but no questions prompt
//     followed, it is made from that answer).
//   - AnswerQuestions: the working conversation before the summary
//     request, the summary request and its answer, then the answer request.
//   - Handoff: the initial prompt, the questions prompt, the questions,
//     and the handoff prompt with the answers.
func (c *conversation) messages() ([]request.Message, bool, error) {
	es := c.entries
	li := lastIndex(es, len(es), isUserEntry)
	switch c.kind.Kind {
	case KindSummary:
		base, _, err := c.chat(0, es[li].item)
		if err != nil {
			return nil, false, err
		}
		s, err := c.t.render(tmplSummary, map[string]any{"Instruction": c.kind.Instruction})
		return append(base, user(s)), false, err
	case KindQuestions:
		if c.t.starts(es[li].text, markerQuestions) {
			return []request.Message{user(es[li].text)}, false, nil
		}
		instr, ok := c.embeddedTask(es[li].text)
		if !ok {
			instr = c.originalInstruction(es[:li])
		}
		a := firstAfter(es, li+1, len(es), isAssistantEntry)
		s, err := c.t.render(tmplQuestion, map[string]any{"Instruction": instr, "Summary": es[a].text, "Screen": c.screen(es[:li])})
		return []request.Message{user(s)}, false, err
	case KindAnswerQuestions:
		sp := lastIndex(es, li, c.isUser(markerSummary))
		if sp < 0 {
			init, err := c.initialPrompt(c.originalInstruction(es))
			return []request.Message{user(init), user(es[li].text)}, false, err
		}
		base, _, err := c.chat(0, es[sp].item)
		if err != nil {
			return nil, false, err
		}
		instr, ok := c.embeddedTask(es[sp].text)
		if !ok {
			instr = c.originalInstruction(es[:sp])
		}
		s, err := c.t.render(tmplSummary, map[string]any{"Instruction": instr})
		if err != nil {
			return nil, false, err
		}
		out := append(base, user(s))
		if a := firstAfter(es, sp+1, li, isAssistantEntry); a >= 0 {
			out = append(out, assistant(es[a].text))
		}
		return append(out, user(es[li].text)), false, nil
	case KindHandoff:
		init, err := c.initialPrompt(c.originalInstruction(es))
		if err != nil {
			return nil, false, err
		}
		out := []request.Message{user(init)}
		if q := lastIndex(es, li, c.isUser(markerQuestions)); q >= 0 {
			out = append(out, user(es[q].text))
			if a := firstAfter(es, q+1, li, isAssistantEntry); a >= 0 {
				out = append(out, assistant(es[a].text))
			}
		}
		return append(out, user(es[li].text)), false, nil
	}
	return c.chat(0, len(c.items))
}

// entriesIn returns the entries of the history items lo..hi-1.
func (c *conversation) entriesIn(lo, hi int) []entry {
	i := 0
	for i < len(c.entries) && c.entries[i].item < lo {
		i++
	}
	j := i
	for j < len(c.entries) && c.entries[j].item < hi {
		j++
	}
	return c.entries[i:j]
}

// chat is the working conversation of the history items lo..hi-1. After a
// handoff that the new agent has answered, it starts over as the original
// does: the initial prompt, the questions prompt, the questions, the
// handoff prompt, then the new agent's work.
func (c *conversation) chat(lo, hi int) ([]request.Message, bool, error) {
	es := c.entriesIn(lo, hi)
	if h := lastIndex(es, len(es), c.isUser(markerAnswers)); h >= 0 && firstAfter(es, h+1, len(es), isAssistantEntry) >= 0 {
		if q := lastIndex(es, h, c.isUser(markerQuestions)); q >= 0 {
			if qa := firstAfter(es, q+1, h, isAssistantEntry); qa >= 0 {
				init, err := c.initialPrompt(c.originalInstruction(es))
				if err != nil {
					return nil, false, err
				}
				out := []request.Message{user(init), user(es[q].text), assistant(es[qa].text), user(es[h].text)}
				return c.action(out, es[h].item+1, hi, true)
			}
		}
	}
	return c.action(nil, lo, hi, false)
}

// step is what becomes of one shell output of the working conversation.
type step struct {
	skip    bool   // left out
	warning string // the warnings of the reply it answers, shown first
	confirm bool   // shown as the confirmation question
}

// action renders the working steps of the history items lo..hi-1 after
// out, through the shared text-protocol rendering (request.FlattenText):
//
//   - the user texts before the first assistant reply or shell output are
//     the task; the last of them becomes the initial prompt, sent there
//     (started: it was sent already);
//   - later user texts and assistant replies go as they are;
//   - a shell output becomes a user message with its observation; one that
//     directly follows a parse-error prompt is left out. When the reply it
//     answers had warnings, they come first; when that reply asked to
//     complete the task and nothing waited for a confirmation, the
//     observation is the confirmation question instead (its terminal state
//     is the observation).
//
// The completion state is followed as the original keeps it: a
// confirmation question (asked in a user text or made from an output)
// makes a completion pending; a reply that parses without task_complete
// ends that, and so does the confirming reply; a reply that does not parse
// changes nothing. pending is the state at the end.
func (c *conversation) action(out []request.Message, lo, hi int, started bool) ([]request.Message, bool, error) {
	es := c.entriesIn(lo, hi)
	if len(es) == 0 {
		return out, false, nil // nothing to render, not even the task
	}
	steps, pending := c.steps(es, started)
	next := 0
	tp := &request.TextProtocol{
		Task:           request.TaskFirst,
		SkipContextual: true,
		Developer:      request.DeveloperDrop,
		Unwrap:         bridge.UnwrapOutput,
		Observation: func(o *request.Observation) (string, bool, error) {
			if next >= len(steps) {
				return "", false, fmt.Errorf("terminus-2: output %d has no step", next)
			}
			st := steps[next]
			next++
			if st.skip {
				return "", false, nil
			}
			obs, err := c.t.observation(unwrapJSONOutput(o.Text))
			switch {
			case err != nil:
			case st.confirm:
				obs, err = c.t.render(tmplConfirm, map[string]any{"State": obs})
			case st.warning != "":
				obs, err = c.t.render(tmplWarnings, map[string]any{"Warning": st.warning, "Output": obs})
			}
			return obs, err == nil, err
		},
	}
	if !started {
		tp.Task = request.TaskCollect
		tp.Candidate = request.IsTaskCandidate
		tp.RenderTask = c.initialPrompt
	}
	msgs, err := request.FlattenText(out, c.items[lo:hi], tp)
	if err != nil {
		return nil, false, fmt.Errorf("terminus-2: history: %w", err)
	}
	return msgs, pending, nil
}

// steps follows the working steps es (see action) and says what becomes
// of each shell output, and whether a completion is pending at the end.
func (c *conversation) steps(es []entry, started bool) ([]step, bool) {
	confirmQ := c.t.marker(markerConfirm)
	var steps []step
	skip, pending, confirmNext := false, false, false
	var last *Result
	for _, e := range es {
		switch e.kind {
		case entryUser:
			if !started {
				continue
			}
			skip = c.t.starts(e.text, markerParseError)
			if strings.Contains(e.text, confirmQ) {
				pending = true
			}
			last, confirmNext = nil, false
		case entryAssistant:
			started = true
			r := Parse(e.text, c.t.variant)
			last, skip, confirmNext = &r, false, false
			if r.OK() {
				switch {
				case !r.TaskComplete:
					pending = false
				case pending:
					pending = false // confirmed: the episode is over
				default:
					confirmNext = true
				}
			}
		case entryOutput:
			started = true
			st := step{skip: skip}
			skip = false
			if !st.skip {
				switch {
				case confirmNext:
					st.confirm = true
					pending = true
				case last != nil && last.OK():
					st.warning = last.Warning()
				}
				last, confirmNext = nil, false
			}
			steps = append(steps, st)
		}
	}
	return steps, pending
}
