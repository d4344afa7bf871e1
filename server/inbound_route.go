package server

import (
	"encoding/json"

	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/serveconfig"
)

// requestKind is what the routing configuration's conditional entries
// (when = "thinking" | "long_context", docs/serve-config.md#models-and-routing)
// see of a request: whether it asks for reasoning — a Messages client's
// thinking, a chat client's reasoning_effort, a Responses request's
// reasoning effort other than none — and an estimate of its input tokens,
// about four bytes of its body per token, made only when an entry asks.
func requestKind(x *exchange, req *protocol.ResponsesRequest) serveconfig.Request {
	r := serveconfig.Request{}
	if x.in != nil {
		r.Thinking = x.in.thinking
	} else if rc := req.Reasoning; rc != nil && rc.Effort != "" && rc.Effort != "none" {
		r.Thinking = true
	}
	r.InputTokens = func() int64 {
		if x.in != nil && x.in.body != nil {
			return int64(len(x.in.body) / estimateBytesPerToken)
		}
		b, err := json.Marshal(req)
		if err != nil {
			return 0
		}
		return int64(len(b) / estimateBytesPerToken)
	}
	return r
}
