package request

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// Chat tool names of the engine's built-in tools (SPEC §B.2).
const (
	ToolNameLocalShell      = "local_shell"
	ToolNameToolSearch      = "tool_search"
	ToolNameImageGeneration = "image_generation"
	ToolNameWebSearch       = "web_search"
)

// AbortedOutput answers, at the end of the history, a tool call whose output
// never came.
const AbortedOutput = "aborted"

// History returns the request.history stage: the engine history
// (Request.Input) is flattened into chat messages, appended to Body.Messages,
// with the accumulate-and-flush rule of SPEC §B.2:
//
//   - assistant texts are held and merged; tool calls (function, custom,
//     local_shell, tool_search) are held with them; both are flushed into
//     one assistant message when a tool output or a user turn arrives, with
//     the reasoning seen so far as its reasoning_content;
//   - developer messages become user messages; user, developer and system
//     messages that arrive while calls are unanswered are held back until
//     the last of those calls is answered;
//   - at the end, calls never answered get an "aborted" tool message, held
//     messages follow, and reasoning still pending becomes an assistant
//     message with empty content.
//
// Namespaced function calls take the chat name request.tools gives their
// tool. Item types the chat wire has no place for (web_search_call,
// compaction, additional_tools, unknown types) are skipped.
func History(opts Options) pipeline.Stage[*Shaping, *Shaping] {
	return stage(func(_ context.Context, s *Shaping) error {
		log := opts.logger()
		return flatten(s, func(ns, name string) string { return s.functionCallName(ns, name, log) })
	})
}

// HistoryNode returns the request.history node.
func HistoryNode(opts Options) pipeline.Node {
	return pipeline.StageNode(NodeHistory, History(opts),
		pipeline.Describe("history items → chat messages (accumulate and flush)"))
}

// MessageContent converts a message's content items (SPEC §B.2): none → no
// content; one text → a plain string; one image → [image_url]; one audio →
// [input_audio]; several → an array of text, image_url and input_audio parts.
// Items of unknown types are left out.
func MessageContent(items []protocol.ContentItem) chat.Content {
	known := 0
	var single *protocol.ContentItem
	for i := range items {
		if contentKnown(items[i].Type) {
			known++
			single = &items[i]
		}
	}
	switch known {
	case 0:
		return chat.Content{}
	case 1:
		if single.Type == protocol.ContentInputText || single.Type == protocol.ContentOutputText {
			return chat.Text(single.Text)
		}
		return chat.Parts(contentPart(single))
	}
	parts := make([]chat.Part, 0, known)
	for i := range items {
		if contentKnown(items[i].Type) {
			parts = append(parts, contentPart(&items[i]))
		}
	}
	return chat.Parts(parts...)
}

func contentKnown(t string) bool {
	switch t {
	case protocol.ContentInputText, protocol.ContentOutputText, protocol.ContentInputImage, protocol.ContentInputAudio:
		return true
	}
	return false
}

func contentPart(c *protocol.ContentItem) chat.Part {
	switch c.Type {
	case protocol.ContentInputImage:
		return chat.Part{Type: chat.PartImageURL, ImageURL: &chat.ImageURL{URL: c.ImageURL}}
	case protocol.ContentInputAudio:
		if data, format, ok := audioDataURL(c.AudioURL); ok {
			return chat.Part{Type: chat.PartInputAudio, InputAudio: &chat.InputAudio{Data: data, Format: format}}
		}
		return chat.Part{Type: chat.PartInputAudio, AudioURL: c.AudioURL}
	}
	return chat.TextPart(c.Text)
}

