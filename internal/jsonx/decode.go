package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Fields reads the members of one JSON object. Each accessor removes the key it reads, so
// what is left at the end is the unknown members (see [Fields.Extra]). The first error sticks
// in Err, as "field KEY: ...".
type Fields struct {
	m   map[string]json.RawMessage
	Err error
}

var errNotObject = errors.New("expected a JSON object")

// NewFields parses data as a JSON object. A JSON null or any non-object is an error.
func NewFields(data []byte) (*Fields, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		if !json.Valid(data) {
			var v any
			return nil, json.Unmarshal(data, &v)
		}
		return nil, errNotObject
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return &Fields{m: m}, nil
}

func isNull(raw json.RawMessage) bool { return len(raw) == 4 && string(raw) == "null" }

// Fail records err for key k unless an error is already recorded.
func (d *Fields) Fail(k string, err error) {
	if d.Err == nil {
		d.Err = fmt.Errorf("field %s: %w", k, err)
	}
}

// Peek returns the value of key k, if present (even as null), without removing it.
func (d *Fields) Peek(k string) (json.RawMessage, bool) {
	raw, ok := d.m[k]
	return raw, ok
}

// Take removes key k and returns its value; ok is false when it is missing or null.
func (d *Fields) Take(k string) (json.RawMessage, bool) {
	raw, ok := d.m[k]
	if !ok {
		return nil, false
	}
	delete(d.m, k)
	if isNull(raw) {
		return nil, false
	}
	return raw, true
}

// Decode reads key k into v with json.Unmarshal. It returns false, leaving v alone, when the
// key is missing or null or on error.
func (d *Fields) Decode(k string, v any) bool {
	raw, ok := d.Take(k)
	if !ok {
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		d.Fail(k, err)
		return false
	}
	return true
}

// Str reads a string; missing or null gives "". Any other non-string is the error
// "expected a string, got ...".
func (d *Fields) Str(k string) string {
	raw, ok := d.Take(k)
	if !ok {
		return ""
	}
	if raw[0] != '"' {
		d.Fail(k, fmt.Errorf("expected a string, got %.20s", raw))
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		d.Fail(k, err)
	}
	return s
}

// DecodeStr reads a string like [Fields.Str], but a non-string fails with encoding/json's own
// error ("json: cannot unmarshal number into Go value of type string").
func (d *Fields) DecodeStr(k string) string { return value[string](d, k) }

// StrPtr reads an optional string; missing or null gives nil.
func (d *Fields) StrPtr(k string) *string {
	if raw, ok := d.m[k]; !ok || isNull(raw) {
		delete(d.m, k)
		return nil
	}
	s := d.Str(k)
	return &s
}

// value reads key k as a T with json.Unmarshal; missing or null gives T's zero value.
func value[T any](d *Fields, k string) T {
	var v T
	d.Decode(k, &v)
	return v
}

// ptr reads key k as a T with json.Unmarshal; missing or null gives nil.
func ptr[T any](d *Fields, k string) *T {
	var v T
	if d.Decode(k, &v) {
		return &v
	}
	return nil
}

// Bool reads a boolean; missing or null gives false.
func (d *Fields) Bool(k string) bool { return value[bool](d, k) }

// BoolPtr reads an optional boolean; missing or null gives nil.
func (d *Fields) BoolPtr(k string) *bool { return ptr[bool](d, k) }

// Int reads an integer; missing or null gives 0.
func (d *Fields) Int(k string) int { return value[int](d, k) }

// Int64 reads an integer; missing or null gives 0.
func (d *Fields) Int64(k string) int64 { return value[int64](d, k) }

// Int64Ptr reads an optional integer; missing or null gives nil.
func (d *Fields) Int64Ptr(k string) *int64 { return ptr[int64](d, k) }

// Uint64Ptr reads an optional unsigned integer; missing or null gives nil.
func (d *Fields) Uint64Ptr(k string) *uint64 { return ptr[uint64](d, k) }

// Strings reads an array of strings; missing or null gives nil.
func (d *Fields) Strings(k string) []string { return value[[]string](d, k) }

