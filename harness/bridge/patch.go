package bridge

import (
	"encoding/json"
	"strings"

	"github.com/harnessflow/harnessflow/protocol"
)

// Codex's file-editing tool: apply_patch, advertised as a freeform custom
// tool (gpt-5 models) or, with apply_patch_tool_type = "function", as a
// function taking {"input": PATCH}. A native file-writing call can reach the
// client as an apply_patch call instead of a shell command (see
// Mapping.Patch), so that the user sees a file change, not a printf line.
//
// Only whole-file writes are bridged this way: a patch adds a file (Codex's
// "Add File" hunk writes the file, replacing one that exists), and needs no
// knowledge of the file's text. A string replacement (an edit tool) cannot
// be written as a patch without the file's lines, which a stateless proxy
// does not have; it stays a shell command (EditCommand).

// PatchToolName is the name of Codex's patch tool.
const PatchToolName = "apply_patch"

// Patch grammar lines (Codex's apply_patch format).
const (
	patchBegin   = "*** Begin Patch"
	patchEnd     = "*** End Patch"
	patchAddFile = "*** Add File: "
)

// patchKind is how the client takes a patch.
type patchKind uint8

const (
	patchNone     patchKind = iota
	patchCustom             // a custom_tool_call whose input is the patch
	patchFunction           // a function_call with {"input": PATCH}
)

// detectPatch finds a top-level apply_patch tool among the client's tools.
func detectPatch(tools []protocol.ToolSpec) patchKind {
	for _, t := range tools {
		if t.Name != PatchToolName {
			continue
		}
		switch t.Type {
		case protocol.ToolTypeCustom:
			return patchCustom
		case protocol.ToolTypeFunction:
			if parseSchema(t.Parameters).is("input", "string") {
				return patchFunction
			}
		}
	}
	return patchNone
}

// Patches reports whether the client advertised apply_patch in a form the
// bridge can call.
func (c ClientShell) Patches() bool { return c.patch != patchNone }

// patchItem returns the client's apply_patch call carrying patch.
func (c ClientShell) patchItem(callID, itemID, patch string) (protocol.ResponseItem, bool) {
	switch c.patch {
	case patchCustom:
		return &protocol.CustomToolCall{ID: itemID, Status: "completed", CallID: callID, Name: PatchToolName, Input: patch}, true
	case patchFunction:
		var o jsonObject
		o.str("input", patch)
		return &protocol.FunctionCall{ID: itemID, Name: PatchToolName, CallID: callID, Arguments: o.String()}, true
	}
	return nil, false
}

// AddFilePatch returns the apply_patch patch that writes content to path
// (an "Add File" hunk, which replaces a file that exists). ok is false when
// the patch cannot say it exactly: an empty path or content (the hunk needs
// a line), content that does not end in a newline (every patch line ends in
// one), or content holding a carriage return (the patch reader drops it).
func AddFilePatch(path, content string) (patch string, ok bool) {
	if path == "" || strings.ContainsAny(path, "\r\n") || content == "" ||
		!strings.HasSuffix(content, "\n") || strings.ContainsRune(content, '\r') {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(content) + len(path) + 64)
	b.WriteString(patchBegin + "\n" + patchAddFile + path + "\n")
	for line := range strings.SplitSeq(strings.TrimSuffix(content, "\n"), "\n") {
		b.WriteByte('+')
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteString(patchEnd + "\n")
	return b.String(), true
}

// ParseAddFilePatch reads a patch made of one "Add File" hunk, as
// AddFilePatch writes it (surrounding white space and a final newline
// after the end line are optional), and returns its path and content; ok is
// false for any other patch.
func ParseAddFilePatch(patch string) (path, content string, ok bool) {
	lines := strings.Split(strings.TrimSpace(patch), "\n")
	if len(lines) < 4 || lines[0] != patchBegin || lines[len(lines)-1] != patchEnd {
		return "", "", false
	}
	path, ok = strings.CutPrefix(lines[1], patchAddFile)
	if !ok || path == "" {
		return "", "", false
	}
	var b strings.Builder
	for _, l := range lines[2 : len(lines)-1] {
		rest, ok := strings.CutPrefix(l, "+")
		if !ok {
			return "", "", false
		}
		b.WriteString(rest)
		b.WriteByte('\n')
	}
	return path, b.String(), true
}

// WritePatch returns a Mapping.Patch for a file-writing tool whose
// arguments hold the path under pathKey and the content under contentKey
// ("" for "path" and "content", as in WriteSpec).
func WritePatch(pathKey, contentKey string) func(args json.RawMessage) (string, bool) {
	pathKey, contentKey = keyOr(pathKey, "path"), keyOr(contentKey, "content")
	return func(raw json.RawMessage) (string, bool) {
		a, err := parseArgs(raw)
		if err != nil {
			return "", false
		}
		path, err1 := a.str(pathKey)
		content, err2 := a.str(contentKey)
		if err1 != nil || err2 != nil {
			return "", false
		}
		return AddFilePatch(path, content)
	}
}

// WriteFromPatch returns a Mapping.FromPatch for a file-writing tool:
// the native arguments {pathKey: PATH, contentKey: CONTENT} of an Add File
// patch.
func WriteFromPatch(pathKey, contentKey string) func(patch string) (string, bool) {
	pathKey, contentKey = keyOr(pathKey, "path"), keyOr(contentKey, "content")
	return func(patch string) (string, bool) {
		path, content, ok := ParseAddFilePatch(patch)
		if !ok {
			return "", false
		}
		var o jsonObject
		o.str(pathKey, path)
		o.str(contentKey, content)
		return o.String(), true
	}
}

// patchRewrite returns the client's apply_patch call for a native call of
// m, when m has a Patch, the client takes patches and the call can be said
// as one.
func (c ClientShell) patchRewrite(m Mapping, v *protocol.FunctionCall) (protocol.ResponseItem, bool) {
	if m.Patch == nil || c.patch == patchNone {
		return nil, false
	}
	patch, ok := m.Patch(json.RawMessage(v.Arguments))
	if !ok {
		return nil, false
	}
	return c.patchItem(v.CallID, v.ID, patch)
}

// reversePatch turns a client apply_patch call of the history back into
// the native call it was made from: the first mapping with a FromPatch that
// reads the patch.
func (t Table) reversePatch(patch string) (tool, args string, ok bool) {
	for _, m := range t {
		if m.FromPatch == nil {
			continue
		}
		if args, ok := m.FromPatch(patch); ok {
			return m.Tool, args, true
		}
	}
	return "", "", false
}

// patchInput reads the patch of a function-form apply_patch call.
func patchInput(arguments string) (string, bool) {
	a, err := parseArgs(json.RawMessage(arguments))
	if err != nil {
		return "", false
	}
	s, err := a.str("input")
	return s, err == nil && s != ""
}
