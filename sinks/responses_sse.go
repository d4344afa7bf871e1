package sinks

import (
	"io"

	"github.com/harnessflow/harnessflow/wire/responses"
)

// ResponsesSSE is the Responses API event writer.
//
// Deprecated: use [responses.Writer] (package wire/responses).
type ResponsesSSE = responses.Writer

// ResponsesSSEOptions configure a [ResponsesSSE] writer.
//
// Deprecated: use [responses.Options] (package wire/responses).
type ResponsesSSEOptions = responses.Options

// NewResponsesSSE returns a writer of Responses events to w.
//
// Deprecated: use [responses.NewWriter] (package wire/responses).
func NewResponsesSSE(w io.Writer, opts ResponsesSSEOptions) *ResponsesSSE {
	return responses.NewWriter(w, opts)
}

// NewResponseID returns a fresh response id.
//
// Deprecated: use [responses.NewResponseID] (package wire/responses).
func NewResponseID() string { return responses.NewResponseID() }
