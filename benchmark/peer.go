package benchmark

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthssestream "github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"github.com/openai/openai-go/v3"
	openaissestream "github.com/openai/openai-go/v3/packages/ssestream"
)

// Peer is another implementation that turns the same bytes into the same
// result — an official SDK's stream decoder and accumulator — measured in
// the same run as our graph, on the same corpus.
type Peer struct {
	// Name is the short name ("openai-go").
	Name string
	// Description says what runs ("ssestream + ChatCompletionAccumulator").
	Description string
	// Reasoning says whether the peer surfaces the reasoning text, so that
	// it is compared with ours.
	Reasoning bool
	// Run turns one corpus input into its result.
	Run func(input []byte) (*Summary, error)
}

// PeerFor returns the official SDK peer of an upstream wire: openai-go for
// "chat", anthropic-sdk-go for "messages". The responses wire has none (the
// SDK has no stream accumulator for it).
func PeerFor(wire string) (Peer, bool) {
	switch wire {
	case "chat":
		return OpenAIChat(), true
	case "messages":
		return AnthropicMessages(), true
	}
	return Peer{}, false
}

// PeerByName returns the peer called name ("openai-go" or
// "anthropic-sdk-go").
func PeerByName(name string) (Peer, error) {
	switch name {
	case "openai-go":
		return OpenAIChat(), nil
	case "anthropic-sdk-go":
		return AnthropicMessages(), nil
	}
	return Peer{}, fmt.Errorf("benchmark: unknown peer %q (want openai-go or anthropic-sdk-go)", name)
}

// sseResponse wraps body as the HTTP response an SDK client would decode.
func sseResponse(body []byte) *http.Response {
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(body)),
	}
}

// OpenAIChat is openai-go's chat stream: its SSE decoder over an
// http.Response carrying the input, and ChatCompletionAccumulator.AddChunk
// for every chunk — what an openai-go program streaming a chat completion
// does. openai-go does not surface reasoning_content.
func OpenAIChat() Peer {
	return Peer{
		Name:        "openai-go",
		Description: "ssestream + ChatCompletionAccumulator",
		Run: func(input []byte) (*Summary, error) {
			stream := openaissestream.NewStream[openai.ChatCompletionChunk](openaissestream.NewDecoder(sseResponse(input)), nil)
			defer stream.Close()
			var acc openai.ChatCompletionAccumulator
			s := &Summary{}
			for stream.Next() {
				s.Outputs++
				if !acc.AddChunk(stream.Current()) {
					return s, fmt.Errorf("openai-go: AddChunk rejected chunk %d", s.Outputs)
				}
			}
			if err := stream.Err(); err != nil {
				return s, fmt.Errorf("openai-go: %w", err)
			}
			if len(acc.Choices) > 0 {
				m := acc.Choices[0].Message
				s.Text = m.Content
				for _, tc := range m.ToolCalls {
					s.Calls = append(s.Calls, Call{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
				}
			}
			s.InputTokens, s.OutputTokens, s.TotalTokens = acc.Usage.PromptTokens, acc.Usage.CompletionTokens, acc.Usage.TotalTokens
			return s, nil
		},
	}
}

// AnthropicMessages is anthropic-sdk-go's Messages stream: its SSE decoder
// over an http.Response carrying the input, and Message.Accumulate for
// every event.
func AnthropicMessages() Peer {
	return Peer{
		Name:        "anthropic-sdk-go",
		Description: "ssestream + Message.Accumulate",
		Reasoning:   true,
		Run: func(input []byte) (*Summary, error) {
			stream := anthssestream.NewStream[anthropic.MessageStreamEventUnion](anthssestream.NewDecoder(sseResponse(input)), nil)
			defer stream.Close()
			var msg anthropic.Message
			s := &Summary{}
			for stream.Next() {
				s.Outputs++
				if err := msg.Accumulate(stream.Current()); err != nil {
					return s, fmt.Errorf("anthropic-sdk-go: %w", err)
				}
			}
			if err := stream.Err(); err != nil {
				return s, fmt.Errorf("anthropic-sdk-go: %w", err)
			}
			for _, c := range msg.Content {
				switch c.Type {
				case "thinking":
					s.Reasoning += c.Thinking
				case "text":
					s.Text += c.Text
				case "tool_use":
					s.Calls = append(s.Calls, Call{ID: c.ID, Name: c.Name, Arguments: string(c.Input)})
				}
			}
			u := msg.Usage
			s.InputTokens, s.OutputTokens = u.InputTokens, u.OutputTokens
			return s, nil
		},
	}
}
