package chatstream

// ChunkKind tells what a [Chunk] stands for.
type ChunkKind uint8

const (
	// ChunkData is one parsed chat.completion.chunk (or, from chat.unary,
	// one whole chat.completion turned into a chunk).
	ChunkData ChunkKind = iota
	// ChunkDone is the "data: [DONE]" end marker.
	ChunkDone
	// ChunkError is an event carrying a non-null top-level "error" (an
	// in-band upstream failure); Error holds it.
	ChunkError
	// ChunkTruncated marks a stream that ended in the middle of an SSE event
	// or line (the sse.decode truncation marker).
	ChunkTruncated
	// ChunkEOF marks the end of the input after the last event, when no
	// [DONE] or error ended the stream before (emitted by chat.decode's
	// Finish).
	ChunkEOF
)

// String returns the kind's name.
func (k ChunkKind) String() string {
	switch k {
	case ChunkData:
		return "data"
	case ChunkDone:
		return "done"
	case ChunkError:
		return "error"
	case ChunkTruncated:
		return "truncated"
	case ChunkEOF:
		return "eof"
	}
	return "ChunkKind(?)"
}

// Chunk is the chat.decode output: the fields of one streamed chat chunk
// that the translation needs.
//
// Every []byte field is borrowed: it aliases the SSE event's data or the
// decoder's scratch memory and is valid only during the emit call. Call Own
// for a copy that may be kept (the async engine does this between
// goroutines). A nil slice means the field was absent, null or of another
// JSON type than expected; an empty non-nil slice means an empty string.
type Chunk struct {
	Kind ChunkKind
	// Offset is the byte offset of the SSE event in the stream
	// (sse.Event.Offset); 0 for chunks made by chat.unary.
	Offset int64
	// ID is the top-level "id".
	ID []byte
	// Model is the top-level "model".
	Model []byte
	// Choices holds the object elements of "choices", in order.
	Choices []Choice
	// Usage is the top-level "usage" object; nil when absent or not an
	// object. Borrowed like the slices.
	Usage *Usage
	// Error is the in-band error of a ChunkError (nil otherwise). Borrowed.
	Error *ErrorObject
}

// Choice is one element of a chunk's "choices".
type Choice struct {
	// Index is "index" (0 when absent).
	Index int64
	// Content holds the text parts of delta.content: a string gives one part
	// (possibly empty), an array gives the string "text" of each element that
	// has one, an object gives its string "text"; null and other types give
	// none.
	Content [][]byte
	// Refusal is delta.refusal (OpenAI's refusal text, sent instead of
	// content); nil when absent, null or empty is kept as empty.
	Refusal []byte
	// Reasoning is the reasoning text of the delta, taken from ONE source
	// field (see ReasoningSource); nil when the delta has none.
	Reasoning []byte
	// ReasoningSource names the field Reasoning came from.
	ReasoningSource ReasoningSource
	// ToolCalls holds the object elements of delta.tool_calls, in order.
	ToolCalls []ToolCall
	// FinishReason is "finish_reason"; empty when null, absent or "".
	FinishReason []byte
}

// ReasoningSource names the delta field that carried reasoning text.
type ReasoningSource uint8

const (
	// ReasoningNone means the delta carried no reasoning text.
	ReasoningNone ReasoningSource = iota
	// ReasoningContent is delta.reasoning_content (DeepSeek, Kimi, Qwen, SGLang).
	ReasoningContent
	// ReasoningField is delta.reasoning, a string or {text|content} (OpenRouter, vLLM).
	ReasoningField
	// ReasoningDetails is the text of delta.reasoning_details[] (OpenRouter).
	ReasoningDetails
	// ReasoningThinkingParts is the text of delta.content's thinking parts
	// (Mistral's Magistral: {"type":"thinking","thinking":[{"type":"text",
	// "text"}]}).
	ReasoningThinkingParts
)

// String returns the JSON field name of the source ("" for none).
func (r ReasoningSource) String() string {
	switch r {
	case ReasoningContent:
		return "reasoning_content"
	case ReasoningField:
		return "reasoning"
	case ReasoningDetails:
		return "reasoning_details"
	case ReasoningThinkingParts:
		return "content.thinking"
	}
	return ""
}

// ToolCall is one element of delta.tool_calls (a fragment of a call).
type ToolCall struct {
	// Index is "index"; meaningful only when HasIndex. A negative index
	// (Bedrock, GLM send -1) is reported as absent.
	Index int
	// HasIndex reports an integer "index" >= 0.
	HasIndex bool
	// ID is "id".
	ID []byte
	// Type is "type" ("function").
	Type []byte
	// Name is "function.name".
	Name []byte
	// Arguments is "function.arguments": a string fragment, or, when
	// ArgumentsJSON is set, a JSON object or array compacted to text.
	Arguments []byte
	// ArgumentsJSON reports arguments sent as a JSON object or array (GLM)
	// instead of a string; such a value replaces what was accumulated.
	ArgumentsJSON bool
	// ExtraContent is the raw JSON of "extra_content" (provider metadata
	// such as Gemini's thought_signature); nil when absent or null.
	ExtraContent []byte
}

