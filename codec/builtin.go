package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/anthropicstream"
	"github.com/harnessflow/harnessflow/stages/chatstream"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/stages/responsesstream"
	"github.com/harnessflow/harnessflow/stages/sse"
	"github.com/harnessflow/harnessflow/stages/textcall"
	"github.com/harnessflow/harnessflow/wire"
	"github.com/harnessflow/harnessflow/wire/anthropic"
	"github.com/harnessflow/harnessflow/wire/chat"
	"github.com/harnessflow/harnessflow/wire/chatin"
	"github.com/harnessflow/harnessflow/wire/messagesin"
)

// The built-in wires, in the order of the routing matrix
// (docs/routing.md#routing-matrix).
func init() {
	MustRegister(Responses())
	MustRegister(Chat())
	MustRegister(Messages())
}

// Responses is the OpenAI Responses API: the engine's own wire, sent as it
// is on the native route.
func Responses() Codec {
	return Codec{
		Wire:       wire.Responses,
		Doc:        "OpenAI Responses API",
		Path:       request.PathResponses,
		ModelsPath: "/models",
		Response: func(o Options) (*pipeline.Graph, error) {
			return responsesstream.Graph(responsesstream.Options{SSE: sse.Options{MaxEventBytes: o.MaxEventBytes}})
		},
		NativeRequest: func(request.Options) (*pipeline.Graph, error) { return request.NewResponsesGraph() },
		NativeRoute:   "ResponsesApi",
		SniffEvent:    prefixSniff("response."),
		SniffData:     typeSniff("response."),
		SniffBody: func(body []byte) string {
			if bodyFields(body).Object == "response" {
				return `"object":"response"`
			}
			return ""
		},
	}
}

// Chat is the Chat Completions API: streamed chunks or one JSON body, with
// tool calls and reasoning written in the text recovered by
// stages/textcall.
func Chat() Codec {
	return Codec{
		Wire:       wire.Chat,
		Doc:        "Chat Completions API",
		Path:       chat.Path,
		ModelsPath: "/models",
		Response: func(o Options) (*pipeline.Graph, error) {
			g, err := chatstream.Graph(chatOptions(o))
			return withTextCalls(g, err, o)
		},
		Unary: func(o Options) (*pipeline.Graph, error) {
			g, err := chatstream.UnaryGraph(chatOptions(o))
			return withTextCalls(g, err, o)
		},
		NativeRequest: request.NewChatGraph,
		NativeRoute:   "ChatCompletionsCompat",
		SniffData:     chatSniff,
		SniffBody: func(body []byte) string {
			if f := bodyFields(body); f.Object == "chat.completion" || len(f.Choices) > 0 {
				return `it has "choices"`
			}
			return ""
		},
		Inbound: &Inbound{
			Paths: []string{"/v1/chat/completions", "/chat/completions"},
			What:  "Chat Completions",
			Decode: func(body []byte) (InboundRequest, error) {
				c, err := chatin.Decode(body)
				if err != nil {
					return InboundRequest{}, err
				}
				return InboundRequest{Responses: c.Responses, Stream: c.Stream, IncludeUsage: c.IncludeUsage, Thinking: c.Responses.Reasoning != nil}, nil
			},
			NewWriter: func(out io.Writer, o WriterOptions) InboundWriter {
				return chatWriter{chatin.NewWriter(out, chatin.Options{ID: "chatcmpl-" + TrimResponseID(o.ResponseID), Model: o.Model, IncludeUsage: o.IncludeUsage, Flush: o.Flush})}
			},
		},
	}
}

// Messages is the Anthropic Messages API. It has no native route: the
// engine's requests reach it through a harness (claude-code).
func Messages() Codec {
	return Codec{
		Wire:       wire.Messages,
		Doc:        "Anthropic Messages API",
		Path:       anthropic.Path,
		ModelsPath: "/models",
		KeyHeader:  "x-api-key",
		Headers:    map[string]string{"anthropic-version": "2023-06-01"},
		Response: func(o Options) (*pipeline.Graph, error) {
			return anthropicstream.Graph(anthropicstream.Options{SSE: sse.Options{MaxEventBytes: o.MaxEventBytes}})
		},
		ModelEntry: anthropicModel,
		Inbound: &Inbound{
			Paths: []string{"/v1/messages", "/messages"},
			What:  "Messages",
			Decode: func(body []byte) (InboundRequest, error) {
				m, err := messagesin.Decode(body)
				if err != nil {
					return InboundRequest{}, err
				}
				return InboundRequest{Responses: m.Responses, Stream: m.Stream, Thinking: m.Thinking}, nil
			},
			NewWriter: func(out io.Writer, o WriterOptions) InboundWriter {
				return messagesWriter{messagesin.NewWriter(out, messagesin.Options{MessageID: "msg_" + TrimResponseID(o.ResponseID), Model: o.Model, Flush: o.Flush})}
			},
			Shape:       MessagesErrors,
			PassThrough: true,
		},
		SniffEvent: func(name string) string {
			if strings.HasPrefix(name, "message_") || strings.HasPrefix(name, "content_block_") {
				return name
			}
			return ""
		},
		SniffData: func(data []byte) string {
			if t := dataType(data); strings.HasPrefix(t, "message_") || strings.HasPrefix(t, "content_block_") {
				return `"type":"` + t + `"`
			}
			return ""
		},
		SniffBody: func(body []byte) string {
			if f := bodyFields(body); f.Type == "message" && len(f.Content) > 0 {
				return `"type":"message"`
			}
			return ""
		},
	}
}

