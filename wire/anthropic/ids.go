package anthropic

// RedactedThinkingIDPrefix starts the item id of a reasoning item made from
// a redacted_thinking block (the block index follows). The stream decoder
// gives the id and the request encoder recognises it, to send the block
// back as redacted_thinking with its data.
const RedactedThinkingIDPrefix = "anthropic-redacted-thinking-"
