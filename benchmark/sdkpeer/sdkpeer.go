// Package sdkpeer holds the official SDKs' stream accumulators (openai-go,
// anthropic-sdk-go) as benchmark peers: the same bytes turned into the same
// result by another implementation, measured in the same run as ours.
//
// It is the only non-test package that imports the SDKs. Importing it
// registers its peers with package benchmark, so that benchmark.PeerFor and
// benchmark.PeerByName (and `harnessflow bench --vs`) find them; the
// product binary does not import it unless built with `-tags peers` (see
// cmd/harnessflow/peers.go).
package sdkpeer

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthssestream "github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"github.com/openai/openai-go/v3"
	openaissestream "github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/harnessflow/harnessflow/benchmark"
)

func init() {
	benchmark.RegisterPeer("chat", OpenAIChat())
	benchmark.RegisterPeer("messages", AnthropicMessages())
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
func OpenAIChat() benchmark.Peer {
	return benchmark.Peer{
		Name:        "openai-go",
		Description: "ssestream + ChatCompletionAccumulator",
		Run: func(input []byte) (*benchmark.Summary, error) {
			stream := openaissestream.NewStream[openai.ChatCompletionChunk](openaissestream.NewDecoder(sseResponse(input)), nil)
			defer stream.Close()
			var acc openai.ChatCompletionAccumulator
			s := &benchmark.Summary{}
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
					s.Calls = append(s.Calls, benchmark.Call{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
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
func AnthropicMessages() benchmark.Peer {
	return benchmark.Peer{
		Name:        "anthropic-sdk-go",
		Description: "ssestream + Message.Accumulate",
		Reasoning:   true,
		Run: func(input []byte) (*benchmark.Summary, error) {
			stream := anthssestream.NewStream[anthropic.MessageStreamEventUnion](anthssestream.NewDecoder(sseResponse(input)), nil)
			defer stream.Close()
			var msg anthropic.Message
			s := &benchmark.Summary{}
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
					s.Calls = append(s.Calls, benchmark.Call{ID: c.ID, Name: c.Name, Arguments: string(c.Input)})
				}
			}
			u := msg.Usage
			s.InputTokens, s.OutputTokens = u.InputTokens, u.OutputTokens
			return s, nil
		},
	}
}
