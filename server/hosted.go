package server

// hostedTool counts a hosted tool left out of an upstream request
// (docs/request-shaping.md#hosted-tools) and logs the first of each type
// once for the server's lifetime.
func (s *Server) hostedTool(toolType string) {
	if s.proxyMetrics.hostedToolDropped(toolType) {
		s.log.Info("harnessflow: hosted tool not offered to the model: neither the upstream nor the client runs it (counted in harnessflow_hosted_tools_dropped_total; logged once per tool type)",
			"tool", toolType)
	}
}
