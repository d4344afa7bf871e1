package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sources"
)

// proxyRounds serves a turn with FollowupsProxy (docs/architecture.md#follow-ups): each
// upstream answer (a round) runs through the response graph into memory.
// When a round ends with end_turn:false and holds follow-up user messages,
// the round's output items — what the client would have recorded — and the
// follow-ups are appended to the request's input, the turn is planned again
// and the upstream asked again, at most Config.MaxFollowupRounds times. The
// client sees one stream: the final round's events, or response.failed when
// the last round allowed still asks for a follow-up. Nothing of a round that
// is asked again reaches the client, and nothing outlives the request.
// resp is the first round's upstream answer (the caller sent it); the later
// rounds go to the same upstream.
func (s *Server) proxyRounds(ctx context.Context, w http.ResponseWriter, r *http.Request, x *exchange, ex *harness.Exchange, resp *http.Response) (int, string, *answerError) {
	limit := s.cfg.maxFollowupRounds()
	for round := 0; ; round++ {
		if round > 0 {
			var e *answerError
			if resp, _, e = s.send(ctx, r, x, ex, true); e != nil {
				return 0, "", e
			}
		}
		ex.Answered(resp.Header.Get("Content-Type"))
		evs, runErr, err := s.collectRound(ctx, x, ex, resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, "", failure(http.StatusInternalServerError, "server_error", "", "response graph: "+err.Error(), outcomeConfigError, err)
		}
		if runErr != nil || !wantsFollowup(evs) {
			return s.replay(ctx, w, r, x, ex.Turn, evs, runErr)
		}
		turn := ex.Turn
		if round == limit {
			msg := fmt.Sprintf("harness %s: the model still had no usable answer after %d follow-up rounds", turn.Spec.Name, limit)
			return s.replay(ctx, w, r, x, turn, []protocol.ResponseEvent{protocol.Failed(&protocol.StreamError{
				Kind: protocol.ErrKindUpstream, Code: "followup_limit", Message: msg})}, nil)
		}
		next, added := followupRequest(turn.Env.Request, evs)
		x.rounds++
		s.proxyMetrics.followupRound(turn.Spec.Name)
		s.log.LogAttrs(ctx, slog.LevelDebug, "harnessflow follow-up round: asking the upstream again",
			slog.String("path", r.URL.Path), slog.String("harness", turn.Spec.Name),
			slog.Int("round", round+1), slog.Int("max_rounds", limit), slog.Int("items_appended", added))
		if ex, err = s.open(ctx, r, x, next); err != nil {
			if r.Context().Err() != nil {
				return 0, "", cancelledAnswer(err)
			}
			return 0, "", failure(http.StatusInternalServerError, "server_error", "", "follow-up round: "+err.Error(), outcomeConfigError, err)
		}
	}
}

// collectRound runs one upstream answer through the turn's response graph
// (with the stream extensions, without the counting node: the client's
// stream is counted when it is replayed) and returns its events and the
// run's error. err is a graph that could not be built.
func (s *Server) collectRound(ctx context.Context, x *exchange, ex *harness.Exchange, body io.Reader) (evs []protocol.ResponseEvent, runErr, err error) {
	g, err := s.responseGraph(x, ex, false)
	if err != nil {
		return nil, nil, err
	}
	sink := pipeline.SinkFunc[protocol.ResponseEvent](func(ev protocol.ResponseEvent) error {
		evs = append(evs, ev)
		return nil
	})
	return evs, runResponse(ctx, s, g, s.upstreamSource(body, g), sink), nil
}

// replay streams the final round's events to the client through the
// counting node; runErr is the error the round's run ended with.
func (s *Server) replay(ctx context.Context, w http.ResponseWriter, r *http.Request, x *exchange, turn *harness.Turn,
	evs []protocol.ResponseEvent, runErr error) (int, string, *answerError) {
	g, err := pipeline.New("response.replay", s.streamNode(x))
	if err != nil {
		return 0, "", failure(http.StatusInternalServerError, "server_error", "", "response graph: "+err.Error(), outcomeConfigError, err)
	}
	sink := s.startClient(w, x, turn.Env.Request.Model)
	err = pipeline.Run(ctx, g, sources.Slice(evs), sink)
	if runErr != nil {
		err = runErr
	}
	status, outcome := s.concludeClient(w, r, x, sink, err)
	return status, outcome, nil
}

// terminalEvent returns the first terminal event of a round.
func terminalEvent(evs []protocol.ResponseEvent) (protocol.ResponseEvent, int, bool) {
	for i, ev := range evs {
		if ev.IsTerminal() {
			return ev, i, true
		}
	}
	return protocol.ResponseEvent{}, len(evs), false
}

// wantsFollowup reports whether a round ended with end_turn:false and
// holds a follow-up user message.
func wantsFollowup(evs []protocol.ResponseEvent) bool {
	end, n, ok := terminalEvent(evs)
	return ok && harness.WantsFollowup(end) && slices.ContainsFunc(evs[:n], harness.IsFollowup)
}

// followupRequest returns a copy of req whose input has the round's done
// items appended in order — the assistant messages, reasoning and tool
// calls the client would have recorded, and the follow-up user messages —
// and how many items were appended. req is not modified.
func followupRequest(req *protocol.ResponsesRequest, evs []protocol.ResponseEvent) (*protocol.ResponsesRequest, int) {
	next := *req
	next.Input = slices.Clone(req.Input)
	_, n, _ := terminalEvent(evs)
	added := 0
	for _, ev := range evs[:n] {
		if ev.Type == protocol.EventOutputItemDone && ev.Item != nil {
			next.Input = append(next.Input, ev.Item)
			added++
		}
	}
	return &next, added
}
