package textcall

// glm47 is GLM-4.7's and GLM-5's spacing of the GLM call markup (no
// newlines: <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>);
// the parser is glm45's, see glm45.go.
func init() {
	Register(Format{
		Name:    "glm47",
		Summary: "GLM-4.7/5: <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>",
		New:     func(cfg Config) Parser { return newGLM("glm47", cfg) },
		Starts:  []string{glmOpen},
		Claim:   func(rest string, _ bool) Claim { return glmClaim(rest, false) },
		Models:  []string{"glm-4.7", "glm4.7", "glm-4-7", "glm-5", "glm5"},
		Render:  func(calls []Call) string { return renderGLM(calls, "") },
	})
}
