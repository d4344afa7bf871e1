package chatstream

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
)

// fixture is one recorded stream of testdata/fixtures with its expectation
// (schema: testdata/fixtures/README.md, copied with the fixtures from the shared corpus).
type fixture struct {
	Name   string
	SSE    []byte
	Expect struct {
		Fixture              string          `json:"fixture"`
		Bytes                int             `json:"bytes"`
		SHA256               string          `json:"sha256"`
		Expected             expectation     `json:"expected"`
		ResponseID           string          `json:"response_id"`
		Model                string          `json:"model"`
		RequiresQuirk        string          `json:"requires_quirk"`
		ExpectedWithoutQuirk json.RawMessage `json:"expected_without_quirk"`
		Replay               struct {
			SplitAt []int `json:"split_at_byte_offsets"`
		} `json:"replay"`
	}
}

type expectation struct {
	Text      *string `json:"text"`
	Reasoning *struct {
		Text        string `json:"text"`
		SourceField string `json:"source_field"`
	} `json:"reasoning"`
	ToolCalls []struct {
		Index            int             `json:"index"`
		ID               string          `json:"id"`
		Name             string          `json:"name"`
		Kind             string          `json:"kind"`
		Arguments        *string         `json:"arguments"`
		ArgumentsJSON    json.RawMessage `json:"arguments_json"`
		Input            *string         `json:"input"`
		ArgsLen          *int            `json:"arguments_len_bytes"`
		ArgsSHA          string          `json:"arguments_sha256"`
		ArgsPrefix       string          `json:"arguments_prefix"`
		ContentLenRunes  *int            `json:"decoded_content_len_runes"`
		ProviderMetadata json.RawMessage `json:"provider_metadata"`
	} `json:"tool_calls"`
	PartialToolCalls []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"partial_tool_calls"`
	FinishReason       *string         `json:"finish_reason"`
	NativeFinishReason *string         `json:"native_finish_reason"`
	Usage              json.RawMessage `json:"usage"`
	Terminal           string          `json:"terminal"`
	Error              *struct {
		Kind      string  `json:"kind"`
		Type      *string `json:"type"`
		Code      *string `json:"code"`
		Message   *string `json:"message"`
		Retryable *bool   `json:"retryable"`
	} `json:"error"`
}

func loadFixtures(t *testing.T) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "fixtures", "*.sse"))
	if err != nil || len(paths) < 15 {
		t.Fatalf("want the chat fixtures in testdata/fixtures, found %d (%v)", len(paths), err)
	}
	var fs []fixture
	for _, p := range paths {
		f := fixture{Name: strings.TrimSuffix(filepath.Base(p), ".sse")}
		if f.SSE, err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(strings.TrimSuffix(p, ".sse") + ".expect.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &f.Expect); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		sum := sha256.Sum256(f.SSE)
		if hex.EncodeToString(sum[:]) != f.Expect.SHA256 || len(f.SSE) != f.Expect.Bytes {
			t.Fatalf("%s: bytes/sha256 differ from the expectation (fixture edited?)", p)
		}
		fs = append(fs, f)
	}
	return fs
}

// toolKindsFor derives the ToolKinds a fixture's expectation implies.
func toolKindsFor(e expectation) protocol.ToolKinds {
	k := protocol.ToolKinds{}
	for _, c := range e.ToolCalls {
		if c.Kind == protocol.KindCustom {
			k[c.Name] = protocol.ToolOutputKind{Kind: protocol.KindCustom}
		}
	}
	return k
}

// replays returns every way a fixture is delivered: whole, one byte at a
// time, random chunk sizes (seeded) and the fixture's own split offsets.
func replays(splitAt []int) map[string]splitter {
	r := map[string]splitter{
		"whole":     whole,
		"bytewise":  bytewise,
		"random-1":  randomSplit(1, 7),
		"random-2":  randomSplit(2, 64),
		"random-3":  randomSplit(3, 1024),
		"random-42": randomSplit(42, 4096),
	}
	if len(splitAt) > 0 {
		r["split-at"] = atOffsets(splitAt)
	}
	return r
}

// replayAll runs every replay in both modes and checks that they all agree
// with the whole, fused run, which it returns.
func replayAll(t *testing.T, g *pipeline.Graph, input []byte, splitAt []int) outcome {
	t.Helper()
	ref := run(t, g, input, whole, pipeline.Fused)
	for name, sp := range replays(splitAt) {
		for _, mode := range modes {
			got := run(t, g, input, sp, mode)
			if ref.Err != nil && mode == pipeline.Async {
				// An async run stops at the error: events still in flight
				// between nodes are dropped, so only a prefix arrives. The
				// engine may also run a downstream Finish before the upstream
				// failure cancels the run (pipeline/internal/gs closes a
				// failed flow's output first); our stages then emit nothing
				// and report ErrNoEndMarker, which may win the race to be
				// the run's error.
				sameErr := got.Err != nil && (got.Err.Error() == ref.Err.Error() || errors.Is(got.Err, ErrNoEndMarker))
				if !sameErr || len(got.Lines) > len(ref.Lines) ||
					!slices.Equal(got.Lines, ref.Lines[:len(got.Lines)]) {
					t.Errorf("replay %s/%s: got\n%s\nwant a prefix of\n%s", name, mode, got, ref)
				}
				continue
			}
			if d := cmp.Diff(ref.String(), got.String()); d != "" {
				t.Errorf("replay %s/%s differs from whole/fused (-want +got):\n%s", name, mode, d)
			}
			if !reflect.DeepEqual(ref.End, got.End) {
				t.Errorf("replay %s/%s: end %+v, want %+v", name, mode, got.End, ref.End)
			}
		}
	}
	return ref
}

func TestFixtures(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			exp := f.Expect.Expected
			opts := Options{ToolKinds: toolKindsFor(exp), CumulativeArguments: f.Expect.RequiresQuirk == "cumulative_arguments"}
			if f.Expect.RequiresQuirk != "" && f.Expect.RequiresQuirk != "cumulative_arguments" {
				t.Fatalf("unknown quirk %q", f.Expect.RequiresQuirk)
			}
			o := replayAll(t, mustGraph(t, opts), f.SSE, f.Expect.Replay.SplitAt)
			if o.Err != nil {
				t.Fatalf("run error: %v", o.Err)
			}
			checkExpectation(t, o, exp, f.Expect.ResponseID, f.Expect.Model)
			if f.Expect.RequiresQuirk != "" {
				checkWithoutQuirk(t, f)
			}
		})
	}
}

func checkExpectation(t *testing.T, o outcome, exp expectation, responseID, model string) {
	t.Helper()
	s := summarize(o.Events)
	if exp.Text != nil && s.Text != *exp.Text {
		t.Errorf("text = %q, want %q", s.Text, *exp.Text)
	}
	if exp.Reasoning == nil && s.Reasoning != "" {
		t.Errorf("reasoning = %q, want none", s.Reasoning)
	}
	if exp.Reasoning != nil && s.Reasoning != exp.Reasoning.Text {
		t.Errorf("reasoning = %q, want %q", s.Reasoning, exp.Reasoning.Text)
	}
	failed := exp.Error != nil
	if !failed {
		if s.Completed == nil {
			t.Fatalf("no completed event:\n%s", o)
		}
		// The done items repeat exactly what was streamed.
		if s.Text != "" && (s.DoneText == nil || *s.DoneText != s.Text) {
			t.Errorf("message done item %v, want text %q", s.DoneText, s.Text)
		}
		if s.Reasoning != "" && (s.DoneReasoning == nil || *s.DoneReasoning != s.Reasoning) {
			t.Errorf("reasoning done item %v, want %q", s.DoneReasoning, s.Reasoning)
		}
		if responseID != "" && s.Completed.ResponseID != responseID {
			t.Errorf("response id %q, want %q", s.Completed.ResponseID, responseID)
		}
	} else {
		if s.Failed == nil {
			t.Fatalf("no failed event:\n%s", o)
		}
		if s.DoneText != nil || s.DoneReasoning != nil {
			t.Errorf("a failed stream emitted message/reasoning done items:\n%s", o)
		}
		checkError(t, s.Failed, exp)
	}
	if model != "" && (len(s.Models) == 0 || s.Models[len(s.Models)-1] != model) {
		t.Errorf("server models %q, want last %q", s.Models, model)
	}
	// Tool calls.
	if len(s.Calls) != len(exp.ToolCalls) {
		t.Fatalf("%d tool calls, want %d:\n%s", len(s.Calls), len(exp.ToolCalls), o)
	}
	for i, want := range exp.ToolCalls {
		var callID, name, args, kind string
		var extra protocol.Extra
		switch it := s.Calls[i].(type) {
		case *protocol.FunctionCall:
			callID, name, args, kind, extra = it.CallID, it.Name, it.Arguments, protocol.KindFunction, it.Extra
		case *protocol.CustomToolCall:
			callID, name, args, kind, extra = it.CallID, it.Name, it.Input, protocol.KindCustom, it.Extra
		}
		if callID != want.ID || name != want.Name || kind != want.Kind {
			t.Errorf("call %d = (%s %s %s), want (%s %s %s)", i, callID, name, kind, want.ID, want.Name, want.Kind)
		}
		if want.Arguments != nil && args != *want.Arguments {
			t.Errorf("call %d arguments = %q, want %q", i, args, *want.Arguments)
		}
		if want.Input != nil && args != *want.Input {
			t.Errorf("call %d input = %q, want %q", i, args, *want.Input)
		}
		if len(want.ArgumentsJSON) > 0 {
			var got, w any
			if err := json.Unmarshal([]byte(args), &got); err != nil {
				t.Errorf("call %d arguments are not JSON: %v", i, err)
			}
			_ = json.Unmarshal(want.ArgumentsJSON, &w)
			if !reflect.DeepEqual(got, w) {
				t.Errorf("call %d arguments_json = %v, want %v", i, got, w)
			}
		}
		if want.ArgsLen != nil && len(args) != *want.ArgsLen {
			t.Errorf("call %d arguments length %d, want %d", i, len(args), *want.ArgsLen)
		}
		if want.ArgsSHA != "" {
			sum := sha256.Sum256([]byte(args))
			if hex.EncodeToString(sum[:]) != want.ArgsSHA {
				t.Errorf("call %d arguments sha256 differs", i)
			}
		}
		if want.ArgsPrefix != "" && !strings.HasPrefix(args, want.ArgsPrefix) {
			t.Errorf("call %d arguments %.80q lack prefix %q", i, args, want.ArgsPrefix)
		}
		if want.ContentLenRunes != nil {
			var v struct{ Content string }
			if err := json.Unmarshal([]byte(args), &v); err != nil || utf8.RuneCountInString(v.Content) != *want.ContentLenRunes {
				t.Errorf("call %d content has %d runes (%v), want %d", i, utf8.RuneCountInString(v.Content), err, *want.ContentLenRunes)
			}
		}
		if len(want.ProviderMetadata) > 0 {
			var got, w any
			_ = json.Unmarshal(extra[ExtraContentKey], &got)
			_ = json.Unmarshal(want.ProviderMetadata, &w)
			if !reflect.DeepEqual(got, w) {
				t.Errorf("call %d provider metadata %s, want %s", i, extra[ExtraContentKey], want.ProviderMetadata)
			}
		}
	}
	for _, p := range exp.PartialToolCalls {
		for _, ev := range o.Events {
			if ev.Type == protocol.EventOutputItemDone {
				if fc, ok := ev.Item.(*protocol.FunctionCall); ok && (fc.CallID == p.ID || fc.Name == p.Name) {
					t.Errorf("partial tool call %s (%s) was emitted as done", p.ID, p.Name)
				}
			}
		}
	}
	// Usage (only observable on completed streams).
	if !failed {
		var wantUsage *protocol.TokenUsage
		if string(exp.Usage) != "null" && len(exp.Usage) > 0 {
			var u struct {
				Input     int64 `json:"input_tokens"`
				Cached    int64 `json:"cached_input_tokens"`
				Output    int64 `json:"output_tokens"`
				Reasoning int64 `json:"reasoning_output_tokens"`
				Total     int64 `json:"total_tokens"`
			}
			if err := json.Unmarshal(exp.Usage, &u); err != nil {
				t.Fatal(err)
			}
			wantUsage = &protocol.TokenUsage{InputTokens: u.Input, CachedInputTokens: u.Cached, OutputTokens: u.Output, ReasoningOutputTokens: u.Reasoning, TotalTokens: u.Total}
		}
		if d := cmp.Diff(wantUsage, s.Completed.TokenUsage); d != "" {
			t.Errorf("usage (-want +got):\n%s", d)
		}
	}
	// Finish reasons, as observed on the End step.
	if o.End == nil {
		t.Fatal("no end step reached chat.finalize")
	}
	if exp.NativeFinishReason != nil && o.End.FinishReason != *exp.NativeFinishReason {
		t.Errorf("native finish reason %q, want %q", o.End.FinishReason, *exp.NativeFinishReason)
	}
	if exp.NativeFinishReason == nil && exp.Error != nil && exp.Error.Kind == protocol.ErrKindTruncated && o.End.FinishReason != "" {
		t.Errorf("truncated stream saw finish reason %q", o.End.FinishReason)
	}
	// The normalized finish reason is the completed event's; the
	// expectations say "error" for an upstream error.
	if exp.FinishReason != nil {
		got := ""
		switch {
		case o.End.Err != nil && o.End.Err.Kind == protocol.ErrKindUpstream:
			got = "error"
		case s.Completed != nil:
			got = s.Completed.FinishReason
		}
		if got != *exp.FinishReason {
			t.Errorf("normalized finish reason %q, want %q", got, *exp.FinishReason)
		}
	}
}

func checkError(t *testing.T, got *protocol.StreamError, exp expectation) {
	t.Helper()
	w := exp.Error
	if got.Kind != w.Kind {
		t.Errorf("error kind %q, want %q", got.Kind, w.Kind)
	}
	if w.Type != nil && got.Type != *w.Type {
		t.Errorf("error type %q, want %q", got.Type, *w.Type)
	}
	if w.Code != nil && got.Code != *w.Code {
		t.Errorf("error code %q, want %q", got.Code, *w.Code)
	}
	if w.Code == nil && bytes.Contains([]byte(jsonString(w)), []byte(`"code":null`)) && got.Code != "" {
		t.Errorf("error code %q, want none", got.Code)
	}
	if w.Message != nil && got.Message != *w.Message {
		t.Errorf("error message %q, want %q", got.Message, *w.Message)
	}
	if got.Message == "" {
		t.Error("error without a message")
	}
	if w.Retryable != nil && got.Retryable != *w.Retryable {
		t.Errorf("retryable %v, want %v", got.Retryable, *w.Retryable)
	}
}

// checkWithoutQuirk replays a quirk fixture with the quirk off and checks
// expected_without_quirk: the arguments are surfaced as concatenated, not
// guessed.
func checkWithoutQuirk(t *testing.T, f fixture) {
	var w struct {
		Args  *string `json:"tool_calls_arguments"`
		Valid *bool   `json:"arguments_valid_json"`
	}
	if err := json.Unmarshal(f.Expect.ExpectedWithoutQuirk, &w); err != nil || w.Args == nil {
		t.Fatalf("bad expected_without_quirk: %v", err)
	}
	o := replayAll(t, mustGraph(t, Options{}), f.SSE, nil)
	if o.Err != nil {
		t.Fatalf("without quirk: run error %v", o.Err)
	}
	s := summarize(o.Events)
	if len(s.Calls) != 1 {
		t.Fatalf("without quirk: %d calls, want 1", len(s.Calls))
	}
	args := s.Calls[0].(*protocol.FunctionCall).Arguments
	if args != *w.Args {
		t.Errorf("without quirk: arguments %q, want %q", args, *w.Args)
	}
	if w.Valid != nil && json.Valid([]byte(args)) != *w.Valid {
		t.Errorf("without quirk: arguments valid JSON = %v, want %v", !*w.Valid, *w.Valid)
	}
}
