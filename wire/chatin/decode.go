package chatin

import (
	"encoding/json"
	"strconv"

	"github.com/harnessflow/harnessflow/internal/inboundjson"
	"github.com/harnessflow/harnessflow/protocol"
)

// Request is a decoded Chat Completions request.
type Request struct {
	// Responses is the neutral request; its Stream is the client's, Store
	// false (a chat client cannot refer to a stored response).
	Responses *protocol.ResponsesRequest
	// Stream is the client's "stream".
	Stream bool
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
}

// Decode reads a Chat Completions request body. An error is an
// *inboundjson.Error naming the JSON path.
func Decode(body []byte) (*Request, error) {
	top, err := inboundjson.Object(body, "")
	if err != nil {
		if e, ok := err.(*inboundjson.Error); ok && e.Path == "" {
			e.Msg = "the body is not a Chat Completions request: " + e.Msg
		}
		return nil, err
	}
	out := &Request{}
	req := &protocol.ResponsesRequest{Extra: protocol.Extra{}}
	no := false
	req.Store = &no
	out.Responses = req
	if req.Model, err = optString(top, "", "model"); err != nil {
		return nil, err
	}
	if raw, ok := present(top, "stream"); ok {
		if out.Stream, err = inboundjson.Bool(raw, "stream"); err != nil {
			return nil, err
		}
		req.Stream = out.Stream
	}
	if raw, ok := present(top, "stream_options"); ok {
		so, err := inboundjson.Object(raw, "stream_options")
		if err != nil {
			return nil, err
		}
		if raw, ok := present(so, "include_usage"); ok {
			if out.IncludeUsage, err = inboundjson.Bool(raw, "stream_options.include_usage"); err != nil {
				return nil, err
			}
		}
	}
	if raw, ok := present(top, "n"); ok {
		n, err := inboundjson.Int(raw, "n")
		if err != nil {
			return nil, err
		}
		if n != 1 {
			return nil, inboundjson.Errorf("n", "harnessflow answers one choice: want 1, got %d", n)
		}
	}
	for _, k := range []string{"max_completion_tokens", "max_tokens"} {
		if raw, ok := present(top, k); ok {
			n, err := inboundjson.Int(raw, k)
			if err != nil {
				return nil, err
			}
			if n < 1 {
				return nil, inboundjson.Errorf(k, "want at least 1, got %d", n)
			}
			if _, set := req.Extra["max_output_tokens"]; !set {
				req.Extra["max_output_tokens"] = json.RawMessage(strconv.FormatInt(n, 10))
			}
		}
	}
	for _, k := range []string{"temperature", "top_p"} {
		if raw, ok := present(top, k); ok {
			if _, err := inboundjson.Float(raw, k); err != nil {
				return nil, err
			}
			req.Extra[k] = inboundjson.Compact(raw)
		}
	}
	raw, ok := present(top, "messages")
	if !ok {
		return nil, inboundjson.Errorf("messages", "missing: a Chat Completions request needs a messages array")
	}
	msgs, err := inboundjson.Array(raw, "messages")
	if err != nil {
		return nil, err
	}
	for i, m := range msgs {
		items, err := message(m, inboundjson.Index("messages", i))
		if err != nil {
			return nil, err
		}
		req.Input = append(req.Input, items...)
	}
	if raw, ok := present(top, "tools"); ok {
		if req.Tools, err = tools(raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := present(top, "tool_choice"); ok {
		if req.ToolChoice, err = toolChoice(raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := present(top, "parallel_tool_calls"); ok {
		v, err := inboundjson.Bool(raw, "parallel_tool_calls")
		if err != nil {
			return nil, err
		}
		req.ParallelToolCalls = &v
	}
	effort, err := optString(top, "", "reasoning_effort")
	if err != nil {
		return nil, err
	}
	if effort != "" {
		req.Reasoning = &protocol.ReasoningConfig{Effort: effort, Summary: "auto"}
	}
	if raw, ok := present(top, "response_format"); ok {
		if req.Text, err = responseFormat(raw); err != nil {
			return nil, err
		}
	}
	if v, err := optString(top, "", "verbosity"); err != nil {
		return nil, err
	} else if v != "" {
		if req.Text == nil {
			req.Text = &protocol.TextConfig{}
		}
		req.Text.Verbosity = v
	}
	if req.PromptCacheKey, err = optString(top, "", "prompt_cache_key"); err != nil {
		return nil, err
	}
	if req.ServiceTier, err = optString(top, "", "service_tier"); err != nil {
		return nil, err
	}
	if len(req.Extra) == 0 {
		req.Extra = nil
	}
	return out, nil
}

func present(m map[string]json.RawMessage, k string) (json.RawMessage, bool) {
	raw, ok := m[k]
	if !ok || inboundjson.IsNull(raw) {
		return nil, false
	}
	return raw, true
}

func optString(m map[string]json.RawMessage, path, k string) (string, error) {
	raw, ok := present(m, k)
	if !ok {
		return "", nil
	}
	return inboundjson.String(raw, inboundjson.Join(path, k))
}

func reqString(m map[string]json.RawMessage, path, k string) (string, error) {
	raw, ok := present(m, k)
	if !ok {
		return "", inboundjson.Errorf(inboundjson.Join(path, k), "missing")
	}
	return inboundjson.String(raw, inboundjson.Join(path, k))
}

// message converts one chat message into items.
func message(raw json.RawMessage, path string) ([]protocol.ResponseItem, error) {
	m, err := inboundjson.Object(raw, path)
	if err != nil {
		return nil, err
	}
	role, err := reqString(m, path, "role")
	if err != nil {
		return nil, err
	}
	cpath := inboundjson.Join(path, "content")
	switch role {
	case "system", "developer", "user":
		content, ok := present(m, "content")
		if !ok {
			return nil, inboundjson.Errorf(cpath, "missing: want a string or an array of content parts")
		}
		parts, err := userParts(content, cpath)
		if err != nil {
			return nil, err
		}
		return []protocol.ResponseItem{&protocol.Message{Role: role, Content: parts}}, nil
	case "assistant":
		return assistant(m, path)
	case "tool":
		id, err := reqString(m, path, "tool_call_id")
		if err != nil {
			return nil, err
		}
		out := &protocol.FunctionCallOutput{CallID: id}
		content, ok := present(m, "content")
		if !ok {
			out.Output.Text = new(string)
			return []protocol.ResponseItem{out}, nil
		}
		if inboundjson.Kind(content) == "a string" {
			s, err := inboundjson.String(content, cpath)
			if err != nil {
				return nil, err
			}
			out.Output.Text = &s
			return []protocol.ResponseItem{out}, nil
		}
		parts, err := userParts(content, cpath)
		if err != nil {
			return nil, err
		}
		out.Output.Items = make([]protocol.FunctionCallOutputContentItem, 0, len(parts))
		for _, p := range parts {
			out.Output.Items = append(out.Output.Items, protocol.FunctionCallOutputContentItem{Type: p.Type, Text: p.Text, ImageURL: p.ImageURL, Detail: p.Detail, AudioURL: p.AudioURL, Extra: p.Extra})
		}
		return []protocol.ResponseItem{out}, nil
	case "function":
		return nil, inboundjson.Errorf(inboundjson.Join(path, "role"), `the legacy "function" role is not served: send tool results as role "tool" with a tool_call_id`)
	}
	return nil, inboundjson.Errorf(inboundjson.Join(path, "role"), "want system, developer, user, assistant or tool, got %q", role)
}

// userParts converts a string or an array of text, image_url, input_audio
// and file parts.
func userParts(raw json.RawMessage, path string) ([]protocol.ContentItem, error) {
	if inboundjson.Kind(raw) == "a string" {
		s, err := inboundjson.String(raw, path)
		if err != nil {
			return nil, err
		}
		return []protocol.ContentItem{protocol.InputText(s)}, nil
	}
	arr, err := inboundjson.Array(raw, path)
	if err != nil {
		return nil, inboundjson.Errorf(path, "want a string or an array of content parts, got %s", inboundjson.Kind(raw))
	}
	parts := make([]protocol.ContentItem, 0, len(arr))
	for i, p := range arr {
		ppath := inboundjson.Index(path, i)
		m, err := inboundjson.Object(p, ppath)
		if err != nil {
			return nil, err
		}
		typ, err := reqString(m, ppath, "type")
		if err != nil {
			return nil, err
		}
		switch typ {
		case "text", "input_text":
			t, err := reqString(m, ppath, "text")
			if err != nil {
				return nil, err
			}
			parts = append(parts, protocol.InputText(t))
		case "image_url":
			iu, ok := present(m, "image_url")
			ipath := inboundjson.Join(ppath, "image_url")
			if !ok {
				return nil, inboundjson.Errorf(ipath, "missing")
			}
			c := protocol.ContentItem{Type: protocol.ContentInputImage}
			if inboundjson.Kind(iu) == "a string" {
				if c.ImageURL, err = inboundjson.String(iu, ipath); err != nil {
					return nil, err
				}
			} else {
				obj, err := inboundjson.Object(iu, ipath)
				if err != nil {
					return nil, err
				}
				if c.ImageURL, err = reqString(obj, ipath, "url"); err != nil {
					return nil, err
				}
				if c.Detail, err = optString(obj, ipath, "detail"); err != nil {
					return nil, err
				}
			}
			parts = append(parts, c)
		case "input_audio":
			ia, ok := present(m, "input_audio")
			apath := inboundjson.Join(ppath, "input_audio")
			if !ok {
				return nil, inboundjson.Errorf(apath, "missing")
			}
			obj, err := inboundjson.Object(ia, apath)
			if err != nil {
				return nil, err
			}
			data, err := reqString(obj, apath, "data")
			if err != nil {
				return nil, err
			}
			format, err := reqString(obj, apath, "format")
			if err != nil {
				return nil, err
			}
			parts = append(parts, protocol.ContentItem{Type: protocol.ContentInputAudio, AudioURL: "data:audio/" + format + ";base64," + data})
		case "file":
			f, ok := present(m, "file")
			fpath := inboundjson.Join(ppath, "file")
			if !ok {
				return nil, inboundjson.Errorf(fpath, "missing")
			}
			obj, err := inboundjson.Object(f, fpath)
			if err != nil {
				return nil, err
			}
			extra := protocol.Extra{}
			for _, k := range []string{"file_data", "filename", "file_id"} {
				v, err := optString(obj, fpath, k)
				if err != nil {
					return nil, err
				}
				if v != "" {
					extra[k] = protocol.AppendString(nil, v)
				}
			}
			if len(extra) == 0 {
				return nil, inboundjson.Errorf(fpath, "want file_data, file_id or filename")
			}
			parts = append(parts, protocol.ContentItem{Type: "input_file", Extra: extra})
		default:
			return nil, inboundjson.Errorf(inboundjson.Join(ppath, "type"), "want text, image_url, input_audio or file, got %q", typ)
		}
	}
	return parts, nil
}

// assistant converts an assistant message: reasoning first, then the
// text, then the tool calls.
func assistant(m map[string]json.RawMessage, path string) ([]protocol.ResponseItem, error) {
	var items []protocol.ResponseItem
	for _, k := range []string{"reasoning_content", "reasoning"} {
		t, err := optString(m, path, k)
		if err != nil {
			return nil, err
		}
		if t != "" {
			items = append(items, &protocol.Reasoning{Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: t}}})
			break
		}
	}
	if content, ok := present(m, "content"); ok {
		cpath := inboundjson.Join(path, "content")
		msg := &protocol.Message{Role: protocol.RoleAssistant}
		if inboundjson.Kind(content) == "a string" {
			s, err := inboundjson.String(content, cpath)
			if err != nil {
				return nil, err
			}
			if s != "" {
				msg.Content = []protocol.ContentItem{protocol.OutputText(s)}
			}
		} else {
			arr, err := inboundjson.Array(content, cpath)
			if err != nil {
				return nil, inboundjson.Errorf(cpath, "want a string or an array of text parts, got %s", inboundjson.Kind(content))
			}
			for i, p := range arr {
				ppath := inboundjson.Index(cpath, i)
				pm, err := inboundjson.Object(p, ppath)
				if err != nil {
					return nil, err
				}
				typ, err := reqString(pm, ppath, "type")
				if err != nil {
					return nil, err
				}
				key := "text"
				switch typ {
				case "text", "output_text":
				case "refusal":
					key = "refusal"
				default:
					return nil, inboundjson.Errorf(inboundjson.Join(ppath, "type"), "want text or refusal in an assistant message, got %q", typ)
				}
				t, err := reqString(pm, ppath, key)
				if err != nil {
					return nil, err
				}
				msg.Content = append(msg.Content, protocol.OutputText(t))
			}
		}
		if len(msg.Content) > 0 {
			items = append(items, msg)
		}
	}
	if raw, ok := present(m, "tool_calls"); ok {
		tpath := inboundjson.Join(path, "tool_calls")
		arr, err := inboundjson.Array(raw, tpath)
		if err != nil {
			return nil, err
		}
		for i, c := range arr {
			cpath := inboundjson.Index(tpath, i)
			cm, err := inboundjson.Object(c, cpath)
			if err != nil {
				return nil, err
			}
			if typ, err := optString(cm, cpath, "type"); err != nil {
				return nil, err
			} else if typ != "" && typ != "function" {
				return nil, inboundjson.Errorf(inboundjson.Join(cpath, "type"), "want function, got %q", typ)
			}
			id, err := reqString(cm, cpath, "id")
			if err != nil {
				return nil, err
			}
			fraw, ok := present(cm, "function")
			fpath := inboundjson.Join(cpath, "function")
			if !ok {
				return nil, inboundjson.Errorf(fpath, "missing")
			}
			fm, err := inboundjson.Object(fraw, fpath)
			if err != nil {
				return nil, err
			}
			name, err := reqString(fm, fpath, "name")
			if err != nil {
				return nil, err
			}
			args, err := optString(fm, fpath, "arguments")
			if err != nil {
				return nil, err
			}
			items = append(items, &protocol.FunctionCall{CallID: id, Name: name, Arguments: args})
		}
	}
	return items, nil
}

// tools converts the function tools.
func tools(raw json.RawMessage) ([]protocol.ToolSpec, error) {
	arr, err := inboundjson.Array(raw, "tools")
	if err != nil {
		return nil, err
	}
	out := make([]protocol.ToolSpec, 0, len(arr))
	for i, t := range arr {
		path := inboundjson.Index("tools", i)
		m, err := inboundjson.Object(t, path)
		if err != nil {
			return nil, err
		}
		typ, err := optString(m, path, "type")
		if err != nil {
			return nil, err
		}
		if typ != "" && typ != "function" {
			return nil, inboundjson.Errorf(inboundjson.Join(path, "type"), "want function, got %q", typ)
		}
		fraw, ok := present(m, "function")
		fpath := inboundjson.Join(path, "function")
		if !ok {
			return nil, inboundjson.Errorf(fpath, "missing")
		}
		fm, err := inboundjson.Object(fraw, fpath)
		if err != nil {
			return nil, err
		}
		spec := protocol.ToolSpec{Type: protocol.ToolTypeFunction}
		if spec.Name, err = reqString(fm, fpath, "name"); err != nil {
			return nil, err
		}
		if spec.Description, err = optString(fm, fpath, "description"); err != nil {
			return nil, err
		}
		strict := false
		if raw, ok := present(fm, "strict"); ok {
			if strict, err = inboundjson.Bool(raw, inboundjson.Join(fpath, "strict")); err != nil {
				return nil, err
			}
		}
		spec.Strict = &strict
		if raw, ok := present(fm, "parameters"); ok {
			if _, err := inboundjson.Object(raw, inboundjson.Join(fpath, "parameters")); err != nil {
				return nil, err
			}
			spec.Parameters = inboundjson.Compact(raw)
		}
		out = append(out, spec)
	}
	return out, nil
}

// toolChoice converts tool_choice: the strings as they are, a named
// function as {"type":"function","name"}.
func toolChoice(raw json.RawMessage) (json.RawMessage, error) {
	if inboundjson.Kind(raw) == "a string" {
		s, err := inboundjson.String(raw, "tool_choice")
		if err != nil {
			return nil, err
		}
		switch s {
		case "auto", "none", "required":
			return inboundjson.Compact(raw), nil
		}
		return nil, inboundjson.Errorf("tool_choice", "want auto, none, required or a function, got %q", s)
	}
	m, err := inboundjson.Object(raw, "tool_choice")
	if err != nil {
		return nil, inboundjson.Errorf("tool_choice", "want a string or an object, got %s", inboundjson.Kind(raw))
	}
	fraw, ok := present(m, "function")
	if !ok {
		return nil, inboundjson.Errorf("tool_choice.function", "missing")
	}
	fm, err := inboundjson.Object(fraw, "tool_choice.function")
	if err != nil {
		return nil, err
	}
	name, err := reqString(fm, "tool_choice.function", "name")
	if err != nil {
		return nil, err
	}
	return json.RawMessage(`{"type":"function","name":` + string(protocol.AppendString(nil, name)) + `}`), nil
}

// responseFormat converts response_format: json_schema → text.format.
func responseFormat(raw json.RawMessage) (*protocol.TextConfig, error) {
	m, err := inboundjson.Object(raw, "response_format")
	if err != nil {
		return nil, err
	}
	typ, err := reqString(m, "response_format", "type")
	if err != nil {
		return nil, err
	}
	switch typ {
	case "text":
		return nil, nil
	case "json_object":
		return &protocol.TextConfig{Format: &protocol.TextFormat{Type: "json_object"}}, nil
	case "json_schema":
		sraw, ok := present(m, "json_schema")
		if !ok {
			return nil, inboundjson.Errorf("response_format.json_schema", "missing")
		}
		sm, err := inboundjson.Object(sraw, "response_format.json_schema")
		if err != nil {
			return nil, err
		}
		f := &protocol.TextFormat{Type: "json_schema"}
		if f.Name, err = reqString(sm, "response_format.json_schema", "name"); err != nil {
			return nil, err
		}
		if raw, ok := present(sm, "schema"); ok {
			if _, err := inboundjson.Object(raw, "response_format.json_schema.schema"); err != nil {
				return nil, err
			}
			f.Schema = inboundjson.Compact(raw)
		}
		if raw, ok := present(sm, "strict"); ok {
			if f.Strict, err = inboundjson.Bool(raw, "response_format.json_schema.strict"); err != nil {
				return nil, err
			}
		}
		return &protocol.TextConfig{Format: f}, nil
	}
	return nil, inboundjson.Errorf("response_format.type", "want text, json_object or json_schema, got %q", typ)
}
