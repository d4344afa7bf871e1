// Package request holds the request-direction stages: they turn the engine's
// Responses request (what Codex sends) into the body an upstream expects.
//
// The native chat graph (docs/request-shaping.md#native-chat-conversion, the "chat-wire-compat" conversion) is
//
//	request.system → request.tools → request.history → request.options → request.provider → request.encode
//
// Every stage but the last takes and returns a *[Shaping], the state of one
// request being shaped: the engine request (read-only), the wire-neutral
// [Message] transcript (system text, then the history flattened by a
// [FlattenPolicy]), the [Tool] definitions with the ToolKinds that map wire
// tool names back to engine tool kinds, and the top-level body fields.
// request.encode renders all of it for one wire ([ChatEncode] with a
// [ChatStyle] for the chat wire) into a [Shaped]: the upstream path, query,
// headers, the body bytes, the optional title request and the ToolKinds —
// the JSON of `harnessflow shape`.
//
// The Anthropic Messages wire has its own request.encode ([MessagesEncode]
// with a [MessagesStyle]) behind the same transcript: the leading system
// messages become system blocks, consecutive same-role messages merge, tool
// results become user tool_result blocks in call order, and an assistant
// turn's signed reasoning (Message.ReasoningItems) goes back as thinking or
// redacted_thinking blocks; the body's other top-level fields come from
// Shaping.MessagesBody.
//
// Harnesses differ in data, not code: a flatten policy (texts merged or
// emitted at once, user turns deferred or not, unanswered calls aborted or
// kept, contextual fragments skipped, calls and outputs rewritten), a chat
// style, and their own system text.
//
// One run shapes one request: the graph's source yields a single *Shaping and
// the sink receives a single Shaped. [Shape] does exactly that. Harness
// packages build their own request graphs from the exported node
// constructors (HistoryNode, ToolsNode, …), replacing or inserting nodes by
// name.
//
// # Decisions beyond the reference implementation
//
//   - Tools the chat wire cannot carry (a tool type other than function,
//     custom, namespace, tool_search and local_shell; a namespace entry of
//     another type; a second tool with a name already taken) are dropped
//     with a debug log, never an error. The log line carries the
//     reference's wording ("unsupported chat wire tool type: X"). Malformed
//     tools — no type, a function, custom or namespace tool without a name
//     — are errors.
//   - Hosted tools (web_search, image_generation, … : HostedToolTypes) are
//     not offered: neither a chat upstream nor the client runs them
//     (docs/request-shaping.md#hosted-tools).
//   - tool_search is emulated: its call goes back as a tool_search_call,
//     the tools a tool_search_output loaded are offered, and tools marked
//     defer_loading wait for a search (docs/request-shaping.md#tool-search).
//   - A custom (freeform) tool inside a namespace (Codex "code mode": the
//     namespace "functions" holds the custom "exec") is carried as a chat
//     function under its plain name with kind custom, matching how
//     custom_tool_call history items are named.
//   - Tools of an "additional_tools" input item (Codex "responses lite"
//     models put every tool there instead of in "tools") are converted like
//     the request's own tools, after them.
//   - local_shell_call and tool_search_call open a pending call just like
//     function_call and custom_tool_call, so an unanswered one is answered
//     with "aborted" and the chat body stays valid.
//   - Merging a plain-string assistant content with an array content turns
//     the string into a text part (the reference produced a nested array no
//     chat server accepts).
//   - tool_choice and parallel_tool_calls are sent only with tools (OpenAI
//     rejects them otherwise); a Responses-form named choice
//     {"type":"function","name":N} is converted to the chat form.
//   - An input_audio content item whose URL is a base64 data URL becomes the
//     OpenAI form {"input_audio":{"data","format"}}; any other URL keeps the
//     reference form {"audio_url"}.
//   - The client's limit, sampling and identity fields (max_output_tokens,
//     temperature, top_p, top_logprobs, user, safety_identifier, metadata,
//     prompt_cache_key), which the reference drops, reach the upstream in
//     the form Options.ClientFields gives the model's server
//     ([ApplyClientFields], docs/request-shaping.md#client-fields).
package request
