package request

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/anthropic"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// MessagesStyle is how a harness renders the transcript on the Anthropic
// Messages wire. The zero value renders plainly: no cache marks, tool results
// as they are, nothing collapsed.
type MessagesStyle struct {
	// SystemCache gives every system block rendered from the transcript an
	// ephemeral cache mark.
	SystemCache bool
	// ToolResult renders one tool result; tool is the name of the tool_use
	// it answers ("" when no call of the transcript has its id). nil is
	// [DefaultToolResult].
	ToolResult func(tool string, o *Output) ToolResult
	// CacheLast puts exactly one ephemeral cache mark on the last non-empty
	// text or tool_result block of the messages (and removes any other mark
	// from the messages).
	CacheLast bool
	// CollapseText makes a user message whose only block is one text block
	// without a cache mark a plain string.
	CollapseText bool
	// Edit, when set, edits the rendered body before CacheLast and
	// CollapseText apply (harness-specific reminders, cache marks, system
	// blocks that hash the body).
	Edit func(s *Shaping, body *anthropic.Request) error
}

// ToolResult is the rendered content of one tool_result block and its
// is_error flag (nil: not sent).
type ToolResult struct {
	Content anthropic.Content
	IsError *bool
}

// DefaultToolResult renders a tool output as its text, or its content items
// as blocks (text, image; audio, video and encrypted content as placeholder
// texts), with is_error true when the tool said it failed.
func DefaultToolResult(_ string, o *Output) ToolResult {
	r := ToolResult{Content: OutputContent(o)}
	if o.Success != nil && !*o.Success {
		t := true
		r.IsError = &t
	}
	return r
}

// OutputContent is the tool_result content of a tool output: its text as a
// string, or its items as text and image blocks (other kinds as placeholder
// texts; no items at all as "").
func OutputContent(o *Output) anthropic.Content {
	if o.IsText() {
		return anthropic.Text(o.Text)
	}
	blocks := make([]anthropic.Block, 0, len(o.Items))
	for i := range o.Items {
		it := &o.Items[i]
		switch it.Type {
		case protocol.ContentInputText:
			blocks = append(blocks, anthropic.TextBlock(it.Text))
		case protocol.ContentInputImage:
			blocks = append(blocks, imageBlock(it.ImageURL))
		case protocol.ContentInputAudio:
			blocks = append(blocks, anthropic.TextBlock(OmittedAudio))
		case protocol.ContentInputVideo:
			blocks = append(blocks, anthropic.TextBlock(OmittedVideo))
		case protocol.ContentEncryptedContent:
			blocks = append(blocks, anthropic.TextBlock(OmittedEncrypted))
		}
	}
	if len(blocks) == 0 {
		return anthropic.Text("")
	}
	return anthropic.Blocks(blocks...)
}

// RenderMessages renders a transcript for the Messages wire. The leading
// system messages become system text blocks; the rest become messages:
//
//   - user and developer messages → user text and image blocks (audio as a
//     placeholder text: the wire has no audio input);
//   - a system message after the first other message → a role "system"
//     message (the per-turn-control form Claude Code 2.1 sends);
//   - an assistant turn → its signed reasoning as thinking blocks (a
//     reasoning item without encrypted content is not sent: the server
//     would reject an unsigned thinking block; one whose id says it came
//     from a redacted_thinking block goes back as redacted_thinking), then
//     its text, then one tool_use block per call (input: the arguments
//     object; arguments that are not a JSON object are sent as
//     {"input": TEXT});
//   - a tool result → a user tool_result block (see MessagesStyle.ToolResult).
//
// Consecutive messages of the same role are merged into one block list. In
// a user message the tool_result blocks come first, in the order of the
// calls of the assistant turn before it. Messages that render to no block
// are left out. The style's CacheLast and CollapseText are applied by
// FinishMessages, not here.
func RenderMessages(msgs []Message, style MessagesStyle) (system []anthropic.Block, out []anthropic.Message, err error) {
	result := style.ToolResult
	if result == nil {
		result = DefaultToolResult
	}
	i := 0
	for ; i < len(msgs) && msgs[i].Role == RoleSystem; i++ {
		for _, p := range msgs[i].Content {
			if p.Kind != PartText {
				continue
			}
			b := anthropic.TextBlock(p.Text)
			if style.SystemCache {
				b.CacheControl = anthropic.Ephemeral()
			}
			system = append(system, b)
		}
	}
	names := map[string]string{} // call id → tool name
	out = make([]anthropic.Message, 0, len(msgs)-i)
	for ; i < len(msgs); i++ {
		m := &msgs[i]
		role := anthropic.RoleUser
		var blocks []anthropic.Block
		switch m.Role {
		case RoleAssistant:
			role = anthropic.RoleAssistant
			blocks = thinkingBlocks(m.ReasoningItems)
			blocks = appendParts(blocks, m.Content, true)
			for _, c := range m.Calls {
				names[c.ID] = c.Name
				blocks = append(blocks, anthropic.Block{Type: anthropic.BlockToolUse, ID: c.ID, Name: c.Name, Input: toolInput(c.Arguments)})
			}
		case RoleTool:
			if m.Output == nil {
				return nil, nil, fmt.Errorf("transcript[%d]: tool message without output", i)
			}
			r := result(names[m.CallID], m.Output)
			content := r.Content
			blocks = []anthropic.Block{{Type: anthropic.BlockToolResult, ToolUseID: m.CallID, Content: &content, IsError: r.IsError}}
		case RoleSystem:
			role = anthropic.RoleSystem
			blocks = appendParts(nil, m.Content, false)
		default: // user, developer
			blocks = appendParts(nil, m.Content, false)
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content.Blocks = append(out[n-1].Content.Blocks, blocks...)
			continue
		}
		out = append(out, anthropic.Message{Role: role, Content: anthropic.Blocks(blocks...)})
	}
	orderResults(out)
	return system, out, nil
}

