package messagesin

import (
	"encoding/json"
	"strconv"

	"github.com/harnessflow/harnessflow/internal/inboundjson"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/anthropic"
)

// Request is a decoded Messages request.
type Request struct {
	// Responses is the neutral request. Its Stream is the client's
	// "stream"; Store is false (a Messages client cannot refer to a stored
	// response).
	Responses *protocol.ResponsesRequest
	// Stream is the client's "stream".
	Stream bool
	// Thinking reports whether the client asked for thinking (enabled or
	// adaptive).
	Thinking bool
}

// Decode reads a Messages request body. An error is an
// *inboundjson.Error naming the JSON path.
func Decode(body []byte) (*Request, error) {
	top, err := inboundjson.Object(body, "")
	if err != nil {
		if e, ok := err.(*inboundjson.Error); ok && e.Path == "" {
			e.Msg = "the body is not a Messages request: " + e.Msg
		}
		return nil, err
	}
	d := &decoder{}
	out := &Request{}
	req := &protocol.ResponsesRequest{Extra: protocol.Extra{}}
	no := false
	req.Store = &no
	out.Responses = req
	if raw, ok := top["model"]; ok && !inboundjson.IsNull(raw) {
		if req.Model, err = inboundjson.String(raw, "model"); err != nil {
			return nil, err
		}
	}
	if raw, ok := top["stream"]; ok && !inboundjson.IsNull(raw) {
		if out.Stream, err = inboundjson.Bool(raw, "stream"); err != nil {
			return nil, err
		}
		req.Stream = out.Stream
	}
	if raw, ok := top["max_tokens"]; ok && !inboundjson.IsNull(raw) {
		n, err := inboundjson.Int(raw, "max_tokens")
		if err != nil {
			return nil, err
		}
		if n < 1 {
			return nil, inboundjson.Errorf("max_tokens", "want at least 1, got %d", n)
		}
		req.Extra["max_output_tokens"] = json.RawMessage(strconv.FormatInt(n, 10))
	}
	for _, k := range []string{"temperature", "top_p"} {
		if raw, ok := top[k]; ok && !inboundjson.IsNull(raw) {
			if _, err := inboundjson.Float(raw, k); err != nil {
				return nil, err
			}
			req.Extra[k] = inboundjson.Compact(raw)
		}
	}
	if raw, ok := top["system"]; ok && !inboundjson.IsNull(raw) {
		msg, err := d.systemMessage(raw, "system")
		if err != nil {
			return nil, err
		}
		if msg != nil {
			req.Input = append(req.Input, msg)
		}
	}
	raw, ok := top["messages"]
	if !ok || inboundjson.IsNull(raw) {
		return nil, inboundjson.Errorf("messages", "missing: a Messages request needs a messages array")
	}
	msgs, err := inboundjson.Array(raw, "messages")
	if err != nil {
		return nil, err
	}
	for i, m := range msgs {
		items, err := d.message(m, inboundjson.Index("messages", i))
		if err != nil {
			return nil, err
		}
		req.Input = append(req.Input, items...)
	}
	if raw, ok := top["tools"]; ok && !inboundjson.IsNull(raw) {
		if req.Tools, err = tools(raw); err != nil {
			return nil, err
		}
	}
	if raw, ok := top["tool_choice"]; ok && !inboundjson.IsNull(raw) {
		choice, parallel, err := toolChoice(raw)
		if err != nil {
			return nil, err
		}
		req.ToolChoice = choice
		if parallel != nil {
			req.ParallelToolCalls = parallel
		}
	}
	effort := ""
	if raw, ok := top["output_config"]; ok && !inboundjson.IsNull(raw) {
		oc, err := inboundjson.Object(raw, "output_config")
		if err != nil {
			return nil, err
		}
		if raw, ok := oc["effort"]; ok && !inboundjson.IsNull(raw) {
			if effort, err = inboundjson.String(raw, "output_config.effort"); err != nil {
				return nil, err
			}
			if effort == "max" {
				effort = "xhigh"
			}
		}
	}
	if raw, ok := top["thinking"]; ok && !inboundjson.IsNull(raw) {
		on, budgetEffort, err := thinking(raw)
		if err != nil {
			return nil, err
		}
		if on {
			out.Thinking = true
			if effort == "" {
				effort = budgetEffort
			}
			req.Reasoning = &protocol.ReasoningConfig{Effort: effort, Summary: "auto"}
		}
	} else if effort != "" {
		req.Reasoning = &protocol.ReasoningConfig{Effort: effort}
	}
	if raw, ok := top["metadata"]; ok && !inboundjson.IsNull(raw) {
		md, err := inboundjson.Object(raw, "metadata")
		if err != nil {
			return nil, err
		}
		if raw, ok := md["user_id"]; ok && !inboundjson.IsNull(raw) {
			id, err := inboundjson.String(raw, "metadata.user_id")
			if err != nil {
				return nil, err
			}
			req.ClientMetadata = json.RawMessage(`{"user_id":` + string(protocol.AppendString(nil, id)) + `}`)
		}
	}
	if len(req.Extra) == 0 {
		req.Extra = nil
	}
	return out, nil
}

