package server

import "github.com/harnessflow/harnessflow/pipeline"

// streamNode starts counting the client's stream of x (harnessflow_streams_
// started_total) and returns its counting node. endStream, deferred by the
// handler, counts its end.
func (s *Server) streamNode(x *exchange) pipeline.Node {
	if x.stream == nil {
		x.stream = s.metrics.StartStream()
	}
	return x.stream.Node()
}

// endStream counts the end of x's stream, if it started, with the request's
// outcome: every started stream ends once, whether by its terminal event, a
// run error, a client that went away or the shutdown. An outcome that is not
// a stream outcome (a failure after the stream was set up) counts as failed.
func (s *Server) endStream(x *exchange) {
	if x.stream != nil {
		x.stream.End(x.outcome, x.failure)
	}
	s.endRouted(x)
}
