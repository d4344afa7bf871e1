package main

// The field tables of the wire packages. A row is a JSON key, the Go field
// and how it is written and read; the encoder writes the rows in order
// (docs/architecture.md: the JSON of a request round-trips exactly, so the
// order is the wire's). Types the package writes by hand (a union whose
// fields depend on its type) still list their keys here.

var chatTable = pkg{name: "chat", types: []typ{
	{name: "Message", recv: "m", public: true, marshal: true, what: "message", fields: []field{
		{key: "role", name: "Role", kind: str},
		{key: "content", name: "Content", kind: content, elem: "content", opt: true},
		{key: "reasoning_content", name: "ReasoningContent", kind: custom, enc: `	if v.ReasoningContent != "" || v.ReasoningSet {
		w.Str("reasoning_content", v.ReasoningContent)
	}`, dec: `	if _, ok := d.Peek("reasoning_content"); ok {
		v.ReasoningContent, v.ReasoningSet = d.DecodeStr("reasoning_content"), true
	}`},
		{key: "tool_calls", name: "ToolCalls", kind: array, elem: "ToolCall", opt: true},
		{key: "tool_call_id", name: "ToolCallID", kind: strOpt},
		{key: "name", name: "Name", kind: strOpt},
	}},
	{name: "Part", recv: "p", public: true, marshal: true, what: "content part", fields: []field{
		{key: "type", name: "Type", kind: str},
		{key: "text", name: "Text", kind: strOpt, enc: `	if v.Type == PartText {
		w.Str("text", v.Text)
	} else {
		w.StrOpt("text", v.Text)
	}`},
		{key: "image_url", name: "ImageURL", kind: object, elem: "ImageURL", ptr: true},
		{key: "input_audio", name: "InputAudio", kind: object, elem: "InputAudio", ptr: true},
		{key: "audio_url", name: "AudioURL", kind: strOpt},
	}},
	{name: "ImageURL", fields: []field{
		{key: "url", name: "URL", kind: str},
		{key: "detail", name: "Detail", kind: strOpt},
	}},
	{name: "InputAudio", fields: []field{
		{key: "data", name: "Data", kind: str},
		{key: "format", name: "Format", kind: str},
	}},
	{name: "ToolCall", recv: "c", public: true, marshal: true, what: "tool call", whatFmt: "tool call %q", whatArgs: "v.ID", fields: []field{
		{key: "id", name: "ID", kind: str},
		{key: "type", name: "Type", kind: str, dflt: "ToolTypeFunction"},
		{key: "function", name: "Function", kind: object, elem: "FunctionCall"},
	}},
	{name: "FunctionCall", fields: []field{
		{key: "name", name: "Name", kind: str},
		{key: "arguments", name: "Arguments", kind: str},
	}},
	{name: "Tool", recv: "t", public: true, marshal: true, what: "tool", whatFmt: "tool %q", whatArgs: "v.Function.Name", fields: []field{
		{key: "type", name: "Type", kind: str, dflt: "ToolTypeFunction"},
		{key: "function", name: "Function", kind: object, elem: "FunctionDef"},
	}},
	{name: "FunctionDef", fields: []field{
		{key: "name", name: "Name", kind: str},
		{key: "description", name: "Description", kind: strOpt},
		{key: "parameters", name: "Parameters", kind: raw, dflt: "defaultParameters"},
		{key: "strict", name: "Strict", kind: boolOpt},
	}},
	{name: "ResponseFormat", recv: "r", public: true, marshal: true, what: "response_format", fields: []field{
		{key: "type", name: "Type", kind: str},
		{key: "json_schema", name: "JSONSchema", kind: object, elem: "JSONSchema", ptr: true},
	}},
	{name: "JSONSchema", fields: []field{
		{key: "name", name: "Name", kind: str},
		{key: "description", name: "Description", kind: strOpt},
		{key: "schema", name: "Schema", kind: raw, dflt: `"null"`},
		{key: "strict", name: "Strict", kind: boolOpt},
	}},
	{name: "Request", recv: "r", public: true, what: "request", fields: []field{
		{key: "model", name: "Model", kind: str},
		{key: "messages", name: "Messages", kind: array, elem: "Message", wrap: true},
		{key: "stream", name: "Stream", kind: boolOpt},
		{key: "stream_options", name: "StreamOptions", kind: rawOpt},
		{key: "max_tokens", name: "MaxTokens", kind: intOpt},
		{key: "max_completion_tokens", name: "MaxCompletionTokens", kind: intOpt},
		{key: "tools", name: "Tools", kind: array, elem: "Tool", opt: true, wrap: true},
		{key: "tool_choice", name: "ToolChoice", kind: rawOpt},
		{key: "parallel_tool_calls", name: "ParallelToolCalls", kind: boolOpt},
		{key: "response_format", name: "ResponseFormat", kind: object, elem: "ResponseFormat", ptr: true},
		{key: "service_tier", name: "ServiceTier", kind: strOpt},
		{key: "store", name: "Store", kind: boolOpt},
		{key: "reasoning_effort", name: "ReasoningEffort", kind: strOpt},
		{key: "thinking", name: "Thinking", kind: rawOpt},
		{key: "verbosity", name: "Verbosity", kind: strOpt},
		{key: "prompt_cache_key", name: "PromptCacheKey", kind: strOpt},
	}},
}}