// FinishMessages applies the last rules of a style to rendered messages, in
// place: CacheLast, then CollapseText. request.encode runs it after
// MessagesStyle.Edit.
func FinishMessages(msgs []anthropic.Message, style MessagesStyle) {
	if style.CacheLast {
		cacheLast(msgs)
	}
	if style.CollapseText {
		for j := range msgs {
			c := &msgs[j].Content
			if msgs[j].Role == anthropic.RoleUser && len(c.Blocks) == 1 && c.Blocks[0].Type == anthropic.BlockText &&
				c.Blocks[0].CacheControl == nil && len(c.Blocks[0].Extra) == 0 {
				*c = anthropic.Text(c.Blocks[0].Text)
			}
		}
	}
}

// thinkingBlocks renders the signed reasoning items of a turn.
func thinkingBlocks(items []*protocol.Reasoning) []anthropic.Block {
	var blocks []anthropic.Block
	for _, r := range items {
		if r == nil || r.EncryptedContent == nil || *r.EncryptedContent == "" {
			continue
		}
		if strings.HasPrefix(r.ID, anthropic.RedactedThinkingIDPrefix) {
			blocks = append(blocks, anthropic.Block{Type: anthropic.BlockRedactedThinking, Data: *r.EncryptedContent})
			continue
		}
		blocks = append(blocks, anthropic.Block{Type: anthropic.BlockThinking, Thinking: ReasoningText(r), Signature: *r.EncryptedContent})
	}
	return blocks
}

// ReasoningText is the text of a reasoning item: its content texts
// concatenated, or, when they are empty, its summary texts joined with "\n".
func ReasoningText(r *protocol.Reasoning) string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == protocol.ReasoningTypeText || c.Type == protocol.ReasoningTypeRawText {
			b.WriteString(c.Text)
		}
	}
	if b.Len() > 0 {
		return b.String()
	}
	for i, s := range r.Summary {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s.Text)
	}
	return b.String()
}

// appendParts appends the blocks of message content; with skipEmpty, empty
// texts are left out (an assistant turn's blank content).
func appendParts(dst []anthropic.Block, parts []Part, skipEmpty bool) []anthropic.Block {
	for _, p := range parts {
		switch p.Kind {
		case PartText:
			if skipEmpty && p.Text == "" {
				continue
			}
			dst = append(dst, anthropic.TextBlock(p.Text))
		case PartImage:
			dst = append(dst, imageBlock(p.URL))
		case PartAudio:
			dst = append(dst, anthropic.TextBlock(OmittedAudio))
		}
	}
	return dst
}

// imageBlock is an image block of a URL: a base64 data URL becomes a base64
// source, any other URL a url source.
func imageBlock(url string) anthropic.Block {
	if rest, ok := strings.CutPrefix(url, "data:"); ok {
		meta, data, found := strings.Cut(rest, ",")
		mediaType, params, _ := strings.Cut(meta, ";")
		if found && strings.Contains(";"+params+";", ";base64;") && mediaType != "" {
			b := append([]byte(`{"type":"base64","media_type":`), chat.AppendString(nil, mediaType)...)
			b = append(b, `,"data":`...)
			b = chat.AppendString(b, data)
			return anthropic.Block{Type: anthropic.BlockImage, Source: append(b, '}')}
		}
	}
	b := append([]byte(`{"type":"url","url":`), chat.AppendString(nil, url)...)
	return anthropic.Block{Type: anthropic.BlockImage, Source: append(b, '}')}
}

