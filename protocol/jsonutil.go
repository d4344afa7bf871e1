package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// ---------------------------------------------------------------------------------------------
// Encoding

const hexDigits = "0123456789abcdef"

// safeASCII[b] is true for ASCII bytes that need no escaping inside a JSON string
// (encoding/json's safeSet: '<', '>' and '&' are not escaped).
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// AppendString appends s to dst as a JSON string, escaped exactly as encoding/json does with
// SetEscapeHTML(false): invalid UTF-8 becomes \ufffd, U+2028 and U+2029 are escaped, control
// characters use \b \f \n \r \t or \u00XX.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if safeASCII[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendRaw appends a compacted copy of raw JSON, or ifEmpty when raw is empty.
func appendRaw(dst []byte, raw json.RawMessage, ifEmpty string) ([]byte, error) {
	if len(raw) == 0 {
		return append(dst, ifEmpty...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, fmt.Errorf("invalid raw JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// enc writes JSON objects with keys in call order. The first error sticks.
type enc struct {
	b       []byte
	n       int // fields written in the current object
	base    int // start of the current object's keys in written
	err     error
	written []string // keys written so far, per open object (used to skip Extra collisions)
	wbuf    [16]string
}

// frame is the saved state of the enclosing object.
type frame struct{ n, base int }

func newEnc(dst []byte) *enc {
	w := &enc{b: dst}
	w.written = w.wbuf[:0]
	return w
}

// open starts an object value; close(f) ends it and restores the enclosing object's state.
func (w *enc) open() frame {
	f := frame{w.n, w.base}
	w.b = append(w.b, '{')
	w.n = 0
	w.base = len(w.written)
	return f
}

func (w *enc) close(f frame) {
	w.b = append(w.b, '}')
	w.written = w.written[:w.base]
	w.n, w.base = f.n, f.base
}

// elem writes the separator before array element i.
func (w *enc) elem(i int) {
	if i > 0 {
		w.b = append(w.b, ',')
	}
}

func (w *enc) key(k string) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.written = append(w.written, k)
	w.b = AppendString(w.b, k)
	w.b = append(w.b, ':')
}

func (w *enc) str(k, v string) { w.key(k); w.b = AppendString(w.b, v) }

func (w *enc) strOpt(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *enc) strPtr(k string, v *string) {
	w.key(k)
	if v == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = AppendString(w.b, *v)
}

func (w *enc) boolean(k string, v bool) { w.key(k); w.b = strconv.AppendBool(w.b, v) }

func (w *enc) boolPtr(k string, v *bool) {
	w.key(k)
	if v == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = strconv.AppendBool(w.b, *v)
}

func (w *enc) int(k string, v int64) { w.key(k); w.b = strconv.AppendInt(w.b, v, 10) }

func (w *enc) raw(k string, v json.RawMessage, ifEmpty string) {
	w.key(k)
	w.rawValue(k, v, ifEmpty)
}

func (w *enc) rawValue(field string, v json.RawMessage, ifEmpty string) {
	b, err := appendRaw(w.b, v, ifEmpty)
	if err != nil {
		w.fail(fmt.Errorf("field %s: %w", field, err))
		return
	}
	w.b = b
}

func (w *enc) strings(k string, v []string) {
	w.key(k)
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = AppendString(w.b, s)
	}
	w.b = append(w.b, ']')
}

func (w *enc) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// extra writes the Extra fields (sorted) that were not already written at this level.
func (w *enc) extra(e Extra) {
	if len(e) == 0 {
		return
	}
	keys := make([]string, 0, len(e))
	for k := range e {
		if !slices.Contains(w.written[w.base:], k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		// Extra values are written without recording the key: they cannot collide.
		if w.n > 0 {
			w.b = append(w.b, ',')
		}
		w.n++
		w.b = AppendString(w.b, k)
		w.b = append(w.b, ':')
		w.rawValue(k, e[k], "null")
	}
}

// ---------------------------------------------------------------------------------------------
// Decoding

// dec reads the fields of one JSON object. Each accessor removes the key it reads, so the keys
// left at the end are the unknown ones (see extra). The first error sticks.
type dec struct {
	m   map[string]json.RawMessage
	err error
}

var errNotObject = errors.New("expected a JSON object")

// newDec parses data as a JSON object. A JSON null or any non-object is an error.
func newDec(data []byte) (*dec, error) {
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
	return &dec{m: m}, nil
}

func isNull(raw json.RawMessage) bool { return len(raw) == 4 && string(raw) == "null" }

// take removes and returns key; ok is false when it is missing or null.
func (d *dec) take(k string) (json.RawMessage, bool) {
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

// has reports whether key is present (even as null).
func (d *dec) has(k string) bool { _, ok := d.m[k]; return ok }

func (d *dec) fail(k string, err error) {
	if d.err == nil {
		d.err = fmt.Errorf("field %s: %w", k, err)
	}
}

func (d *dec) unmarshal(k string, v any) bool {
	raw, ok := d.take(k)
	if !ok {
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		d.fail(k, err)
		return false
	}
	return true
}

// str reads a string; missing or null gives "".
func (d *dec) str(k string) string {
	raw, ok := d.take(k)
	if !ok {
		return ""
	}
	if raw[0] != '"' {
		d.fail(k, fmt.Errorf("expected a string, got %.20s", raw))
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		d.fail(k, err)
	}
	return s
}

// strPtr reads an optional string; missing or null gives nil.
func (d *dec) strPtr(k string) *string {
	if raw, ok := d.m[k]; !ok || isNull(raw) {
		delete(d.m, k)
		return nil
	}
	s := d.str(k)
	return &s
}

func (d *dec) boolean(k string) bool {
	var v bool
	d.unmarshal(k, &v)
	return v
}

func (d *dec) boolPtr(k string) *bool {
	var v bool
	if d.unmarshal(k, &v) {
		return &v
	}
	return nil
}

func (d *dec) uint64Ptr(k string) *uint64 {
	var v uint64
	if d.unmarshal(k, &v) {
		return &v
	}
	return nil
}

func (d *dec) int64(k string) int64 {
	var v int64
	d.unmarshal(k, &v)
	return v
}

func (d *dec) int(k string) int {
	var v int
	d.unmarshal(k, &v)
	return v
}

// raw reads any JSON value, compacted. Missing gives nil; null gives "null".
func (d *dec) raw(k string) json.RawMessage {
	raw, ok := d.m[k]
	if !ok {
		return nil
	}
	delete(d.m, k)
	return compactRaw(raw)
}

// rawOrNull reads any JSON value; missing gives "null".
func (d *dec) rawOrNull(k string) json.RawMessage {
	if v := d.raw(k); v != nil {
		return v
	}
	return json.RawMessage("null")
}

// strings reads an array of strings; missing or null gives nil.
func (d *dec) strings(k string) []string {
	var v []string
	d.unmarshal(k, &v)
	return v
}

// array reads an array, calling f for each element. It returns false when the key is missing
// or null.
func (d *dec) array(k string, f func(i int, raw json.RawMessage) error) bool {
	raw, ok := d.take(k)
	if !ok {
		return false
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		d.fail(k, err)
		return false
	}
	for i, e := range elems {
		if err := f(i, e); err != nil {
			d.fail(fmt.Sprintf("%s[%d]", k, i), err)
			return false
		}
	}
	return true
}

// object reads a nested object with f; it returns false when the key is missing or null.
func (d *dec) object(k string, f func(*dec) error) bool {
	raw, ok := d.take(k)
	if !ok {
		return false
	}
	sub, err := newDec(raw)
	if err == nil {
		err = f(sub)
	}
	if err != nil {
		d.fail(k, err)
		return false
	}
	return true
}

// extra returns the keys not read so far (except "type"), with compacted values.
func (d *dec) extra() Extra {
	delete(d.m, "type")
	if len(d.m) == 0 {
		return nil
	}
	e := make(Extra, len(d.m))
	for k, v := range d.m {
		e[k] = compactRaw(v)
	}
	return e
}

// compactRaw returns a compacted copy of a valid JSON value.
func compactRaw(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		// Values handed to compactRaw were produced by the decoder and are valid.
		return append(json.RawMessage(nil), raw...)
	}
	return buf.Bytes()
}