var anthropicTable = pkg{name: "anthropic", imports: []string{"encoding/json", "fmt", "math"}, types: []typ{
	{name: "Request", recv: "r", public: true, what: "request", fields: []field{
		{key: "model", name: "Model", kind: str},
		{key: "messages", name: "Messages", kind: array, elem: "Message", wrap: true},
		{key: "system", name: "System", kind: content, elem: "content", opt: true, wrap: true},
		{key: "tools", name: "Tools", kind: array, elem: "Tool", opt: true, wrap: true},
		{key: "tool_choice", name: "ToolChoice", kind: rawOpt},
		{key: "thinking", name: "Thinking", kind: object, elem: "Thinking", ptr: true},
		{key: "context_management", name: "ContextManagement", kind: object, elem: "ContextManagement", ptr: true},
		{key: "output_config", name: "OutputConfig", kind: object, elem: "OutputConfig", ptr: true},
		{key: "metadata", name: "Metadata", kind: object, elem: "Metadata", ptr: true},
		{key: "temperature", name: "Temperature", kind: custom, enc: `	if v.Temperature != nil {
		w.Key("temperature")
		w.B = appendFloat(w.B, *v.Temperature)
		if math.IsNaN(*v.Temperature) || math.IsInf(*v.Temperature, 0) {
			w.Fail(fmt.Errorf("field temperature: %v is not a JSON number", *v.Temperature))
		}
	}`, dec: `	if raw, ok := d.Take("temperature"); ok {
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			d.Fail("temperature", err)
		}
		v.Temperature = &f
	}`},
		{key: "max_tokens", name: "MaxTokens", kind: integer},
		{key: "stream", name: "Stream", kind: boolOpt},
	}},
	{name: "Thinking", fields: []field{
		{key: "type", name: "Type", kind: str},
		{key: "budget_tokens", name: "BudgetTokens", kind: intOpt},
		{key: "display", name: "Display", kind: strOpt},
	}},
	{name: "ContextManagement", fields: []field{
		{key: "edits", name: "Edits", kind: array, elem: "ContextEdit"},
	}},
	{name: "ContextEdit", fields: []field{
		{key: "type", name: "Type", kind: str},
		{key: "keep", name: "Keep", kind: rawOpt},
	}},
	{name: "OutputConfig", fields: []field{
		{key: "effort", name: "Effort", kind: strOpt},
		{key: "format", name: "Format", kind: rawOpt},
	}},
	{name: "Metadata", fields: []field{
		{key: "user_id", name: "UserID", kind: strOpt},
	}},
	{name: "Message", recv: "m", public: true, marshal: true, what: "message", fields: []field{
		{key: "role", name: "Role", kind: str},
		{key: "content", name: "Content", kind: content, elem: "content"},
	}},
	// Block is written by hand (its fields depend on its type).
	{name: "Block", recv: "b", public: true, marshal: true, what: "block", whatFmt: "%s block", whatArgs: "v.Type", whatDecoded: true, handEncoded: true, fields: []field{
		{key: "type", name: "Type", kind: str},
		{key: "text", name: "Text", kind: strOpt},
		{key: "thinking", name: "Thinking", kind: strOpt},
		{key: "signature", name: "Signature", kind: strOpt},
		{key: "data", name: "Data", kind: strOpt},
		{key: "id", name: "ID", kind: strOpt},
		{key: "name", name: "Name", kind: strOpt},
		{key: "input", name: "Input", kind: rawOpt},
		{key: "tool_use_id", name: "ToolUseID", kind: strOpt},
		{key: "content", name: "Content", kind: content, ptr: true},
		{key: "is_error", name: "IsError", kind: boolOpt},
		{key: "source", name: "Source", kind: rawOpt},
		{key: "cache_control", name: "CacheControl", kind: object, elem: "CacheControl", ptr: true},
	}},
	{name: "CacheControl", fields: []field{
		{key: "type", name: "Type", kind: str, dflt: "CacheEphemeral"},
		{key: "ttl", name: "TTL", kind: strOpt},
	}},
	{name: "Tool", recv: "t", public: true, marshal: true, what: "tool", whatFmt: "tool %q", whatArgs: "v.Name", fields: []field{
		{key: "type", name: "Type", kind: strOpt},
		{key: "name", name: "Name", kind: str},
		{key: "description", name: "Description", kind: strOpt},
		{key: "input_schema", name: "InputSchema", kind: rawOpt, enc: `	if v.IsClient() {
		w.Raw("input_schema", v.InputSchema, defaultSchema)
	} else {
		w.RawOpt("input_schema", v.InputSchema)
	}`},
		{key: "strict", name: "Strict", kind: boolOpt},
		{key: "defer_loading", name: "DeferLoading", kind: boolOpt},
		{key: "cache_control", name: "CacheControl", kind: object, elem: "CacheControl", ptr: true},
	}},
}}
