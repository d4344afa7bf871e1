// Package messagesin is the Anthropic Messages API spoken inbound: what a
// client such as Claude Code or the @anthropic-ai/sdk sends to the proxy's
// POST /v1/messages, and what it reads back.
//
// [Decode] turns a Messages request body into the engine's neutral request,
// a [protocol.ResponsesRequest] (docs/inbound.md#messages):
//
//   - system (a string or text blocks) → system messages at the start of the
//     input, one input_text per block; a role "system" message inside
//     messages (Claude Code's per-turn form) → a system message in place;
//   - user text, image and document blocks → a user message (input_text,
//     input_image with a data: or https URL, input_file); tool_result blocks
//     → function_call_output items (text and images; is_error as a failed
//     output);
//   - assistant text → an assistant message, thinking → a reasoning item
//     whose encrypted content is the signature, redacted_thinking → a
//     reasoning item with the data, tool_use → a function_call;
//   - tools → function tools (input_schema as parameters); tool_choice,
//     thinking / output_config.effort → reasoning, metadata.user_id →
//     client_metadata, max_tokens → max_output_tokens, temperature, top_p;
//   - cache_control marks are checked and not carried: the neutral request
//     has no place for them (a Messages upstream gets them by the server's
//     pass-through of the client's body).
//
// Bad input is a *[inboundjson.Error] naming the JSON path; [AppendError]
// writes it, or any error answer, in the API's own shape:
// {"type":"error","error":{"type","message"}}.
//
// [Writer] is the other way: a pipeline sink of [protocol.ResponseEvent]
// that writes the Messages SSE stream the API streams (message_start, ping,
// content_block_start / _delta / _stop for text, thinking with
// thinking_delta and signature_delta, tool_use with input_json_delta,
// message_delta with stop_reason and usage, message_stop; an error event for
// a failed stream), or, without a destination, builds the non-streaming
// Message body ([Writer.AppendMessage]).
package messagesin
