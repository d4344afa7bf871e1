// Package chatstream translates an OpenAI Chat Completions response —
// streamed (SSE) or unary — into the engine's ResponseEvents (docs/streams.md#chat-completions-streams).
//
// The streaming graph (Graph) is
//
//	sse.decode → chat.decode → chat.accumulate → chat.finalize
//	[]byte       sse.Event     Chunk             Step → protocol.ResponseEvent
//
// and the unary graph (UnaryGraph) is chat.unary → chat.accumulate →
// chat.finalize. Node names are API: harnesses insert their own stages
// after chat.finalize, and the node constructors (DecodeNode,
// AccumulateNode, FinalizeNode, UnaryNode) let them recompose the graph.
//
// # Output
//
// A stream produces
//
//	[ServerModel] Created
//	  [Added(reasoning) ReasoningDelta*] [Added(message) TextDelta*]   (interleaved as they arrive)
//	  [Done(tool call k) when a later call starts and call k is complete]*
//	  Done(reasoning)? Done(message)? Done(remaining tool calls)*  Completed
//
// or, on failure, the same prefix up to the point of failure followed by one
// Failed. ServerModel is emitted again whenever a chunk names another model.
// Created is always emitted, before any item, even for a stream that fails
// before its first chunk. An empty content string opens nothing (unlike the
// reference, whose empty assistant message is noise; docs/streams.md#nulls-and-empty-strings).
//
// # Endings
//
// Every stream ends with exactly one terminal event, the last one emitted:
//
//   - [DONE] → the done items, then Completed{response_id, token_usage}, at
//     once (later input is ignored).
//   - End of input after a non-empty finish_reason but without [DONE] →
//     the same, at end of input. This holds even when the stream was then
//     cut mid-event (a lost trailing usage chunk): the turn itself finished.
//   - An event with a non-null top-level "error" (object, string or other),
//     or an SSE event named "error" → Failed{kind:"upstream_error", type,
//     code, message, retryable, http_status?, retry_after_ms?} at once,
//     even if choices or [DONE] accompany or follow it.
//   - End of input (clean or mid-event) with neither [DONE] nor any
//     finish_reason → Failed{kind:"upstream_truncated", retryable:true} whose
//     message says what was missing and where the stream was cut.
//
// On both failures the text and reasoning deltas already sent stay as they
// are (they were streamed), but no output_item.done is emitted for the
// message or the reasoning, and tool calls that were not finalized yet are
// discarded (named in the truncation message): a consumer never sees a
// half-built call as finished output. Calls finalized earlier, because a
// later call started after they were complete, were already emitted.
//
// A fatal error — malformed JSON (a *DecodeError naming the event's byte
// offset), an oversized event, a named tool call missing its name, new
// arguments for an already finalized call — is returned by pipeline.Run and
// no terminal event is emitted, so the caller can append one Failed event of
// its own. Nothing that arrives after [DONE] or an error event is even
// parsed, so no fatal error can follow a terminal event.
//
// # Tool calls
//
// Fragments are kept in slots keyed by index. A fragment without an index
// (Gemini, Groq) continues the slot with the same id, or opens a new slot
// when it carries an id no slot has, or else continues the latest slot. An id
// is set once; a repeated name is not appended (a strictly longer name that
// extends it replaces it; a different fragment is appended). Arguments are
// appended as decoded strings; an arguments JSON object replaces them.
// When a later call starts (a fragment with a higher index, an id and a
// name), the earlier calls whose arguments already form one complete JSON
// value are finalized at once, in index order; interleaved calls stay open
// until the end. finish_reason (stop, tool_calls or any other) never
// finalizes by itself: calls are finalized at the end of the stream,
// whatever the finish reason. Finalized calls become function_call,
// namespaced function_call or custom_tool_call items per Options.ToolKinds
// (docs/streams.md#finalizing-a-call).
//
// # Memory and speed
//
// In fused mode the graph allocates nothing per chunk in steady state.
// chat.decode is a hand-written JSON reader of just the fields it needs (no
// reflection); a Chunk borrows the SSE event's data and the decoder's
// buffers (see Chunk.Own, which the async engine calls). When a chunk begins
// or ends with exactly the bytes of the previous one (the id/object/created/
// model/... head and the logprobs/finish_reason/usage tail repeat in every
// chunk), the decoder resumes from a snapshot instead of scanning them
// again; parsing is a pure function of the bytes, so the result is the same
// (a sequence test and the fuzz target check this against encoding/json).
// chat.accumulate keeps the text and the reasoning in append-only logs and
// hands out every delta, and the final text, as strings over those logs
// without copying.
package chatstream
