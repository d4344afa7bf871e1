package redact

import (
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
)

// RequestName is the node name of the request-direction redaction stage.
const RequestName = "redact.request"

// Request returns req with the secrets in its instructions and input items
// redacted (see Item), before it is shaped for a model. req is never
// modified: a copy is returned when something changes, otherwise req itself.
func (r *Redactor) Request(req *protocol.ResponsesRequest) *protocol.ResponsesRequest {
	if r == nil || req == nil || len(r.dets) == 0 {
		return req
	}
	instr := r.String(req.Instructions)
	input := r.Items(req.Input)
	if instr == req.Instructions && sameItems(input, req.Input) {
		return req
	}
	c := *req
	c.Instructions, c.Input = instr, input
	return &c
}

// Prompt returns p with the secrets in its base instructions and input items
// redacted, copying only what changes.
func (r *Redactor) Prompt(p *protocol.Prompt) *protocol.Prompt {
	if r == nil || p == nil || len(r.dets) == 0 {
		return p
	}
	instr := r.String(p.BaseInstructions)
	input := r.Items(p.Input)
	if instr == p.BaseInstructions && sameItems(input, p.Input) {
		return p
	}
	c := *p
	c.BaseInstructions, c.Input = instr, input
	return &c
}

func sameItems(a, b []protocol.ResponseItem) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// RequestNode returns the request-direction redaction node (RequestName), a
// Stage[request.Shaped, request.Shaped] that redacts the string values of
// the encoded upstream body and of the title request (see JSON). Insert it
// after request.encode, the last node of every request graph, so that it
// sees everything a harness put into the body:
//
//	g, err = g.InsertAfter(request.NodeEncode, redact.RequestNode(r))
func RequestNode(r *Redactor) pipeline.Node {
	return pipeline.StageNode(RequestName, pipeline.Map(func(s request.Shaped) request.Shaped {
		s.Body = r.JSONBytes(s.Body)
		s.TitleRequest = r.JSONBytes(s.TitleRequest)
		return s
	}), pipeline.Describe("redact secrets in the upstream request body"))
}

// JSONBytes is JSON for byte slices (an encoded request body): it returns
// body itself when nothing changes.
func (r *Redactor) JSONBytes(body []byte) []byte {
	if r == nil || len(r.dets) == 0 || len(body) == 0 {
		return body
	}
	s := string(body)
	if out := r.JSON(s); out != s {
		return []byte(out)
	}
	return body
}