// Usage is the token accounting of a chunk's "usage" object.
type Usage struct {
	// PromptTokens is "prompt_tokens" (input, cached tokens included).
	PromptTokens int64
	// CompletionTokens is "completion_tokens" (output).
	CompletionTokens int64
	// TotalTokens is "total_tokens"; valid when HasTotal.
	TotalTokens int64
	// CachedTokens is prompt_tokens_details.cached_tokens, else the
	// top-level usage.cached_tokens (Moonshot), else prompt_cache_hit_tokens
	// (DeepSeek); 0 when none is present.
	CachedTokens int64
	// ReasoningTokens is completion_tokens_details.reasoning_tokens.
	ReasoningTokens int64
	// HasTotal reports an integer total_tokens.
	HasTotal bool
	// Known reports that at least one token count was present.
	Known bool
}

// ErrorObject is a top-level "error". An error object gives its string
// "message" and "type" and its "code" (a string, or a number kept as its
// literal); an error string is the Message; any other non-null value is kept
// as its raw JSON text in Message.
type ErrorObject struct {
	// Message is "message" (or the error string, or the raw JSON).
	Message []byte
	// Type is "type", e.g. "server_error".
	Type []byte
	// Code is "code": a string, or the literal of a number (OpenRouter
	// sends HTTP statuses such as 502).
	Code []byte
}

// Own returns a deep copy of c that does not alias any decoder or stream
// memory, so it may be retained or sent to another goroutine.
func (c Chunk) Own() Chunk {
	n := len(c.ID) + len(c.Model)
	if c.Error != nil {
		n += len(c.Error.Message) + len(c.Error.Type) + len(c.Error.Code)
	}
	parts, calls := 0, 0
	for i := range c.Choices {
		ch := &c.Choices[i]
		n += len(ch.Reasoning) + len(ch.FinishReason) + len(ch.Refusal)
		for _, p := range ch.Content {
			n += len(p)
		}
		parts += len(ch.Content)
		for j := range ch.ToolCalls {
			t := &ch.ToolCalls[j]
			n += len(t.ID) + len(t.Type) + len(t.Name) + len(t.Arguments) + len(t.ExtraContent)
		}
		calls += len(ch.ToolCalls)
	}
	a := arena{buf: make([]byte, 0, n)}
	c.ID = a.copy(c.ID)
	c.Model = a.copy(c.Model)
	if c.Error != nil {
		c.Error = &ErrorObject{Message: a.copy(c.Error.Message), Type: a.copy(c.Error.Type), Code: a.copy(c.Error.Code)}
	}
	if c.Usage != nil {
		u := *c.Usage
		c.Usage = &u
	}
	if c.Choices == nil {
		return c
	}
	choices := make([]Choice, len(c.Choices))
	var partBuf [][]byte
	if parts > 0 {
		partBuf = make([][]byte, 0, parts)
	}
	var callBuf []ToolCall
	if calls > 0 {
		callBuf = make([]ToolCall, 0, calls)
	}
	for i, ch := range c.Choices {
		ch.Reasoning = a.copy(ch.Reasoning)
		ch.Refusal = a.copy(ch.Refusal)
		ch.FinishReason = a.copy(ch.FinishReason)
		if ch.Content != nil {
			start := len(partBuf)
			for _, p := range ch.Content {
				partBuf = append(partBuf, a.copy(p))
			}
			ch.Content = partBuf[start:len(partBuf):len(partBuf)]
		}
		if ch.ToolCalls != nil {
			start := len(callBuf)
			for _, t := range ch.ToolCalls {
				callBuf = append(callBuf, t.own(&a))
			}
			ch.ToolCalls = callBuf[start:len(callBuf):len(callBuf)]
		}
		choices[i] = ch
	}
	c.Choices = choices
	return c
}

func (t ToolCall) own(a *arena) ToolCall {
	t.ID = a.copy(t.ID)
	t.Type = a.copy(t.Type)
	t.Name = a.copy(t.Name)
	t.Arguments = a.copy(t.Arguments)
	t.ExtraContent = a.copy(t.ExtraContent)
	return t
}

// Own returns a copy of t that does not alias decoder memory.
func (t ToolCall) Own() ToolCall {
	a := arena{buf: make([]byte, 0, len(t.ID)+len(t.Type)+len(t.Name)+len(t.Arguments)+len(t.ExtraContent))}
	return t.own(&a)
}

// arena hands out copies carved from one preallocated buffer.
type arena struct{ buf []byte }

// copy returns a copy of b inside the arena, keeping nil-ness.
func (a *arena) copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[start:len(a.buf):len(a.buf)]
}