// audioDataURL splits "data:audio/<subtype>;base64,<data>" into the data and
// the chat wire's format name.
func audioDataURL(url string) (data, format string, ok bool) {
	rest, ok := strings.CutPrefix(url, "data:audio/")
	if !ok {
		return "", "", false
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", false
	}
	subtype, params, _ := strings.Cut(meta, ";")
	if !strings.Contains(";"+params+";", ";base64;") {
		return "", "", false
	}
	switch subtype = strings.ToLower(subtype); subtype {
	case "wav", "wave", "x-wav", "vnd.wave":
		format = "wav"
	case "mpeg", "mp3", "mpeg3", "x-mpeg-3":
		format = "mp3"
	case "":
		return "", "", false
	default:
		format = subtype
	}
	return data, format, true
}

// mergeContent adds next to the pending assistant content: string + string
// concatenate, arrays concatenate, and a string meeting an array becomes a
// text part.
func mergeContent(cur, next chat.Content) chat.Content {
	switch {
	case cur.Kind == chat.ContentNone:
		return next
	case cur.Kind == chat.ContentText && next.Kind == chat.ContentText:
		return chat.Text(cur.Text + next.Text)
	}
	parts := make([]chat.Part, 0, partCount(cur)+partCount(next))
	parts = appendParts(parts, cur)
	parts = appendParts(parts, next)
	return chat.Parts(parts...)
}

func partCount(c chat.Content) int {
	if c.Kind == chat.ContentText {
		return 1
	}
	return len(c.Parts)
}

func appendParts(dst []chat.Part, c chat.Content) []chat.Part {
	switch c.Kind {
	case chat.ContentText:
		return append(dst, chat.TextPart(c.Text))
	case chat.ContentParts:
		return append(dst, c.Parts...)
	}
	return dst
}

// flattener is the accumulate-and-flush state of one history conversion.
type flattener struct {
	out       []chat.Message
	reasoning string          // pending reasoning, taken by the next flush
	content   chat.Content    // pending assistant content
	calls     []chat.ToolCall // pending tool calls (a window of arena)
	arena     []chat.ToolCall // backing store of every call group
	ids       []string        // calls whose outputs have not been seen
	deferred  []chat.Message  // messages held while calls are unanswered
}

func flatten(s *Shaping, callName func(ns, name string) string) error {
	items := s.Request.Input
	f := flattener{out: s.Body.Messages}
	if need := len(f.out) + len(items) + 1; cap(f.out) < need {
		out := make([]chat.Message, len(f.out), need)
		copy(out, f.out)
		f.out = out
	}
	calls := 0
	for _, it := range items {
		switch it.(type) {
		case *protocol.FunctionCall, *protocol.CustomToolCall, *protocol.LocalShellCall, *protocol.ToolSearchCall:
			calls++
		}
	}
	f.arena = make([]chat.ToolCall, 0, calls)

	for i, it := range items {
		if err := f.item(it, callName); err != nil {
			return fmt.Errorf("input[%d]: %w", i, err)
		}
	}
	f.finish()
	s.Body.Messages = f.out
	return nil
}

var errNilItem = errors.New("nil item")

