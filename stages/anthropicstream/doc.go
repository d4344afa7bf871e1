// Package anthropicstream translates an Anthropic Messages stream into the
// engine's ResponseEvents (docs/streams.md#anthropic-messages-streams). The graph (Graph) is
//
//	sse.decode → anthropic.decode → anthropic.accumulate
//	[]byte       sse.Event          Event → protocol.ResponseEvent
//
// Node names are API (DecodeName, AccumulateName); DecodeNode and
// AccumulateNode let callers recompose the graph.
//
// # Output
//
//	[ServerModel] Created
//	  per content block, in stream order:
//	    text               Added(message) OutputTextDelta*        … Done(message)
//	    thinking           Added(reasoning) ReasoningContentDelta* … Done(reasoning)
//	    redacted_thinking  Added(reasoning)                         … Done(reasoning)
//	    tool_use           (nothing while it streams)               … Done(function_call)
//	Completed | Failed
//
// Done items are emitted when their block stops, in block-index order: a
// block that stops while an earlier block is still open waits for it.
//
// Items: a text block becomes the assistant message "anthropic-message-{i}"
// (Added carries one empty output_text part, Done the block's whole text); a
// thinking block the reasoning item "anthropic-thinking-{i}" (Added carries
// one empty reasoning_text entry, as on the chat wire) whose Done has
// the text as one reasoning_text content entry (none when the text is empty,
// e.g. display "omitted") and the block's signature, verbatim, as
// encrypted_content (null when the upstream sent none; one is never
// invented); a redacted_thinking block the reasoning item
// "anthropic-redacted-thinking-{i}" with its opaque data as encrypted_content
// and no content — the id prefix is what tells a request builder to send it
// back as redacted_thinking rather than thinking; a tool_use block the
// function_call {call_id: block id (default "toolu_{i}"), name, arguments},
// {i} being the content block index. The arguments are the streamed
// input_json_delta text exactly as sent (Options.CompactArguments compacts
// it, as the reference does); the start block's input is a placeholder that
// streamed input replaces, and is used (compacted) only when nothing but
// whitespace was streamed, so a tool without parameters gets "{}". Text and
// reasoning deltas that are empty are not emitted.
//
// Server-side blocks — server_tool_use, the *_tool_result blocks,
// container_upload and block types newer than this package — were executed
// or produced by Anthropic: they never become client tool calls and emit
// nothing (their deltas are ignored). citations_delta and unknown delta
// types are ignored too.
//
// # Endings
//
// Every stream ends with exactly one terminal event, the last one emitted;
// Created always precedes it:
//
//   - message_stop → Done for every block still open (the upstream declared
//     the message complete), then Completed{response_id: message id,
//     token_usage, finish_reason}. end_turn is false for stop_reason
//     "pause_turn" (the server tool loop paused and the caller continues the
//     turn) and unset otherwise.
//   - error event → Failed{kind:"upstream_error", type: error.type, message,
//     retryable (overloaded_error, rate_limit_error, api_error,
//     timeout_error), http_status (the status the error type stands for,
//     e.g. 529), request_id}; a message containing one of the markers (exact)
//     "prompt is too long", "context window" or "context length" gets code
//     "context_length_exceeded" and is not retryable.
//   - end of input, or a stream cut mid-event, before message_stop →
//     Failed{kind:"upstream_truncated", retryable:true}. Tool calls whose
//     block had not stopped are not emitted, and no Done follows for the
//     open text or reasoning blocks.
//
// Failed carries the message id as response_id once message_start gave one.
//
// finish_reason is the last message_delta's stop_reason in the Chat
// Completions vocabulary: end_turn, stop_sequence → "stop"; max_tokens,
// model_context_window_exceeded → "length"; tool_use → "tool_calls";
// refusal → "content_filter"; pause_turn → "stop" (the response ended
// normally; end_turn:false is what tells the caller to continue the turn).
// Without a stop_reason it is "tool_calls" when client tool calls were
// emitted and absent otherwise; other stop reasons pass through as sent.
//
// Nothing after message_stop or an error event is read.
//
// Usage: message_start's usage, then every message_delta's, overwriting
// field by field (null is absent), never adding. token_usage follows OpenAI
// semantics: input_tokens = input + cache_creation + cache_read (it includes
// cached tokens), cached_input_tokens = cache_read,
// cache_write_input_tokens = cache_creation, output_tokens,
// reasoning_output_tokens = output_tokens_details.reasoning_tokens (0 when
// absent), total_tokens = input_tokens + output_tokens. Without any usage,
// token_usage is absent.
//
// # Fatal errors
//
// anthropic.decode fails with a *DecodeError (wrapping a *SyntaxError) when
// the data of a Messages event is not one well-formed JSON object of the
// expected shape; when the data is not JSON at all (its first byte cannot
// start a JSON value: an HTML error page, a log line) the cause is a
// *NotJSONError that quotes its first bytes, e.g. `data line is not JSON:
// starts with "<html><head><tit"…`. anthropic.accumulate fails with a
// *ProtocolError for a delta addressed to a block that is not open or that
// does not fit the block's type, or a content_block_start whose index does
// not increase. The run then returns the error (wrapped by the pipeline
// with the stage name and input number) and no terminal event is emitted,
// so the caller can add a Failed of its own. Events with unknown SSE names,
// unknown JSON types, empty data or "[DONE]" are skipped, never fatal.
//
// # Memory
//
// anthropic.decode reads JSON without reflection; a content block delta
// costs no allocation and its Event.Text borrows the SSE data or the
// decoder's scratch buffer (Event.Own copies it). anthropic.accumulate
// appends each text or thinking delta to its block's buffer and hands out
// the delta string and, at the end, the whole text as views of that
// append-only buffer, so a delta costs no allocation beyond the buffer's
// amortised growth.
package anthropicstream