// toolInput is the input object of a tool_use block from a call's arguments
// text.
func toolInput(args string) json.RawMessage {
	trimmed := bytes.TrimSpace([]byte(args))
	if len(trimmed) == 0 {
		return json.RawMessage(`{}`)
	}
	if trimmed[0] == '{' && json.Valid(trimmed) {
		return trimmed
	}
	b := append([]byte(`{"input":`), chat.AppendString(nil, args)...)
	return append(b, '}')
}

// orderResults puts the tool_result blocks of every user message first, in
// the order of the tool_use blocks of the assistant message before it.
func orderResults(msgs []anthropic.Message) {
	for j := range msgs {
		m := &msgs[j]
		if m.Role != anthropic.RoleUser || j == 0 || msgs[j-1].Role != anthropic.RoleAssistant {
			continue
		}
		blocks := m.Content.Blocks
		if !slices.ContainsFunc(blocks, isResult) {
			continue
		}
		order := map[string]int{}
		for k, b := range msgs[j-1].Content.Blocks {
			if b.Type == anthropic.BlockToolUse {
				order[b.ID] = k
			}
		}
		rank := func(b anthropic.Block) int {
			if !isResult(b) {
				return 1 << 30
			}
			if k, ok := order[b.ToolUseID]; ok {
				return k
			}
			return 1<<30 - 1
		}
		slices.SortStableFunc(blocks, func(a, b anthropic.Block) int { return rank(a) - rank(b) })
	}
}

func isResult(b anthropic.Block) bool { return b.Type == anthropic.BlockToolResult }

// cacheLast leaves exactly one ephemeral cache mark in the messages: on the
// last non-empty text or tool_result block.
func cacheLast(msgs []anthropic.Message) {
	marked := false
	for j := len(msgs) - 1; j >= 0; j-- {
		blocks := msgs[j].Content.Blocks
		for k := len(blocks) - 1; k >= 0; k-- {
			b := &blocks[k]
			candidate := b.Type == anthropic.BlockText && b.Text != "" ||
				b.Type == anthropic.BlockToolResult && b.Content != nil && !b.Content.IsEmpty()
			if !marked && candidate {
				b.CacheControl = anthropic.Ephemeral()
				marked = true
				continue
			}
			b.CacheControl = nil
		}
	}
}

// MessagesEncode returns the request.encode stage of the Messages wire. The
// body starts from Shaping.MessagesBody (its model defaulting to the
// request's); the transcript's leading system text is appended to its
// system blocks and the rest of the transcript to its messages
// ([RenderMessages]); Shaping.Tools become client tools (name,
// description, input_schema, strict) after those already in the body; then
// MessagesStyle.Edit runs, FinishMessages applies the cache and collapse
// rules, and the body is encoded. The path is
// Shaping.Path, "/messages" when it was left at the chat default; the result
// carries the query, headers, title request and ToolKinds.
func MessagesEncode(style MessagesStyle) pipeline.Stage[*Shaping, Shaped] {
	return pipeline.Func[*Shaping, Shaped](func(_ context.Context, s *Shaping, emit func(Shaped)) error {
		if s == nil || s.Request == nil {
			return fmt.Errorf("no request to shape")
		}
		system, msgs, err := RenderMessages(s.Transcript, style)
		if err != nil {
			return err
		}
		body := s.MessagesBody
		if body.Model == "" {
			body.Model = s.Request.Model
		}
		if len(system) > 0 {
			blocks := slices.Clone(body.System.Blocks)
			if body.System.Kind == anthropic.ContentText && body.System.Text != "" {
				blocks = append([]anthropic.Block{anthropic.TextBlock(body.System.Text)}, blocks...)
			}
			body.System = anthropic.Blocks(append(blocks, system...)...)
		}
		body.Messages = append(slices.Clone(body.Messages), msgs...)
		if len(s.Tools) > 0 {
			tools := make([]anthropic.Tool, 0, len(body.Tools)+len(s.Tools))
			tools = append(tools, body.Tools...)
			for _, t := range s.Tools {
				tools = append(tools, anthropic.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters, Strict: t.Strict})
			}
			body.Tools = tools
		}
		if style.Edit != nil {
			if err := style.Edit(s, &body); err != nil {
				return err
			}
		}
		FinishMessages(body.Messages, style)
		data, err := body.AppendJSON(nil)
		if err != nil {
			return err
		}
		out := s.result(data)
		if s.Path == "" || s.Path == chat.Path {
			out.Path = anthropic.Path
		}
		emit(out)
		return nil
	})
}

// MessagesEncodeNode returns the request.encode node of the Messages wire
// rendering in style.
func MessagesEncodeNode(style MessagesStyle) pipeline.Node {
	return pipeline.StageNode(NodeEncode, MessagesEncode(style),
		pipeline.Describe("transcript + tools → Anthropic Messages body bytes, with path, headers, title request"))
}
