// Package chatin is the OpenAI Chat Completions API spoken inbound: what a
// chat client (opencode, Continue, Cline, aider, the openai SDKs) sends to
// the proxy's POST /v1/chat/completions, and what it reads back
// (docs/inbound.md#chat-completions).
//
// [Decode] turns a request body into the engine's neutral request, a
// [protocol.ResponsesRequest]; bad input is a *[inboundjson.Error] naming
// the JSON path, written by [AppendError] in OpenAI's shape with the path
// as "param".
//
// [Writer] is a pipeline sink of [protocol.ResponseEvent] that writes
// chat.completion.chunk SSE — content, reasoning_content (or reasoning),
// tool_calls deltas as the spec streams them, the finish_reason chunk, a
// usage chunk when asked, data: [DONE] — or, without a destination,
// builds the chat.completion body ([Writer.AppendCompletion]).
package chatin