// decoder holds what the conversion of one request counts.
type decoder struct {
	redacted int // redacted_thinking blocks so far (their item ids)
}

// systemMessage converts the system field (a string or text blocks).
func (d *decoder) systemMessage(raw json.RawMessage, path string) (*protocol.Message, error) {
	parts, err := d.userParts(raw, path, true)
	if err != nil || len(parts) == 0 {
		return nil, err
	}
	return &protocol.Message{Role: protocol.RoleSystem, Content: parts}, nil
}

// message converts one entry of messages into items.
func (d *decoder) message(raw json.RawMessage, path string) ([]protocol.ResponseItem, error) {
	m, err := inboundjson.Object(raw, path)
	if err != nil {
		return nil, err
	}
	rawRole, ok := m["role"]
	if !ok {
		return nil, inboundjson.Errorf(inboundjson.Join(path, "role"), "missing: want user, assistant or system")
	}
	role, err := inboundjson.String(rawRole, inboundjson.Join(path, "role"))
	if err != nil {
		return nil, err
	}
	content, ok := m["content"]
	cpath := inboundjson.Join(path, "content")
	if !ok || inboundjson.IsNull(content) {
		return nil, inboundjson.Errorf(cpath, "missing: want a string or an array of content blocks")
	}
	switch role {
	case anthropic.RoleUser:
		return d.userTurn(content, cpath)
	case anthropic.RoleAssistant:
		return d.assistantTurn(content, cpath)
	case anthropic.RoleSystem:
		msg, err := d.systemMessage(content, cpath)
		if err != nil || msg == nil {
			return nil, err
		}
		return []protocol.ResponseItem{msg}, nil
	}
	return nil, inboundjson.Errorf(inboundjson.Join(path, "role"), "want user, assistant or system, got %q", role)
}

// blocks reads a content: a string (one text block) or an array of blocks.
func blocks(raw json.RawMessage, path string) (text *string, bs []map[string]json.RawMessage, err error) {
	if inboundjson.Kind(raw) == "a string" {
		s, err := inboundjson.String(raw, path)
		return &s, nil, err
	}
	arr, err := inboundjson.Array(raw, path)
	if err != nil {
		return nil, nil, inboundjson.Errorf(path, "want a string or an array of content blocks, got %s", inboundjson.Kind(raw))
	}
	bs = make([]map[string]json.RawMessage, len(arr))
	for i, b := range arr {
		if bs[i], err = inboundjson.Object(b, inboundjson.Index(path, i)); err != nil {
			return nil, nil, err
		}
	}
	return nil, bs, nil
}

func blockType(b map[string]json.RawMessage, path string) (string, error) {
	raw, ok := b["type"]
	if !ok {
		return "", inboundjson.Errorf(inboundjson.Join(path, "type"), "missing: every content block has a type")
	}
	return inboundjson.String(raw, inboundjson.Join(path, "type"))
}

func strField(b map[string]json.RawMessage, path, k string, required bool) (string, error) {
	raw, ok := b[k]
	if !ok || inboundjson.IsNull(raw) {
		if required {
			return "", inboundjson.Errorf(inboundjson.Join(path, k), "missing")
		}
		return "", nil
	}
	return inboundjson.String(raw, inboundjson.Join(path, k))
}

