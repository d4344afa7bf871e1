// Package protocol holds the engine's types: the Responses-API conversation items
// ([ResponseItem] and its variants), tool descriptions ([ToolSpec]), the prompt handed to
// harnesses ([Prompt]), the Responses request body ([ResponsesRequest]) and the stream events
// the engine produces ([ResponseEvent]).
//
// Every type round-trips through JSON exactly as the reference implementation does
// (docs/protocol.md): items are internally tagged by "type", optional fields are omitted when empty,
// unknown fields are kept in an [Extra] map and written back, and unknown item types are kept
// verbatim as [OtherItem]. Encoding never escapes '<', '>' or '&' (the output is byte-for-byte
// what encoding/json produces with SetEscapeHTML(false)), and never uses reflection on the hot
// paths.
//
// Known lossy points, all inherited from the reference implementation:
//   - an optional string field that is present but empty ("id":"") is omitted when re-encoded;
//   - a reasoning item's "content" is dropped when it holds no "reasoning_text" entry and is
//     written as null when absent (see [Reasoning]);
//   - [FunctionCallOutputPayload.Success] never appears on the wire.
package protocol
