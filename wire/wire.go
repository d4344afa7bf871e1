// Package wire names the upstream wire protocols harnessflow speaks; its
// subpackages (wire/chat, wire/anthropic, wire/responses) hold each wire's
// types. The name sits here, below the stages and the harness layer, so
// that code choosing a decoder or a route (the stages, translate, bench,
// the server) needs no harness to say which wire it means.
package wire

import "fmt"

// Wire is an upstream wire protocol.
type Wire string

// The upstream wires.
const (
	// Responses is the OpenAI Responses API.
	Responses Wire = "responses"
	// Chat is the Chat Completions API.
	Chat Wire = "chat"
	// Messages is the Anthropic Messages API.
	Messages Wire = "messages"
)

// All returns every wire, in the order of the routing matrix
// (docs/routing.md#routing-matrix): responses, chat, messages.
func All() []Wire { return []Wire{Responses, Chat, Messages} }

// Parse parses "responses", "chat" or "messages"; anything else is an error
// naming the choices.
func Parse(s string) (Wire, error) {
	switch w := Wire(s); w {
	case Responses, Chat, Messages:
		return w, nil
	}
	return "", fmt.Errorf("unknown wire %q: want responses, chat or messages", s)
}
