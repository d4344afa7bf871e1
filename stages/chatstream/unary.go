package chatstream

import (
	"bytes"
	"context"
	"fmt"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// UnaryName is the name of the chat.unary node.
const UnaryName = "chat.unary"

// unaryStage is chat.unary: the chunks of a non-streaming chat completion
// body → one ChunkData (or ChunkError) and a ChunkDone.
type unaryStage struct {
	max int
	buf []byte
	dec chunkDecoder
}

// NewUnaryStage returns a fresh chat.unary stage. It buffers the body of a
// non-streaming chat completion until the end of input, then emits it as
// one ChunkData whose choices carry choices[].message (content, reasoning
// fields, tool_calls, finish_reason) plus usage, followed by a ChunkDone —
// or, for an error body {"error":...}, one ChunkError. A body larger than
// opts.MaxEventBytes (default 32 MiB), an empty body and malformed JSON are
// fatal errors; malformed JSON is a *DecodeError, whose cause is a
// *NotJSONError quoting the body's first bytes when the body is not JSON at
// all (`body is not JSON: starts with "<!DOCTYPE html>\n"…`).
//
// Unlike the reference implementation, which merges every index-less call
// of a unary message into slot 0 (a known defect: docs/streams.md#unary-chat-responses), a
// tool call without "index" gets its position in the tool_calls array as its
// index, so two calls stay two calls.
func NewUnaryStage(opts Options) pipeline.Stage[[]byte, Chunk] {
	u := &unaryStage{max: opts.MaxEventBytes}
	if u.max <= 0 {
		u.max = sse.DefaultMaxEventBytes
	}
	u.dec.unary = true
	return u
}

// Push buffers one piece of the body.
func (u *unaryStage) Push(_ context.Context, b []byte, _ func(Chunk)) error {
	if len(u.buf)+len(b) > u.max {
		return fmt.Errorf("%s: body exceeds %d bytes", UnaryName, u.max)
	}
	u.buf = append(u.buf, b...)
	return nil
}

// Finish parses the whole body and emits its chunks.
func (u *unaryStage) Finish(ctx context.Context, emit func(Chunk)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// A UTF-8 byte order mark before the body is not part of it (the SSE
	// decoder skips one before a stream the same way).
	data := jsonx.TrimSpace(bytes.TrimPrefix(u.buf, []byte("\xef\xbb\xbf")))
	if len(data) == 0 {
		return fmt.Errorf("%s: empty body", UnaryName)
	}
	c, err := u.dec.decode(data)
	if err != nil {
		// A body that is not JSON at all (an HTML page a gateway answered
		// with 200, a plain-text error) is named by how it starts.
		return jsonx.NewDecodeError("", 0, jsonx.NotJSON("body", data, err))
	}
	if c.Kind == ChunkError {
		emit(*c)
		return nil
	}
	for i := range c.Choices {
		calls := c.Choices[i].ToolCalls
		for j := range calls {
			if !calls[j].HasIndex {
				calls[j].Index, calls[j].HasIndex = j, true
			}
		}
	}
	emit(*c)
	emit(Chunk{Kind: ChunkDone})
	return nil
}

// NotJSONError is the cause of a DecodeError (of chat.decode or chat.unary)
// whose data is not JSON at all: its first byte cannot start a JSON value
// (an HTML error page, a plain-text line). It quotes the data's first bytes
// and wraps the *SyntaxError at data byte 0.
type NotJSONError = jsonx.NotJSONError