// checkCache checks a block's cache_control (an object). The mark is not
// carried into the neutral request: no neutral wire has one, and a
// Responses upstream refuses unknown fields; a Messages upstream gets the
// client's body, marks and all, by the pass-through (docs/inbound.md#messages).
func checkCache(b map[string]json.RawMessage, path string) error {
	raw, ok := b["cache_control"]
	if !ok || inboundjson.IsNull(raw) {
		return nil
	}
	_, err := inboundjson.Object(raw, inboundjson.Join(path, "cache_control"))
	return err
}

// userParts converts the text, image and document blocks of a user (or
// system) content; textOnly refuses other blocks (the system field).
func (d *decoder) userParts(raw json.RawMessage, path string, textOnly bool) ([]protocol.ContentItem, error) {
	text, bs, err := blocks(raw, path)
	if err != nil {
		return nil, err
	}
	if text != nil {
		if *text == "" {
			return nil, nil
		}
		return []protocol.ContentItem{protocol.InputText(*text)}, nil
	}
	var parts []protocol.ContentItem
	for i, b := range bs {
		bpath := inboundjson.Index(path, i)
		p, err := d.userPart(b, bpath, textOnly)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p...)
	}
	return parts, nil
}

func (d *decoder) userPart(b map[string]json.RawMessage, path string, textOnly bool) ([]protocol.ContentItem, error) {
	typ, err := blockType(b, path)
	if err != nil {
		return nil, err
	}
	if err := checkCache(b, path); err != nil {
		return nil, err
	}
	if textOnly && typ != anthropic.BlockText {
		return nil, inboundjson.Errorf(inboundjson.Join(path, "type"), "want text here, got %q", typ)
	}
	switch typ {
	case anthropic.BlockText:
		t, err := strField(b, path, "text", true)
		if err != nil {
			return nil, err
		}
		return []protocol.ContentItem{protocol.InputText(t)}, nil
	case anthropic.BlockImage:
		url, err := imageURL(b, path)
		if err != nil {
			return nil, err
		}
		return []protocol.ContentItem{{Type: protocol.ContentInputImage, ImageURL: url}}, nil
	case "document":
		return documentParts(b, path)
	}
	return nil, inboundjson.Errorf(inboundjson.Join(path, "type"), "block type %q is not one harnessflow takes in a user message (text, image, document, tool_result)", typ)
}

// imageURL is an image block's source as a URL: data:MEDIA;base64,DATA or
// the source's url.
func imageURL(b map[string]json.RawMessage, path string) (string, error) {
	src, spath, err := source(b, path)
	if err != nil {
		return "", err
	}
	typ, err := strField(src, spath, "type", true)
	if err != nil {
		return "", err
	}
	switch typ {
	case "base64":
		media, err := strField(src, spath, "media_type", true)
		if err != nil {
			return "", err
		}
		data, err := strField(src, spath, "data", true)
		if err != nil {
			return "", err
		}
		return "data:" + media + ";base64," + data, nil
	case "url":
		return strField(src, spath, "url", true)
	}
	return "", inboundjson.Errorf(inboundjson.Join(spath, "type"), "want base64 or url, got %q (a file id names a file only Anthropic holds)", typ)
}

func source(b map[string]json.RawMessage, path string) (map[string]json.RawMessage, string, error) {
	spath := inboundjson.Join(path, "source")
	raw, ok := b["source"]
	if !ok {
		return nil, spath, inboundjson.Errorf(spath, "missing")
	}
	src, err := inboundjson.Object(raw, spath)
	return src, spath, err
}

