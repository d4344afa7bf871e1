// Package responsesstream translates an OpenAI Responses API stream into the
// engine's ResponseEvents. The graph (Graph) is
//
//	sse.decode → responses.decode
//	[]byte       sse.Event → protocol.ResponseEvent
//
// The node name (DecodeName) is API; DecodeNode lets callers recompose the
// graph.
//
// # Mapping
//
//	response.created                       ServerModel(response.model)? Created
//	response.output_item.added             Added(item)
//	response.output_text.delta             OutputTextDelta
//	response.reasoning_summary_part.added  ReasoningSummaryPartAdded{summary_index}
//	response.reasoning_summary_text.delta  ReasoningSummaryDelta{summary_index}
//	response.reasoning_text.delta          ReasoningContentDelta{content_index}
//	response.function_call_arguments.delta ToolCallInputDelta{item_id, call_id}
//	response.custom_tool_call_input.delta  ToolCallInputDelta{item_id, call_id}
//	response.output_item.done              Done(item)
//	response.completed                     Completed{response_id, token_usage, finish_reason}
//	response.incomplete                    Completed{response_id, token_usage, finish_reason}
//	response.failed                        Failed{upstream_error: response.error, response_id}
//	error                                  Failed{upstream_error, response_id}
//
// Items are decoded with protocol.UnmarshalItem: item types the engine does
// not model are kept verbatim, and unknown fields of known items survive. The
// item of output_item.done is authoritative: it is passed on as sent, even
// when deltas disagreed with it. The call id of a tool input delta comes from
// the call's output_item.added; Options.SkipToolInputDeltas drops these
// deltas. Empty deltas are not emitted. Every other event type
// (response.in_progress, content_part.*, the *.done text events, refusal
// deltas, hosted-tool progress events, events newer than this package) is
// ignored. If a stream lacks response.created, Created is emitted before the
// first other event.
//
// response.incomplete (max_output_tokens or content_filter) is not an error
// (the turn ended early; docs/streams.md#responses-streams): it completes the stream like
// response.completed.
//
// finish_reason is in the Chat Completions vocabulary: "stop" for
// response.completed, or "tool_calls" when a function_call or
// custom_tool_call done item was emitted; for response.incomplete,
// incomplete_details.reason max_output_tokens → "length", content_filter →
// "content_filter", another reason as sent, none when there is no reason.
//
// # Endings
//
// Every stream ends with exactly one terminal event, the last one emitted;
// Created always precedes it. token_usage maps input_tokens,
// input_tokens_details.cached_tokens, output_tokens,
// output_tokens_details.reasoning_tokens and total_tokens (input + output
// when absent); a null usage gives no token_usage. Failures carry code,
// message and type from response.error or from the error event (top level,
// or a nested "error" object); they are retryable for the codes
// server_error, rate_limit_exceeded, server_is_overloaded and slow_down, and
// retry_after_ms is parsed from "try again in 125ms" / "2.5s" in the
// message. End of input, or a stream cut mid-event, without a terminal event
// gives Failed{kind:"upstream_truncated", retryable:true}. Failed carries the
// response id (response.failed's, else response.created's) when known.
// Nothing after the
// terminal event (a "[DONE]" some proxies add, say) is read.
//
// # Fatal errors
//
// responses.decode fails with a *DecodeError when an event it interprets is
// not one well-formed JSON object of the expected shape (wrapping a
// *SyntaxError) or its item does not decode; the run then returns the error
// and no terminal event is emitted. Data that is not JSON at all (its first
// byte cannot start a JSON value: an HTML error page, a log line) is named
// by its first bytes: the cause is a *NotJSONError, e.g. `data line
// is not JSON: starts with "<html><head><tit"…`.
//
// # Memory
//
// Events are read without reflection. Delta strings are views of an
// append-only arena owned by the stream, so a delta costs no allocation
// beyond the arena's amortised growth.
package responsesstream
