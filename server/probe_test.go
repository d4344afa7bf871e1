package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/all" // every harness of the build, for the shape equality test
	"github.com/harnessflow/harnessflow/harness/native"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// The probe harness exists only in this test binary. Only the names of the
// routing matrix route to a spec of their own (anything else is Other(x),
// served by native), so it is registered under a matrix name with a
// ChatHarness route that no package of the build registers; missingName is
// another such name, for the unknown-harness refusal ("not in this build"). Either is
// "" when the build has registered every name (the tests needing it skip).
var probeName, missingName string

// Probe behaviour, switched by words in the request's instructions.
const (
	wantTitle = "want-title" // shape a title request (plus a query parameter and headers)
	wantUnary = "want-unary" // shape a non-streaming body

	probeFollowup = "Your answer was rejected: answer again without the forbidden word."
	probeTitle    = "Generate a title for this conversation."
)

func init() {
	var free []string
	for _, name := range append([]string{harness.NameLittleCoder, harness.NamePi}, harness.KnownNames()...) {
		route, err := harness.Resolve(harness.WireChat, name)
		if err != nil || route.Kind != harness.RouteChatHarness || route.Harness != name || slices.Contains(free, name) {
			continue
		}
		if _, ok := harness.Lookup(name); !ok {
			free = append(free, name)
		}
	}
	if len(free) > 0 {
		probeName = free[0]
		harness.MustRegister(probeSpec(probeName))
	}
	if len(free) > 1 {
		missingName = free[1]
	}
}

// probeSpec is a chat harness with the native request graph, optionally a
// title request and a unary body, and a harness.post node that withholds an
// assistant answer holding "REJECT" and asks for a follow-up instead.
func probeSpec(name string) harness.Spec {
	return harness.Spec{
		Name:        name,
		Description: "server test probe: native shaping, title requests, REJECT follow-ups",
		Wires:       []harness.Wire{harness.WireChat},
		Request: func(env *harness.Env) (*pipeline.Graph, error) {
			g, err := native.RequestGraph(env.Wire, env.RequestOptions())
			if err != nil {
				return nil, err
			}
			return g.InsertBefore(request.NodeEncode, pipeline.StageNode("probe.extras", request.Update(func(s *request.Shaping) error {
				if strings.Contains(s.Request.Instructions, wantTitle) {
					s.TitleRequest = []byte(`{"model":"` + s.Request.Model + `","messages":[{"role":"user","content":"` + probeTitle + `"}],"stream":true}`)
					s.Query = map[string]string{"beta": "true"}
					s.Headers = map[string]string{"X-Probe": "yes", "Authorization": "Bearer not-the-harness-s-to-set"}
				}
				if strings.Contains(s.Request.Instructions, wantUnary) {
					s.Body.Stream, s.Body.StreamOptions = nil, nil
				}
				return nil
			})))
		},
		Post: func(*harness.Env) (pipeline.Node, error) {
			return pipeline.NewNode(harness.NodePost, func() pipeline.Stage[protocol.ResponseEvent, protocol.ResponseEvent] {
				return &rejecter{}
			}), nil
		},
	}
}

// rejecter holds a round's events until its terminal event. When an
// assistant message says REJECT, nothing of the message leaks: a follow-up
// takes its place and the turn is not ended. When it says NUDGE, the
// message stays and a follow-up comes after it.
type rejecter struct{ held []protocol.ResponseEvent }

func (r *rejecter) Push(_ context.Context, ev protocol.ResponseEvent, emit func(protocol.ResponseEvent)) error {
	if !ev.IsTerminal() {
		r.held = append(r.held, ev)
		return nil
	}
	held := r.held
	r.held = nil
	reject, nudge := ev.Type == protocol.EventCompleted && slices.ContainsFunc(held, saysDone("REJECT")),
		ev.Type == protocol.EventCompleted && slices.ContainsFunc(held, saysDone("NUDGE"))
	if reject || nudge {
		for _, h := range held {
			if nudge || !assistantEvent(h) {
				emit(h)
			}
		}
		for _, f := range harness.FollowupEvents("probe_followup", probeFollowup) {
			emit(f)
		}
		harness.ContinueTurn(&ev)
		emit(ev)
		return nil
	}
	for _, h := range held {
		emit(h)
	}
	emit(ev)
	return nil
}

func (r *rejecter) Finish(_ context.Context, emit func(protocol.ResponseEvent)) error {
	for _, h := range r.held {
		emit(h)
	}
	r.held = nil
	return nil
}

func assistantMessage(item protocol.ResponseItem) (*protocol.Message, bool) {
	m, ok := item.(*protocol.Message)
	return m, ok && m != nil && m.Role == protocol.RoleAssistant
}

func assistantEvent(ev protocol.ResponseEvent) bool {
	if ev.Type == protocol.EventOutputTextDelta {
		return true
	}
	_, ok := assistantMessage(ev.Item)
	return ok && (ev.Type == protocol.EventOutputItemAdded || ev.Type == protocol.EventOutputItemDone)
}

// saysDone matches the done event of an assistant message holding word.
func saysDone(word string) func(protocol.ResponseEvent) bool {
	return func(ev protocol.ResponseEvent) bool {
		m, ok := assistantMessage(ev.Item)
		if !ok || ev.Type != protocol.EventOutputItemDone {
			return false
		}
		for _, c := range m.Content {
			if strings.Contains(c.Text, word) {
				return true
			}
		}
		return false
	}
}

// chatAnswer writes a chat completion of text: a stream (with usage), or
// one JSON body when the request did not ask for a stream.
func chatAnswer(w http.ResponseWriter, body, text string) {
	quoted := fmt.Sprintf("%q", text)
	if !strings.Contains(body, `"stream":true`) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":`+quoted+`},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":`+quoted+`},"finish_reason":null}]}`+"\n\n")
	io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
	io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`+"\n\n")
	io.WriteString(w, "data: [DONE]\n\n")
}

// scriptedChat is an upstream whose n-th main request (0-based, title
// requests not counted) is answered with answer(n, body).
type scriptedChat struct {
	rec    *recorder
	main   int
	answer func(n int, body string) string
	title  func(w http.ResponseWriter) // nil: a streamed title
}

func newScriptedChat(answer func(n int, body string) string) *scriptedChat {
	sc := &scriptedChat{answer: answer}
	sc.rec = &recorder{h: http.HandlerFunc(sc.serve)}
	return sc
}

func (sc *scriptedChat) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.Contains(string(body), probeTitle) {
		if sc.title != nil {
			sc.title(w)
			return
		}
		chatAnswer(w, string(body), "A title")
		return
	}
	sc.rec.mu.Lock()
	n := sc.main
	sc.main++
	sc.rec.mu.Unlock()
	chatAnswer(w, string(body), sc.answer(n, string(body)))
}