// documentParts converts a document block: a base64 or URL file → an
// input_file item; a plain-text or content source → its text.
func documentParts(b map[string]json.RawMessage, path string) ([]protocol.ContentItem, error) {
	src, spath, err := source(b, path)
	if err != nil {
		return nil, err
	}
	typ, err := strField(src, spath, "type", true)
	if err != nil {
		return nil, err
	}
	title, err := strField(b, path, "title", false)
	if err != nil {
		return nil, err
	}
	extra := protocol.Extra{}
	switch typ {
	case "base64":
		media, err := strField(src, spath, "media_type", true)
		if err != nil {
			return nil, err
		}
		data, err := strField(src, spath, "data", true)
		if err != nil {
			return nil, err
		}
		name := title
		if name == "" {
			name = "document" + extension(media)
		}
		extra["filename"] = protocol.AppendString(nil, name)
		extra["file_data"] = protocol.AppendString(nil, "data:"+media+";base64,"+data)
		return []protocol.ContentItem{{Type: "input_file", Extra: extra}}, nil
	case "url":
		url, err := strField(src, spath, "url", true)
		if err != nil {
			return nil, err
		}
		extra["file_url"] = protocol.AppendString(nil, url)
		return []protocol.ContentItem{{Type: "input_file", Extra: extra}}, nil
	case "text":
		data, err := strField(src, spath, "data", true)
		if err != nil {
			return nil, err
		}
		if title != "" {
			data = title + "\n\n" + data
		}
		return []protocol.ContentItem{protocol.InputText(data)}, nil
	case "content":
		raw, ok := src["content"]
		if !ok {
			return nil, inboundjson.Errorf(inboundjson.Join(spath, "content"), "missing")
		}
		d := &decoder{}
		parts, err := d.userParts(raw, inboundjson.Join(spath, "content"), false)
		if err != nil {
			return nil, err
		}
		return parts, nil
	}
	return nil, inboundjson.Errorf(inboundjson.Join(spath, "type"), "want base64, url, text or content, got %q", typ)
}

func extension(media string) string {
	switch media {
	case "application/pdf":
		return ".pdf"
	case "text/plain":
		return ".txt"
	}
	return ""
}

// userTurn converts a user message: tool_result blocks → outputs, the
// other blocks → user messages, in order.
func (d *decoder) userTurn(raw json.RawMessage, path string) ([]protocol.ResponseItem, error) {
	text, bs, err := blocks(raw, path)
	if err != nil {
		return nil, err
	}
	if text != nil {
		return []protocol.ResponseItem{protocol.UserMessage(*text)}, nil
	}
	var items []protocol.ResponseItem
	var pending *protocol.Message
	flush := func() {
		if pending != nil {
			items = append(items, pending)
			pending = nil
		}
	}
	for i, b := range bs {
		bpath := inboundjson.Index(path, i)
		typ, err := blockType(b, bpath)
		if err != nil {
			return nil, err
		}
		if typ == anthropic.BlockToolResult {
			flush()
			out, err := toolResult(b, bpath)
			if err != nil {
				return nil, err
			}
			items = append(items, out)
			continue
		}
		parts, err := d.userPart(b, bpath, false)
		if err != nil {
			return nil, err
		}
		if pending == nil {
			pending = &protocol.Message{Role: protocol.RoleUser}
		}
		pending.Content = append(pending.Content, parts...)
	}
	flush()
	return items, nil
}

// toolResult converts a tool_result block.
func toolResult(b map[string]json.RawMessage, path string) (*protocol.FunctionCallOutput, error) {
	id, err := strField(b, path, "tool_use_id", true)
	if err != nil {
		return nil, err
	}
	out := &protocol.FunctionCallOutput{CallID: id}
	if raw, ok := b["is_error"]; ok && !inboundjson.IsNull(raw) {
		isErr, err := inboundjson.Bool(raw, inboundjson.Join(path, "is_error"))
		if err != nil {
			return nil, err
		}
		ok := !isErr
		out.Output.Success = &ok
	}
	raw, ok := b["content"]
	cpath := inboundjson.Join(path, "content")
	if !ok || inboundjson.IsNull(raw) {
		out.Output.Text = new(string)
		return out, nil
	}
	text, bs, err := blocks(raw, cpath)
	if err != nil {
		return nil, err
	}
	if text != nil {
		out.Output.Text = text
		return out, nil
	}
	out.Output.Items = []protocol.FunctionCallOutputContentItem{}
	for i, rb := range bs {
		bpath := inboundjson.Index(cpath, i)
		typ, err := blockType(rb, bpath)
		if err != nil {
			return nil, err
		}
		switch typ {
		case anthropic.BlockText:
			t, err := strField(rb, bpath, "text", true)
			if err != nil {
				return nil, err
			}
			out.Output.Items = append(out.Output.Items, protocol.FunctionCallOutputContentItem{Type: protocol.ContentInputText, Text: t})
		case anthropic.BlockImage:
			url, err := imageURL(rb, bpath)
			if err != nil {
				return nil, err
			}
			out.Output.Items = append(out.Output.Items, protocol.FunctionCallOutputContentItem{Type: protocol.ContentInputImage, ImageURL: url})
		case "document":
			parts, err := documentParts(rb, bpath)
			if err != nil {
				return nil, err
			}
			for _, p := range parts {
				if p.Type == protocol.ContentInputText {
					out.Output.Items = append(out.Output.Items, protocol.FunctionCallOutputContentItem{Type: p.Type, Text: p.Text})
				} else {
					out.Output.Items = append(out.Output.Items, protocol.FunctionCallOutputContentItem{Type: p.Type, Extra: p.Extra})
				}
			}
		default:
			return nil, inboundjson.Errorf(inboundjson.Join(bpath, "type"), "want text, image or document in a tool result, got %q", typ)
		}
	}
	return out, nil
}

