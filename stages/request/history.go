package request

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// Chat tool names of the engine's built-in tools (docs/request-shaping.md#tool-conversion).
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
// (Request.Input) is flattened into the transcript with policy p (nil: the
// native conversion). The native policy is the accumulate-and-flush rule of
// docs/request-shaping.md#history-flattening:
//
//   - assistant texts are held and merged; tool calls (function, custom,
//     local_shell, tool_search) are held with them; both are flushed into
//     one assistant turn when a tool output or a user turn arrives, with
//     the reasoning seen so far;
//   - developer messages become user messages; user, developer and system
//     messages that arrive while calls are unanswered are held back until
//     the last of those calls is answered;
//   - at the end, calls never answered get an "aborted" result, held
//     messages follow, and reasoning still pending becomes an assistant
//     turn with empty content.
//
// Namespaced function calls take the wire names request.tools gave their
// tools (Shaping.ToolNames). Item types with no transcript form
// (web_search_call, compaction, additional_tools, unknown types) are
// skipped.
func History(opts Options, p *FlattenPolicy) pipeline.Stage[*Shaping, *Shaping] {
	return stage(func(_ context.Context, s *Shaping) error {
		out, err := Flatten(s.Transcript, s.Request.Input, p, s.ToolNames)
		if err != nil {
			return err
		}
		s.Transcript = out
		return nil
	})
}

// HistoryNode returns the request.history node flattening with policy p.
func HistoryNode(opts Options, p *FlattenPolicy) pipeline.Node {
	return pipeline.StageNode(NodeHistory, History(opts, p),
		pipeline.Describe("history items → transcript (accumulate and flush)"))
}

// MessageContent converts a message's content items (docs/request-shaping.md#message-content): none → no
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

// OutputPayload returns the output of a function_call_output or
// custom_tool_call_output item, nil for any other item (or a nil one).
func OutputPayload(item protocol.ResponseItem) *protocol.FunctionCallOutputPayload {
	switch v := item.(type) {
	case *protocol.FunctionCallOutput:
		if v != nil {
			return &v.Output
		}
	case *protocol.CustomToolCallOutput:
		if v != nil {
			return &v.Output
		}
	}
	return nil
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
	b = append(b, `{"command":`...)
	b = appendCommand(b, a.Command)
	b = append(b, `,"timeout_ms":`...)
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

// ShellTimeout says how [ShellCallArguments] writes a local_shell_call's
// timeout.
type ShellTimeout int

const (
	// ShellTimeoutNone leaves the timeout out: {"command":[…]}.
	ShellTimeoutNone ShellTimeout = iota
	// ShellTimeoutSeconds writes "timeout" in whole seconds (the
	// milliseconds divided by 1000, rounded down), null when unset.
	ShellTimeoutSeconds
	// ShellTimeoutMillis writes "timeout" in milliseconds, null when unset.
	ShellTimeoutMillis
)

// ShellCallArguments renders a local_shell_call's action as the arguments
// of a harness's own shell tool: {"command":[…]} followed, unless timeout
// is [ShellTimeoutNone], by "timeout" in the given unit or null. The
// working directory is not written. It suits [FlattenPolicy]'s
// LocalShellArguments (wrapped in a closure that fixes the unit).
func ShellCallArguments(a *protocol.LocalShellAction, timeout ShellTimeout) string {
	b := make([]byte, 0, 64)
	b = append(b, `{"command":`...)
	b = appendCommand(b, a.Command)
	if timeout != ShellTimeoutNone {
		b = append(b, `,"timeout":`...)
		switch {
		case a.TimeoutMS == nil:
			b = append(b, "null"...)
		case timeout == ShellTimeoutSeconds:
			b = strconv.AppendUint(b, *a.TimeoutMS/1000, 10)
		default:
			b = strconv.AppendUint(b, *a.TimeoutMS, 10)
		}
	}
	return string(append(b, '}'))
}

// appendCommand appends a command's words as a JSON array of strings.
func appendCommand(b []byte, command []string) []byte {
	b = append(b, '[')
	for i, c := range command {
		if i > 0 {
			b = append(b, ',')
		}
		b = chat.AppendString(b, c)
	}
	return append(b, ']')
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
