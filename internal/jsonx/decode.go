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
//
// NewFields reads the object once with a [Scanner] (no reflection) into a list of members
// whose values are slices of a private copy of the object: what an accessor hands out stays
// valid whatever the caller later does with the bytes it passed in. A key that occurs more
// than once keeps its last value, as encoding/json's map decoding does.
type Fields struct {
	members []member
	index   map[string]int // key → position, for objects with many members
	Err     error
}

// member is one key and its value.
type member struct {
	key string
	val json.RawMessage
}

// fieldsIndexAt is the member count from which a Fields looks keys up in a map
// instead of walking the list.
const fieldsIndexAt = 24

var errNotObject = errors.New("expected a JSON object")

// NewFields parses data as a JSON object. A JSON null or any non-object is an error.
//
// The Fields reads data in place: data must not change while the Fields is
// used. What it gives back to keep is a copy (strings, Raw, Extra and the
// values decoded from them), so nothing decoded holds on to data — which
// is why a nested object, handed a span of its parent's data, is not copied
// again at every level. Take and Peek return spans of data, for decoding
// on the spot.
func NewFields(data []byte) (*Fields, error) {
	orig := data // for encoding/json's error messages, which count from its start
	data = TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		if !json.Valid(orig) {
			var v any
			return nil, json.Unmarshal(orig, &v)
		}
		return nil, errNotObject
	}
	var s Scanner
	s.Reset(data)
	d := &Fields{members: make([]member, 0, 8)}
	m := s.Members()
	for m.Next() {
		k := string(m.Key())
		sp, ok := s.RawSpan()
		if !ok {
			break
		}
		d.set(k, data[sp.off:sp.off+sp.n:sp.off+sp.n])
	}
	if !m.Done() || !s.End() {
		// The message encoding/json gives for the same document.
		var v map[string]json.RawMessage
		if err := json.Unmarshal(orig, &v); err != nil {
			return nil, err
		}
		return nil, s.Check(false)
	}
	return d, nil
}

// set records member k (a later occurrence replaces the value of an earlier one).
func (d *Fields) set(k string, v json.RawMessage) {
	if i := d.find(k); i >= 0 {
		d.members[i].val = v
		return
	}
	d.members = append(d.members, member{k, v})
	switch {
	case d.index != nil:
		d.index[k] = len(d.members) - 1
	case len(d.members) == fieldsIndexAt:
		d.index = make(map[string]int, 2*fieldsIndexAt)
		for i, m := range d.members {
			d.index[m.key] = i
		}
	}
}

// find returns the position of key k, or -1.
func (d *Fields) find(k string) int {
	if d.index != nil {
		if i, ok := d.index[k]; ok {
			return i
		}
		return -1
	}
	for i := range d.members {
		if d.members[i].key == k {
			return i
		}
	}
	return -1
}

// lookup returns the value of key k, if present.
func (d *Fields) lookup(k string) (json.RawMessage, bool) {
	if i := d.find(k); i >= 0 {
		return d.members[i].val, true
	}
	return nil, false
}

// remove deletes key k (the last member takes its place).
func (d *Fields) remove(k string) {
	i := d.find(k)
	if i < 0 {
		return
	}
	last := len(d.members) - 1
	if d.index != nil {
		delete(d.index, k)
		if i != last {
			d.index[d.members[last].key] = i
		}
	}
	d.members[i] = d.members[last]
	d.members = d.members[:last]
}

func isNull(raw json.RawMessage) bool { return len(raw) == 4 && string(raw) == "null" }

// Fail records err for key k unless an error is already recorded.
func (d *Fields) Fail(k string, err error) {
	if d.Err == nil {
		d.Err = fmt.Errorf("field %s: %w", k, err)
	}
}

// Peek returns the value of key k, if present (even as null), without removing it.
func (d *Fields) Peek(k string) (json.RawMessage, bool) { return d.lookup(k) }

// Take removes key k and returns its value; ok is false when it is missing or null.
func (d *Fields) Take(k string) (json.RawMessage, bool) {
	raw, ok := d.lookup(k)
	if !ok {
		return nil, false
	}
	d.remove(k)
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
	s, err := DecodeString(raw)
	if err != nil {
		d.Fail(k, err)
	}
	return s
}

// DecodeString decodes the JSON string raw as encoding/json does (the same
// replacement of invalid UTF-8 and lone surrogates, the same errors), without
// reflection.
func DecodeString(raw []byte) (string, error) {
	var s Scanner
	s.Reset(raw)
	if b, ok := s.Str(); ok && s.End() {
		return string(b), nil
	}
	var v string
	err := json.Unmarshal(raw, &v)
	return v, err
}