// messagesWriter and chatWriter name their writers' bodies AppendBody.
type messagesWriter struct{ *messagesin.Writer }

func (w messagesWriter) AppendBody(b []byte) []byte { return w.AppendMessage(b) }

type chatWriter struct{ *chatin.Writer }

func (w chatWriter) AppendBody(b []byte) []byte { return w.AppendCompletion(b) }

func chatOptions(o Options) chatstream.Options {
	return chatstream.Options{ToolKinds: o.ToolKinds, MaxEventBytes: o.MaxEventBytes}
}

// withTextCalls inserts text tool-call recovery before the chat
// accumulator when the options ask for it.
func withTextCalls(g *pipeline.Graph, err error, o Options) (*pipeline.Graph, error) {
	if err != nil || ((o.ToolFormat == "" || o.ToolFormat == textcall.Off) && !o.ThinkingOpen) {
		return g, err
	}
	n, err := textcall.Node(textcall.Options{
		Format:       o.ToolFormat,
		ThinkingOpen: o.ThinkingOpen,
		Config:       textcall.Config{Model: o.Model},
		LoadSchemas:  o.ToolSchemas,
		Observe:      o.TextCalls,
		Logger:       o.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("codec: --tool-format: %w", err)
	}
	return g.InsertBefore(chatstream.AccumulateName, n)
}

// anthropicModel translates one entry of Anthropic's model list.
func anthropicModel(raw json.RawMessage) (json.RawMessage, error) {
	var m struct {
		ID        string `json:"id"`
		Object    string `json:"object"`
		CreatedAt string `json:"created_at"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.ID == "" {
		return nil, errors.New("want an object with an id")
	}
	if m.Object == "model" { // already in OpenAI's shape
		return raw, nil
	}
	e := struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}{ID: m.ID, Object: "model", OwnedBy: "anthropic"}
	if t, err := time.Parse(time.RFC3339, m.CreatedAt); err == nil {
		e.Created = t.Unix()
	}
	return json.Marshal(e)
}

func prefixSniff(prefix string) func(string) string {
	return func(name string) string {
		if strings.HasPrefix(name, prefix) {
			return name
		}
		return ""
	}
}

func typeSniff(prefix string) func([]byte) string {
	return func(data []byte) string {
		if t := dataType(data); strings.HasPrefix(t, prefix) {
			return `"type":"` + t + `"`
		}
		return ""
	}
}

// dataType is the "type" of a JSON object ("" when it has none).
func dataType(data []byte) string {
	var v struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	return v.Type
}

// answerFields are the fields of a non-streaming answer that say its wire.
type answerFields struct {
	Type    string          `json:"type"`
	Object  string          `json:"object"`
	Choices json.RawMessage `json:"choices"`
	Content json.RawMessage `json:"content"`
}

// bodyFields reads the answerFields of a JSON body (zero when it is not an
// object).
func bodyFields(body []byte) answerFields {
	var f answerFields
	if json.Unmarshal(body, &f) != nil {
		return answerFields{}
	}
	return f
}

// chatSniff recognises a chat chunk by its "object" or "choices".
func chatSniff(data []byte) string {
	var v struct {
		Type    string          `json:"type"`
		Object  string          `json:"object"`
		Choices json.RawMessage `json:"choices"`
	}
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	switch {
	case v.Object == "chat.completion.chunk" || v.Object == "chat.completion":
		return `a chat chunk ("object":"` + v.Object + `")`
	case len(v.Choices) > 0 && v.Type == "":
		return `a chat chunk ("choices")`
	}
	return ""
}