func (f *flattener) item(it protocol.ResponseItem, callName func(ns, name string) string) error {
	switch v := it.(type) {
	case *protocol.Message:
		if v == nil {
			return errNilItem
		}
		c := MessageContent(v.Content)
		if v.Role == protocol.RoleAssistant {
			if !c.IsEmpty() {
				f.content = mergeContent(f.content, c)
			}
			return nil
		}
		role := v.Role
		if role == protocol.RoleDeveloper {
			role = chat.RoleUser
		}
		m := chat.Message{Role: role, Content: c}
		if len(f.ids) == 0 {
			f.flush()
			f.out = append(f.out, m)
		} else {
			f.deferred = append(f.deferred, m)
		}
	case *protocol.FunctionCall:
		if v == nil {
			return errNilItem
		}
		f.call(v.CallID, callName(v.Namespace, v.Name), v.Arguments)
	case *protocol.CustomToolCall:
		if v == nil {
			return errNilItem
		}
		f.call(v.CallID, v.Name, customArguments(v.Input))
	case *protocol.LocalShellCall:
		if v == nil {
			return errNilItem
		}
		id := v.ID
		if v.CallID != nil && *v.CallID != "" {
			id = *v.CallID
		}
		if id == "" {
			return fmt.Errorf("local_shell_call has neither call_id nor id")
		}
		f.call(id, ToolNameLocalShell, localShellArguments(&v.Action))
	case *protocol.ToolSearchCall:
		if v == nil {
			return errNilItem
		}
		id := v.CallID
		if id == "" {
			id = ToolNameToolSearch
		}
		b := append([]byte(nil), `{"arguments":`...)
		b, err := appendRaw(b, v.Arguments)
		if err != nil {
			return fmt.Errorf("tool_search_call arguments: %w", err)
		}
		b = append(b, `,"execution":`...)
		b = chat.AppendString(b, v.Execution)
		b = append(b, '}')
		f.call(id, ToolNameToolSearch, string(b))
	case *protocol.FunctionCallOutput:
		if v == nil {
			return errNilItem
		}
		text, err := outputText(&v.Output)
		if err != nil {
			return fmt.Errorf("function_call_output: %w", err)
		}
		f.output(v.CallID, text)
	case *protocol.CustomToolCallOutput:
		if v == nil {
			return errNilItem
		}
		text, err := outputText(&v.Output)
		if err != nil {
			return fmt.Errorf("custom_tool_call_output: %w", err)
		}
		f.output(v.CallID, text)
	case *protocol.ToolSearchOutput:
		if v == nil {
			return errNilItem
		}
		id := v.CallID
		if id == "" {
			id = ToolNameToolSearch
		}
		b := append([]byte(nil), `{"execution":`...)
		b = chat.AppendString(b, v.Execution)
		b = append(b, `,"status":`...)
		b = chat.AppendString(b, v.Status)
		b = append(b, `,"tools":[`...)
		for j, t := range v.Tools {
			if j > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendRaw(b, t); err != nil {
				return fmt.Errorf("tool_search_output tools[%d]: %w", j, err)
			}
		}
		b = append(b, "]}"...)
		f.output(id, string(b))
	case *protocol.Reasoning:
		if v == nil {
			return errNilItem
		}
		for _, c := range v.Content {
			if c.Type == protocol.ReasoningTypeText || c.Type == protocol.ReasoningTypeRawText {
				f.reasoning += c.Text
			}
		}
	case nil:
		return errNilItem
	}
	// Everything else (web_search_call, image generation, compaction,
	// additional_tools, unknown items) has no chat form.
	return nil
}

func (f *flattener) call(id, name, args string) {
	f.ids = append(f.ids, id)
	f.arena = append(f.arena, chat.ToolCall{
		ID:       id,
		Type:     chat.ToolTypeFunction,
		Function: chat.FunctionCall{Name: name, Arguments: args},
	})
	start := len(f.arena) - len(f.calls) - 1
	f.calls = f.arena[start:len(f.arena):len(f.arena)]
}

func (f *flattener) output(id, text string) {
	f.flush()
	f.out = append(f.out, chat.Message{Role: chat.RoleTool, Content: chat.Text(text), ToolCallID: id})
	k := 0
	for _, p := range f.ids {
		if p != id {
			f.ids[k] = p
			k++
		}
	}
	f.ids = f.ids[:k]
	if k == 0 && len(f.deferred) > 0 {
		f.out = append(f.out, f.deferred...)
		f.deferred = f.deferred[:0]
	}
}

// flush emits the pending assistant content and tool calls as one assistant
// message, with the pending reasoning. With nothing but reasoning pending it
// does nothing.
func (f *flattener) flush() {
	if f.content.Kind == chat.ContentNone && len(f.calls) == 0 {
		return
	}
	f.out = append(f.out, chat.Message{
		Role:             chat.RoleAssistant,
		Content:          f.content,
		ReasoningContent: f.reasoning,
		ToolCalls:        f.calls,
	})
	f.content, f.reasoning, f.calls = chat.Content{}, "", nil
}