// assistantTurn converts an assistant message: thinking → reasoning,
// text → an assistant message, tool_use → function calls, in order.
func (d *decoder) assistantTurn(raw json.RawMessage, path string) ([]protocol.ResponseItem, error) {
	text, bs, err := blocks(raw, path)
	if err != nil {
		return nil, err
	}
	if text != nil {
		if *text == "" {
			return nil, nil
		}
		return []protocol.ResponseItem{protocol.AssistantMessage(*text)}, nil
	}
	var items []protocol.ResponseItem
	var pending *protocol.Message
	flush := func() {
		if pending != nil {
			items = append(items, pending)
			pending = nil
		}
	}
	for i, b := range bs {
		bpath := inboundjson.Index(path, i)
		typ, err := blockType(b, bpath)
		if err != nil {
			return nil, err
		}
		switch typ {
		case anthropic.BlockText:
			t, err := strField(b, bpath, "text", true)
			if err != nil {
				return nil, err
			}
			if pending == nil {
				pending = &protocol.Message{Role: protocol.RoleAssistant}
			}
			pending.Content = append(pending.Content, protocol.OutputText(t))
		case anthropic.BlockThinking:
			flush()
			t, err := strField(b, bpath, "thinking", false)
			if err != nil {
				return nil, err
			}
			sig, err := strField(b, bpath, "signature", false)
			if err != nil {
				return nil, err
			}
			r := &protocol.Reasoning{}
			if t != "" {
				r.Content = []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: t}}
			}
			if sig != "" {
				r.EncryptedContent = &sig
			}
			items = append(items, r)
		case anthropic.BlockRedactedThinking:
			flush()
			data, err := strField(b, bpath, "data", true)
			if err != nil {
				return nil, err
			}
			items = append(items, &protocol.Reasoning{ID: anthropic.RedactedThinkingIDPrefix + strconv.Itoa(d.redacted), EncryptedContent: &data})
			d.redacted++
		case anthropic.BlockToolUse:
			flush()
			call, err := toolUse(b, bpath)
			if err != nil {
				return nil, err
			}
			items = append(items, call)
		default:
			return nil, inboundjson.Errorf(inboundjson.Join(bpath, "type"), "block type %q is not one harnessflow takes in an assistant message (text, thinking, redacted_thinking, tool_use)", typ)
		}
	}
	flush()
	return items, nil
}

func toolUse(b map[string]json.RawMessage, path string) (*protocol.FunctionCall, error) {
	id, err := strField(b, path, "id", true)
	if err != nil {
		return nil, err
	}
	name, err := strField(b, path, "name", true)
	if err != nil {
		return nil, err
	}
	args := "{}"
	if raw, ok := b["input"]; ok && !inboundjson.IsNull(raw) {
		if _, err := inboundjson.Object(raw, inboundjson.Join(path, "input")); err != nil {
			return nil, err
		}
		args = string(inboundjson.Compact(raw))
	}
	return &protocol.FunctionCall{CallID: id, Name: name, Arguments: args}, nil
}

