package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Encoder writes JSON objects into B with keys in call order. The first error sticks in Err.
// The zero value is ready to use.
type Encoder struct {
	B   []byte
	Err error
	// InvalidRaw names what is wrong when a raw value does not compact: the error reads
	// "field KEY: <InvalidRaw>: <json.Compact's error>". Empty means "invalid JSON".
	InvalidRaw string

	n       int      // fields written in the current object
	base    int      // start of the current object's keys in written
	track   bool     // see TrackKeys
	written []string // with track: keys written so far, per open object
	wbuf    [16]string
}

// TrackKeys makes the encoder remember the keys written in each open object, so that
// [Encoder.Extra] leaves them out even when they are not in its known list. Call it before
// the first Open; w must not be copied afterwards.
func (w *Encoder) TrackKeys() {
	w.track = true
	w.written = w.wbuf[:0]
}

// Frame is the saved state of the enclosing object (see [Encoder.Open]).
type Frame struct{ n, base int }

// Open starts an object value; Close(f) ends it and restores the enclosing object's state.
func (w *Encoder) Open() Frame {
	f := Frame{w.n, w.base}
	w.B = append(w.B, '{')
	w.n = 0
	w.base = len(w.written)
	return f
}

// Close ends the object opened by the Open that returned f.
func (w *Encoder) Close(f Frame) {
	w.B = append(w.B, '}')
	w.written = w.written[:w.base]
	w.n, w.base = f.n, f.base
}

// Elem writes the separator before array element i.
func (w *Encoder) Elem(i int) {
	if i > 0 {
		w.B = append(w.B, ',')
	}
}

// Key writes the key k as it is: k is a field name that needs no escaping (a constant).
func (w *Encoder) Key(k string) {
	b := w.B
	if w.n > 0 {
		b = append(b, ',')
	}
	w.n++
	if w.track {
		w.written = append(w.written, k)
	}
	b = append(b, '"')
	b = append(b, k...)
	w.B = append(b, '"', ':')
}

// MapKey writes the key k escaped: for keys that come from data (a map's keys).
func (w *Encoder) MapKey(k string) {
	if w.n > 0 {
		w.B = append(w.B, ',')
	}
	w.n++
	if w.track {
		w.written = append(w.written, k)
	}
	w.B = AppendString(w.B, k)
	w.B = append(w.B, ':')
}

// Written records k as written in the current object without writing it, so that
// [Encoder.Extra] leaves it out (with [Encoder.TrackKeys]; otherwise name k in Extra's known).
func (w *Encoder) Written(k string) {
	if w.track {
		w.written = append(w.written, k)
	}
}

// Str writes a string member.
func (w *Encoder) Str(k, v string) {
	w.Key(k)
	w.B = AppendString(w.B, v)
}

// StrOpt writes a string member unless v is empty.
func (w *Encoder) StrOpt(k, v string) {
	if v != "" {
		w.Str(k, v)
	}
}

// StrPtr writes a string member; nil is written as null.
func (w *Encoder) StrPtr(k string, v *string) {
	w.Key(k)
	if v == nil {
		w.B = append(w.B, "null"...)
		return
	}
	w.B = AppendString(w.B, *v)
}

// Bool writes a boolean member.
func (w *Encoder) Bool(k string, v bool) {
	w.Key(k)
	w.B = strconv.AppendBool(w.B, v)
}

// BoolPtr writes a boolean member; nil is written as null.
func (w *Encoder) BoolPtr(k string, v *bool) {
	w.Key(k)
	if v == nil {
		w.B = append(w.B, "null"...)
		return
	}
	w.B = strconv.AppendBool(w.B, *v)
}

// BoolOpt writes a boolean member unless v is nil.
func (w *Encoder) BoolOpt(k string, v *bool) {
	if v != nil {
		w.Bool(k, *v)
	}
}

// Int writes an integer member.
func (w *Encoder) Int(k string, v int64) {
	w.Key(k)
	w.B = strconv.AppendInt(w.B, v, 10)
}

// IntOpt writes an integer member unless v is nil.
func (w *Encoder) IntOpt(k string, v *int64) {
	if v != nil {
		w.Int(k, *v)
	}
}

// Strings writes an array of strings (nil as []).
func (w *Encoder) Strings(k string, v []string) {
	w.Key(k)
	w.B = append(w.B, '[')
	for i, s := range v {
		if i > 0 {
			w.B = append(w.B, ',')
		}
		w.B = AppendString(w.B, s)
	}
	w.B = append(w.B, ']')
}

// Raw writes a raw JSON member, compacted; ifEmpty is written when v is empty.
func (w *Encoder) Raw(k string, v json.RawMessage, ifEmpty string) {
	w.Key(k)
	w.RawValue(k, v, ifEmpty)
}

// RawOpt writes a raw JSON member, compacted, unless v is empty.
func (w *Encoder) RawOpt(k string, v json.RawMessage) {
	if len(v) > 0 {
		w.Raw(k, v, "")
	}
}

// RawValue writes a raw JSON value, compacted; ifEmpty is written when v is empty. An
// invalid v is an error naming field.
func (w *Encoder) RawValue(field string, v json.RawMessage, ifEmpty string) {
	if len(v) == 0 {
		w.B = append(w.B, ifEmpty...)
		return
	}
	buf := bytes.NewBuffer(w.B)
	if err := json.Compact(buf, v); err != nil {
		what := w.InvalidRaw
		if what == "" {
			what = "invalid JSON"
		}
		w.Fail(fmt.Errorf("field %s: %s: %w", field, what, err))
		return
	}
	w.B = buf.Bytes()
}

// Fail records err unless an error is already recorded.
func (w *Encoder) Fail(err error) {
	if w.Err == nil {
		w.Err = err
	}
}

// Extra writes the members of e, sorted by key, except those named in known and, with
// [Encoder.TrackKeys], those already written in the current object.
func (w *Encoder) Extra(e map[string]json.RawMessage, known ...string) {
	if len(e) == 0 {
		return
	}
	keys := make([]string, 0, len(e))
	for k := range e {
		if !slices.Contains(w.written[w.base:], k) && !slices.Contains(known, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		// Extra members are written without recording the key: they cannot collide.
		if w.n > 0 {
			w.B = append(w.B, ',')
		}
		w.n++
		w.B = AppendString(w.B, k)
		w.B = append(w.B, ':')
		w.RawValue(k, e[k], "null")
	}
}
