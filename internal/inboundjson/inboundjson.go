// Package inboundjson reads the request bodies of the inbound wires (the
// Anthropic Messages and Chat Completions requests a client sends to the
// proxy) value by value, so that every error names the JSON path of the value
// it is about ("messages[2].content[0].source.data") and says what was
// expected there. It is shared by wire/messagesin and wire/chatin.
package inboundjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Error is a request body that is not what the wire expects: where
// (a JSON path, "" for the body itself) and why.
type Error struct {
	Path string
	Msg  string
}

// Error returns "messages[0].role: want user or assistant, got \"bot\"".
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Errorf returns an Error at path.
func Errorf(path, format string, args ...any) *Error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Join returns the path of key k inside the object at path.
func Join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// Index returns the path of element i of the array at path.
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Kind names the JSON kind of a raw value, for "got …" in errors.
func Kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// IsNull reports whether raw is absent or null.
func IsNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// Object reads an object's members. Key order is not kept.
func Object(raw json.RawMessage, path string) (map[string]json.RawMessage, error) {
	if k := Kind(raw); k != "an object" {
		return nil, Errorf(path, "want an object, got %s", k)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, Errorf(path, "not valid JSON: %v", err)
	}
	return m, nil
}

// Array reads an array's elements.
func Array(raw json.RawMessage, path string) ([]json.RawMessage, error) {
	if k := Kind(raw); k != "an array" {
		return nil, Errorf(path, "want an array, got %s", k)
	}
	var a []json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, Errorf(path, "not valid JSON: %v", err)
	}
	return a, nil
}

// String reads a string.
func String(raw json.RawMessage, path string) (string, error) {
	if k := Kind(raw); k != "a string" {
		return "", Errorf(path, "want a string, got %s", k)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", Errorf(path, "not a valid JSON string: %v", err)
	}
	return s, nil
}

// Bool reads a boolean.
func Bool(raw json.RawMessage, path string) (bool, error) {
	if k := Kind(raw); k != "a boolean" {
		return false, Errorf(path, "want true or false, got %s", k)
	}
	return string(bytes.TrimSpace(raw)) == "true", nil
}

// Int reads a whole number.
func Int(raw json.RawMessage, path string) (int64, error) {
	if k := Kind(raw); k != "a number" {
		return 0, Errorf(path, "want a whole number, got %s", k)
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		return 0, Errorf(path, "want a whole number, got %s", bytes.TrimSpace(raw))
	}
	return n, nil
}

// Float reads a number.
func Float(raw json.RawMessage, path string) (float64, error) {
	if k := Kind(raw); k != "a number" {
		return 0, Errorf(path, "want a number, got %s", k)
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil {
		return 0, Errorf(path, "want a number, got %s", bytes.TrimSpace(raw))
	}
	return f, nil
}

// Compact returns raw compacted (raw itself when it does not compact).
func Compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