// tools converts the client tools. Server tools (a versioned type such as
// web_search_20250305) run on Anthropic's servers: refused by name.
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
		typ, err := strField(m, path, "type", false)
		if err != nil {
			return nil, err
		}
		if typ != "" && typ != "custom" {
			return nil, inboundjson.Errorf(inboundjson.Join(path, "type"), "%q is a server tool, run by Anthropic's servers; harnessflow serves client tools only (no type, or \"custom\")", typ)
		}
		name, err := strField(m, path, "name", true)
		if err != nil {
			return nil, err
		}
		desc, err := strField(m, path, "description", false)
		if err != nil {
			return nil, err
		}
		spec := protocol.ToolSpec{Type: protocol.ToolTypeFunction, Name: name, Description: desc}
		strict := false
		if raw, ok := m["strict"]; ok && !inboundjson.IsNull(raw) {
			if strict, err = inboundjson.Bool(raw, inboundjson.Join(path, "strict")); err != nil {
				return nil, err
			}
		}
		spec.Strict = &strict
		if raw, ok := m["defer_loading"]; ok && !inboundjson.IsNull(raw) {
			v, err := inboundjson.Bool(raw, inboundjson.Join(path, "defer_loading"))
			if err != nil {
				return nil, err
			}
			spec.DeferLoading = &v
		}
		schema, ok := m["input_schema"]
		if !ok || inboundjson.IsNull(schema) {
			return nil, inboundjson.Errorf(inboundjson.Join(path, "input_schema"), "missing: a client tool needs a JSON Schema object")
		}
		if _, err := inboundjson.Object(schema, inboundjson.Join(path, "input_schema")); err != nil {
			return nil, err
		}
		spec.Parameters = inboundjson.Compact(schema)
		out = append(out, spec)
	}
	return out, nil
}

// toolChoice converts tool_choice: auto → "auto", any → "required", none
// → "none", tool → {"type":"function","name"}; disable_parallel_tool_use
// → parallel_tool_calls false.
func toolChoice(raw json.RawMessage) (json.RawMessage, *bool, error) {
	m, err := inboundjson.Object(raw, "tool_choice")
	if err != nil {
		return nil, nil, err
	}
	typ, err := strField(m, "tool_choice", "type", true)
	if err != nil {
		return nil, nil, err
	}
	var parallel *bool
	if raw, ok := m["disable_parallel_tool_use"]; ok && !inboundjson.IsNull(raw) {
		off, err := inboundjson.Bool(raw, "tool_choice.disable_parallel_tool_use")
		if err != nil {
			return nil, nil, err
		}
		on := !off
		parallel = &on
	}
	switch typ {
	case "auto":
		return json.RawMessage(`"auto"`), parallel, nil
	case "any":
		return json.RawMessage(`"required"`), parallel, nil
	case "none":
		return json.RawMessage(`"none"`), parallel, nil
	case "tool":
		name, err := strField(m, "tool_choice", "name", true)
		if err != nil {
			return nil, nil, err
		}
		return json.RawMessage(`{"type":"function","name":` + string(protocol.AppendString(nil, name)) + `}`), parallel, nil
	}
	return nil, nil, inboundjson.Errorf("tool_choice.type", "want auto, any, tool or none, got %q", typ)
}

// thinking reads the thinking switch: on for enabled and adaptive, with the
// effort its budget stands for (docs/inbound.md#messages).
func thinking(raw json.RawMessage) (on bool, effort string, err error) {
	m, err := inboundjson.Object(raw, "thinking")
	if err != nil {
		return false, "", err
	}
	typ, err := strField(m, "thinking", "type", true)
	if err != nil {
		return false, "", err
	}
	switch typ {
	case "disabled":
		return false, "", nil
	case "adaptive":
		return true, "medium", nil
	case "enabled":
		budget := int64(0)
		if raw, ok := m["budget_tokens"]; ok && !inboundjson.IsNull(raw) {
			if budget, err = inboundjson.Int(raw, "thinking.budget_tokens"); err != nil {
				return false, "", err
			}
		}
		return true, BudgetEffort(budget), nil
	}
	return false, "", inboundjson.Errorf("thinking.type", "want enabled, adaptive or disabled, got %q", typ)
}

// BudgetEffort is the reasoning effort a thinking budget stands for: under
// 4096 tokens low, under 16384 medium, else high (no budget: medium).
func BudgetEffort(budget int64) string {
	switch {
	case budget <= 0:
		return "medium"
	case budget < 4096:
		return "low"
	case budget < 16384:
		return "medium"
	}
	return "high"
}
