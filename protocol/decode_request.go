package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/harnessflow/harnessflow/internal/jsonx"
)

// DecodeRequest decodes a Responses request body the way every entry point
// of harnessflow reads one (the proxy, `shape`, `translate --request`). It
// accepts the shorthand forms of the Responses API that SDK clients send
// and Codex never does: "input" as one string (a user message), a message
// item without "type", and a message content given as one string. A JSON
// syntax error names its line, column and byte offset; a body that is JSON
// but not a request is a [*RequestError] naming the JSON path at fault.
func DecodeRequest(data []byte) (*ResponsesRequest, error) {
	return DecodeRequestWithin(data, RequestLimits{})
}

// RequestLimits bound the top-level arrays of a request body (0: no bound).
type RequestLimits struct {
	InputItems int // "input"
	Tools      int // "tools"
}

// ArrayLimitError is a request whose top-level array Path has more than
// Limit elements (DecodeRequestWithin).
type ArrayLimitError struct {
	Path  string
	Limit int
}

// Error names the path and the bound.
func (e *ArrayLimitError) Error() string {
	return fmt.Sprintf("%s: more than %d elements", e.Path, e.Limit)
}

// DecodeRequestWithin is DecodeRequest with the top-level "input" and
// "tools" arrays bounded: one over its bound is an [*ArrayLimitError],
// found by the syntax check that reads the body before it is decoded (so a
// huge request costs one scan, not its decoding).
func DecodeRequestWithin(data []byte, lim RequestLimits) (*ResponsesRequest, error) {
	var sc jsonx.Scanner
	over, ok := checkSyntax(&sc, data, lim.bounds())
	if over != nil {
		return nil, over
	}
	if !ok {
		// encoding/json's message, which the line and column refer to.
		var raw json.RawMessage
		err := json.Unmarshal(data, &raw)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return nil, fmt.Errorf("%d:%d (byte %d): %w", line, col, se.Offset, err)
		}
		if err == nil {
			err = sc.Check(false)
		}
		return nil, err
	}
	raw := json.RawMessage(data)
	if hasShorthand(&sc, data) {
		var err error
		if raw, err = normalizeInput(raw); err != nil {
			return nil, describeRequestError(err)
		}
	}
	req := new(ResponsesRequest)
	if err := req.UnmarshalJSON(raw); err != nil {
		return nil, describeRequestError(err) // a *RequestError: the JSON path and what is wrong there
	}
	return req, nil
}

// ArrayBound bounds one top-level array of a JSON object body.
type ArrayBound struct {
	Key   string
	Limit int // 0: no bound
}

// CheckArrays reads data as one JSON document and returns an
// [*ArrayLimitError] for the first top-level array of bounds that has more
// elements than its bound — for the bodies of other wires that are bounded
// before they are decoded. A document that is not a JSON object, or not
// valid, is nil here: its decoder says what is wrong with it.
func CheckArrays(data []byte, bounds ...ArrayBound) *ArrayLimitError {
	var sc jsonx.Scanner
	over, _ := checkSyntax(&sc, data, bounds)
	return over
}

func (l RequestLimits) bounds() []ArrayBound {
	if l == (RequestLimits{}) {
		return nil
	}
	return []ArrayBound{{"input", l.InputItems}, {"tools", l.Tools}}
}

// checkSyntax reads data as one JSON document, counting the top-level
// arrays of bounds when it is an object; ok reports whether it is valid
// JSON, over an array that went past its bound (the read stops there).
func checkSyntax(sc *jsonx.Scanner, data []byte, bounds []ArrayBound) (over *ArrayLimitError, ok bool) {
	sc.Reset(data)
	if len(bounds) == 0 || sc.Kind() != jsonx.KindObject {
		return nil, sc.Skip() && sc.End()
	}
	ok = sc.Object(func(key []byte) bool {
		i := slices.IndexFunc(bounds, func(b ArrayBound) bool { return b.Key == string(key) })
		if i < 0 || bounds[i].Limit <= 0 || sc.Kind() != jsonx.KindArray {
			return sc.Skip()
		}
		n := 0
		return sc.Array(func() bool {
			if n++; n > bounds[i].Limit {
				over = &ArrayLimitError{Path: bounds[i].Key, Limit: bounds[i].Limit}
				return false
			}
			return sc.Skip()
		})
	}) && sc.End()
	return over, ok
}

// position converts a byte offset (the byte after the error) to a 1-based
// line and column.
func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off > 0 {
		off-- // SyntaxError.Offset counts the bytes read, including the bad one
	}
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// hasShorthand reports whether the valid document data uses a shorthand
// input form normalizeInput rewrites: "input" as a string, an input item
// with "role" but no "type", or a message whose "content" is a string. It
// reads only the input's items' own members, without decoding anything.
func hasShorthand(sc *jsonx.Scanner, data []byte) bool {
	sc.Reset(data)
	if sc.Kind() != jsonx.KindObject {
		return false
	}
	found := false
	sc.Object(func(key []byte) bool {
		if string(key) != "input" {
			return sc.Skip()
		}
		switch sc.Kind() {
		case jsonx.KindString:
			found = true
			return false
		case jsonx.KindArray:
		default:
			return sc.Skip()
		}
		return sc.Array(func() bool {
			if sc.Kind() != jsonx.KindObject {
				return sc.Skip()
			}
			typed, role, message, textContent := false, false, false, false
			ok := sc.Object(func(key []byte) bool {
				switch string(key) {
				case "type":
					typed = true
					if sc.Kind() == jsonx.KindString {
						v, ok := sc.Str()
						message = string(v) == "message"
						return ok
					}
				case "role":
					role = true
				case "content":
					textContent = sc.Kind() == jsonx.KindString
				}
				return sc.Skip()
			})
			if (!typed && role) || ((message || !typed) && textContent) {
				found = true
				return false
			}
			return ok
		})
	})
	return found
}

// normalizeInput rewrites the shorthand input forms into the engine's item
// forms. Requests without shorthand are returned unchanged.
func normalizeInput(raw json.RawMessage) (json.RawMessage, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return raw, nil // not an object: the decoder says what is wrong
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	in, ok := top["input"]
	if !ok {
		return raw, nil
	}
	var text string
	if t := bytes.TrimSpace(in); len(t) > 0 && t[0] == '"' && json.Unmarshal(t, &text) == nil {
		// (Only a string: null would unmarshal into "" too.)
		msg, err := json.Marshal([]map[string]any{{"type": "message", "role": "user",
			"content": []map[string]string{{"type": ContentInputText, "text": text}}}})
		if err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		top["input"] = msg
		return json.Marshal(top)
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(in, &items) != nil {
		return raw, nil // not an array of objects: the decoder says what is wrong
	}
	changed := false
	for _, it := range items {
		if _, typed := it["type"]; !typed {
			if _, role := it["role"]; !role {
				continue
			}
			it["type"] = json.RawMessage(`"message"`)
			changed = true
		}
		if string(it["type"]) != `"message"` {
			continue
		}
		var content string
		if c := bytes.TrimSpace(it["content"]); len(c) == 0 || c[0] != '"' || json.Unmarshal(c, &content) != nil {
			continue
		}
		partType := ContentInputText
		var role string
		if json.Unmarshal(it["role"], &role) == nil && role == RoleAssistant {
			partType = ContentOutputText
		}
		parts, err := json.Marshal([]map[string]string{{"type": partType, "text": content}})
		if err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		it["content"] = parts
		changed = true
	}
	if !changed {
		return raw, nil
	}
	fixed, err := json.Marshal(items)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	top["input"] = fixed
	return json.Marshal(top)
}