// DecodeStr reads a string like [Fields.Str], but a non-string fails with encoding/json's own
// error ("json: cannot unmarshal number into Go value of type string").
func (d *Fields) DecodeStr(k string) string {
	raw, ok := d.lookup(k)
	if ok && len(raw) > 0 && raw[0] == '"' {
		return d.Str(k)
	}
	return value[string](d, k)
}

// StrPtr reads an optional string; missing or null gives nil.
func (d *Fields) StrPtr(k string) *string {
	if raw, ok := d.lookup(k); !ok || isNull(raw) {
		d.remove(k)
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

// boolValue reads key k as a boolean: the literals directly, anything else
// through encoding/json (for its error).
func (d *Fields) boolValue(k string) (v, ok bool) {
	raw, present := d.lookup(k)
	switch {
	case !present:
		return false, false
	case string(raw) == "true":
		d.remove(k)
		return true, true
	case string(raw) == "false":
		d.remove(k)
		return false, true
	}
	return false, d.Decode(k, &v)
}

// Bool reads a boolean; missing or null gives false.
func (d *Fields) Bool(k string) bool {
	v, _ := d.boolValue(k)
	return v
}

// BoolPtr reads an optional boolean; missing or null gives nil.
func (d *Fields) BoolPtr(k string) *bool {
	if v, ok := d.boolValue(k); ok {
		return &v
	}
	return nil
}

// Int reads an integer; missing or null gives 0.
func (d *Fields) Int(k string) int { return value[int](d, k) }

// Int64 reads an integer; missing or null gives 0.
func (d *Fields) Int64(k string) int64 { return value[int64](d, k) }

// Int64Ptr reads an optional integer; missing or null gives nil.
func (d *Fields) Int64Ptr(k string) *int64 { return ptr[int64](d, k) }

// Uint64Ptr reads an optional unsigned integer; missing or null gives nil.
func (d *Fields) Uint64Ptr(k string) *uint64 { return ptr[uint64](d, k) }

// Strings reads an array of strings; missing or null gives nil.
func (d *Fields) Strings(k string) []string {
	raw, ok := d.lookup(k)
	if !ok || len(raw) == 0 || raw[0] != '[' {
		return value[[]string](d, k)
	}
	var s Scanner
	s.Reset(raw)
	out := []string{}
	e := s.Elems()
	for e.Next() {
		if s.Kind() != KindString {
			return value[[]string](d, k) // encoding/json's error
		}
		v, ok := s.Str()
		if !ok {
			break
		}
		out = append(out, string(v))
	}
	if !e.Done() || !s.End() {
		return value[[]string](d, k)
	}
	d.remove(k)
	return out
}

// Raw reads any JSON value, compacted. Missing gives nil; null gives "null".
func (d *Fields) Raw(k string) json.RawMessage {
	raw, ok := d.lookup(k)
	if !ok {
		return nil
	}
	d.remove(k)
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
	elems, err := SplitArray(raw)
	if err != nil {
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
		d.remove(k)
	}
	if len(d.members) == 0 {
		return nil
	}
	e := make(map[string]json.RawMessage, len(d.members))
	for _, m := range d.members {
		e[m.key] = Compact(m.val)
	}
	return e
}

// Compact returns a compacted copy of a valid JSON value (a copy as it is if it is not valid).
func Compact(raw json.RawMessage) json.RawMessage {
	var s Scanner
	s.Reset(raw)
	if !s.Skip() || !s.End() {
		return append(json.RawMessage(nil), raw...)
	}
	return append(json.RawMessage(nil), s.Compact(TrimSpace(raw))...)
}

// SplitArray returns the elements of the JSON array data, each a slice of
// data (nil for null). Anything else, or malformed JSON, is the error
// encoding/json gives when it decodes data into a []json.RawMessage.
func SplitArray(data []byte) ([]json.RawMessage, error) {
	var s Scanner
	s.Reset(data)
	switch s.Kind() {
	case KindNull:
		if s.lit("null") && s.End() {
			return nil, nil
		}
	case KindArray:
		elems := []json.RawMessage{}
		e := s.Elems()
		for e.Next() {
			sp, ok := s.RawSpan()
			if !ok {
				break
			}
			elems = append(elems, data[sp.off:sp.off+sp.n:sp.off+sp.n])
		}
		if e.Done() && s.End() {
			return elems, nil
		}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		return nil, err
	}
	return elems, nil
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
		s, err := DecodeString(data)
		if err != nil {
			return "", nil, ShapeNull, fmt.Errorf("%s: %w", what, err)
		}
		return s, nil, ShapeString, nil
	case data[0] == '[':
		raws, err := SplitArray(data)
		if err != nil {
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
