// Package wire names the wire protocols harnessflow speaks; its subpackages
// (wire/chat, wire/anthropic, wire/responses, and the inbound wire/chatin and
// wire/messagesin) hold each wire's types. The name sits here, below the
// stages, so that any layer can name a wire; what a wire is — its paths,
// credentials, decoders and request encoder — is its registered value in
// package codec (docs/architecture.md#wire-codecs).
package wire

// Wire is the name of a wire protocol.
type Wire string

// The built-in wires.
const (
	// Responses is the OpenAI Responses API.
	Responses Wire = "responses"
	// Chat is the Chat Completions API.
	Chat Wire = "chat"
	// Messages is the Anthropic Messages API.
	Messages Wire = "messages"
)