func (f *flattener) finish() {
	f.flush()
	for _, id := range f.ids {
		f.out = append(f.out, chat.Message{Role: chat.RoleTool, Content: chat.Text(AbortedOutput), ToolCallID: id})
	}
	f.ids = f.ids[:0]
	f.out = append(f.out, f.deferred...)
	f.deferred = nil
	if f.reasoning != "" {
		f.out = append(f.out, chat.Message{Role: chat.RoleAssistant, Content: chat.Text(""), ReasoningContent: f.reasoning})
		f.reasoning = ""
	}
}

// outputText is the tool message text of a tool output: the string form as
// it is, or the JSON of the content item array, exactly as the engine writes
// it.
func outputText(p *protocol.FunctionCallOutputPayload) (string, error) {
	if s, ok := p.TextContent(); ok {
		return s, nil
	}
	if b, ok := appendOutputItems(nil, p.Items); ok {
		return string(b), nil
	}
	b, err := p.MarshalJSON()
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// appendOutputItems writes the common content items (input_text,
// input_image, input_audio without extra fields) the way protocol does,
// without its general encoder; ok is false for anything else.
func appendOutputItems(dst []byte, items []protocol.FunctionCallOutputContentItem) (_ []byte, ok bool) {
	n := 2
	for i := range items {
		it := &items[i]
		if len(it.Extra) > 0 {
			return nil, false
		}
		switch it.Type {
		case protocol.ContentInputText, protocol.ContentInputImage, protocol.ContentInputAudio:
		default:
			return nil, false
		}
		n += 48 + len(it.Text) + len(it.ImageURL) + len(it.Detail) + len(it.AudioURL)
	}
	if dst == nil {
		dst = make([]byte, 0, n+n/8)
	}
	dst = append(dst, '[')
	for i := range items {
		it := &items[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		switch it.Type {
		case protocol.ContentInputText:
			dst = append(dst, `{"type":"input_text","text":`...)
			dst = chat.AppendString(dst, it.Text)
		case protocol.ContentInputImage:
			dst = append(dst, `{"type":"input_image","image_url":`...)
			dst = chat.AppendString(dst, it.ImageURL)
			if it.Detail != "" {
				dst = append(dst, `,"detail":`...)
				dst = chat.AppendString(dst, it.Detail)
			}
		default:
			dst = append(dst, `{"type":"input_audio","audio_url":`...)
			dst = chat.AppendString(dst, it.AudioURL)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), true
}

// customArguments is the arguments string of a custom tool call:
// {"input":<input>}.
func customArguments(input string) string {
	b := make([]byte, 0, len(input)+len(input)/8+16)
	b = append(b, `{"input":`...)
	b = chat.AppendString(b, input)
	return string(append(b, '}'))
}

// localShellArguments is the arguments string of a local_shell tool call:
// {"command":[…],"timeout_ms":n|null,"workdir":s|null}.
func localShellArguments(a *protocol.LocalShellAction) string {
	b := make([]byte, 0, 64)
	b = append(b, `{"command":[`...)
	for i, c := range a.Command {
		if i > 0 {
			b = append(b, ',')
		}
		b = chat.AppendString(b, c)
	}
	b = append(b, `],"timeout_ms":`...)
	if a.TimeoutMS == nil {
		b = append(b, "null"...)
	} else {
		b = fmt.Appendf(b, "%d", *a.TimeoutMS)
	}
	b = append(b, `,"workdir":`...)
	if a.WorkingDirectory == nil {
		b = append(b, "null"...)
	} else {
		b = chat.AppendString(b, *a.WorkingDirectory)
	}
	return string(append(b, '}'))
}

// appendRaw appends a compacted copy of a raw JSON value (null when empty).
func appendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return append(dst, "null"...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, fmt.Errorf("invalid JSON: %w", err)
	}
	return buf.Bytes(), nil
}
