// Package textcall recovers tool calls and reasoning that a model server left
// in the assistant text: the markup an open model writes for a call (Hermes
// <tool_call> JSON, Qwen3-Coder XML, Kimi K2 and DeepSeek special tokens,
// GLM arg tags, Mistral [TOOL_CALLS], gpt-oss harmony channels, MiniMax
// invoke tags, Llama 3 JSON) and <think> blocks, when the server has no tool
// or reasoning parser for the model, or the wrong one.
//
// A [Format] parses one such convention. Its [Parser] reads a reply's text in
// pieces as they stream and turns it into [Event]s: text without the markup,
// reasoning, and tool calls (begin, argument fragments, end). Text that cannot
// start a marker is given back at once; only the shortest tail that could
// still start one is held. Markup left unterminated at the end is given back
// as the original text, never lost.
//
// The chat.textcalls stage ([Node]) runs a parser per choice between
// chat.decode and chat.accumulate, so the recovered calls reach chat.finalize
// as ordinary tool-call fragments and become function or custom tool calls by
// the request's tool kinds. See docs/text-tool-calls.md.
package textcall