// Raw reads any JSON value, compacted. Missing gives nil; null gives "null".
func (d *Fields) Raw(k string) json.RawMessage {
	raw, ok := d.m[k]
	if !ok {
		return nil
	}
	delete(d.m, k)
	return Compact(raw)
}

// RawOrNull reads any JSON value, compacted; missing gives "null".
func (d *Fields) RawOrNull(k string) json.RawMessage {
	if v := d.Raw(k); v != nil {
		return v
	}
	return json.RawMessage("null")
}

// RawOpt reads any JSON value, compacted; missing or null gives nil.
func (d *Fields) RawOpt(k string) json.RawMessage {
	raw, ok := d.Take(k)
	if !ok {
		return nil
	}
	return Compact(raw)
}

// Array reads an array, calling f for each element; an error from f is recorded as
// "field k[i]: ..." and stops the walk. It returns false when the key is missing or null or
// on error.
func (d *Fields) Array(k string, f func(i int, raw json.RawMessage) error) bool {
	raw, ok := d.Take(k)
	if !ok {
		return false
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		d.Fail(k, err)
		return false
	}
	for i, e := range elems {
		if err := f(i, e); err != nil {
			d.Fail(fmt.Sprintf("%s[%d]", k, i), err)
			return false
		}
	}
	return true
}

// Object reads a nested object with f, which returns the nested reader's Err. It returns
// false when the key is missing or null or on error.
func (d *Fields) Object(k string, f func(*Fields) error) bool {
	raw, ok := d.Take(k)
	if !ok {
		return false
	}
	sub, err := NewFields(raw)
	if err == nil {
		err = f(sub)
	}
	if err != nil {
		d.Fail(k, err)
		return false
	}
	return true
}

// Extra returns the members not read so far, except the keys in drop, with compacted values;
// nil when there are none.
func (d *Fields) Extra(drop ...string) map[string]json.RawMessage {
	for _, k := range drop {
		delete(d.m, k)
	}
	if len(d.m) == 0 {
		return nil
	}
	e := make(map[string]json.RawMessage, len(d.m))
	for k, v := range d.m {
		e[k] = Compact(v)
	}
	return e
}

// Compact returns a compacted copy of a valid JSON value (a copy as it is if it is not valid).
func Compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return buf.Bytes()
}

// Shape is which of a string, an array or null [StringOrArray] found.
type Shape int

const (
	// ShapeNull is a JSON null.
	ShapeNull Shape = iota
	// ShapeString is a JSON string.
	ShapeString
	// ShapeArray is a JSON array.
	ShapeArray
)

// StringOrArray decodes a value that may be a JSON string, an array of
// objects or null: the shape of message content on the chat-style wires.
// A string comes back in text; an array's elements are each decoded by
// their own UnmarshalJSON into elems (never nil for an array, even an
// empty one). Errors start with what (such as "chat: content"), an
// element's with what[i].
func StringOrArray[E any, P interface {
	*E
	UnmarshalJSON([]byte) error
}](data []byte, what string) (text string, elems []E, shape Shape, err error) {
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0:
		return "", nil, ShapeNull, fmt.Errorf("%s: empty value", what)
	case data[0] == '"':
		var s string // a local, so that only this branch allocates it
		if err := json.Unmarshal(data, &s); err != nil {
			return "", nil, ShapeNull, fmt.Errorf("%s: %w", what, err)
		}
		return s, nil, ShapeString, nil
	case data[0] == '[':
		var raws []json.RawMessage
		if err := json.Unmarshal(data, &raws); err != nil {
			return "", nil, ShapeNull, fmt.Errorf("%s: %w", what, err)
		}
		elems = make([]E, len(raws))
		for i, raw := range raws {
			if err := P(&elems[i]).UnmarshalJSON(raw); err != nil {
				return "", nil, ShapeNull, fmt.Errorf("%s[%d]: %w", what, i, err)
			}
		}
		return "", elems, ShapeArray, nil
	case string(data) == "null":
		return "", nil, ShapeNull, nil
	default:
		return "", nil, ShapeNull, fmt.Errorf("%s: expected a string, an array or null, got %.40s", what, data)
	}
}
