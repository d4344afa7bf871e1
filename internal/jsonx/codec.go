package jsonx

import (
	"encoding/json"
	"fmt"
)

// The helpers of generated codecs (internal/codecgen): each is one step of
// reading or writing a struct type, so that what the generator writes per
// type is its list of fields.

// Unmarshaler is a pointer to a T that decodes itself.
type Unmarshaler[T any] interface {
	*T
	UnmarshalJSON([]byte) error
}

// Unmarshal reads data as an object and stores what dec makes of it in
// dst. Errors start with what ("chat: message"); named, when not nil,
// names the decoded value in an error of its fields instead.
func Unmarshal[T any](data []byte, dst *T, dec func(*Fields) T, what string, named func(*T) string) error {
	d, err := NewFields(data)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	v := dec(d)
	if d.Err != nil {
		if named != nil {
			what = named(&v)
		}
		return fmt.Errorf("%s: %w", what, d.Err)
	}
	*dst = v
	return nil
}

// Marshaled returns an encoder's bytes, or its error prefixed with what
// (formatted with args, as by fmt).
func Marshaled(b []byte, err error, what string, args ...any) ([]byte, error) {
	if err != nil {
		return nil, fmt.Errorf(what+": %w", append(args, err)...)
	}
	return b, nil
}

// ArrayOf appends to *dst the elements of the array at k, each decoded by
// its own UnmarshalJSON; the first failure is d's error.
func ArrayOf[T any, P Unmarshaler[T]](d *Fields, k string, dst *[]T) {
	d.Array(k, func(_ int, raw json.RawMessage) error {
		var x T
		err := P(&x).UnmarshalJSON(raw)
		*dst = append(*dst, x)
		return err
	})
}

// ArrayWith appends to *dst the elements of the array at k, each an object
// decoded by dec; the first failure is d's error.
func ArrayWith[T any](d *Fields, k string, dst *[]T, dec func(*Fields) T) {
	d.Array(k, func(_ int, raw json.RawMessage) error {
		e, err := NewFields(raw)
		if err != nil {
			return err
		}
		*dst = append(*dst, dec(e))
		return e.Err
	})
}

// ObjectWith stores in *dst what dec makes of the object at k, when there
// is one.
func ObjectWith[T any](d *Fields, k string, dst *T, dec func(*Fields) T) {
	d.Object(k, func(f *Fields) error {
		*dst = dec(f)
		return f.Err
	})
}

// ObjectPtrWith is ObjectWith for a pointer field: *dst stays nil when
// there is no object at k.
func ObjectPtrWith[T any](d *Fields, k string, dst **T, dec func(*Fields) T) {
	d.Object(k, func(f *Fields) error {
		x := dec(f)
		*dst = &x
		return f.Err
	})
}

// TakeInto decodes the value at k, when present, with dst's UnmarshalJSON.
func TakeInto[T any, P Unmarshaler[T]](d *Fields, k string, dst P) {
	if raw, ok := d.Take(k); ok {
		if err := dst.UnmarshalJSON(raw); err != nil {
			d.Fail(k, err)
		}
	}
}

// TakeNew is TakeInto for a pointer field: *dst is allocated when the
// value is present and stays nil otherwise.
func TakeNew[T any, P Unmarshaler[T]](d *Fields, k string, dst *P) {
	if raw, ok := d.Take(k); ok {
		*dst = new(T)
		if err := (*dst).UnmarshalJSON(raw); err != nil {
			d.Fail(k, err)
		}
	}
}

// Array writes k and an array of n elements, each written by elem. With
// wrap, an error of an element is prefixed with k[i] and ends the array:
// Array then returns false, and the caller stops writing.
func (w *Encoder) Array(k string, n int, wrap bool, elem func(i int)) bool {
	w.Key(k)
	w.B = append(w.B, '[')
	for i := range n {
		w.Elem(i)
		elem(i)
		if wrap && w.Err != nil {
			w.Err = fmt.Errorf("%s[%d]: %w", k, i, w.Err)
			return false
		}
	}
	w.B = append(w.B, ']')
	return true
}

// Object writes k and then v with enc, when v is not nil: a nested object
// of a generated encoder (W is the package's encoder).
func Object[W interface{ Key(string) }, T any](w W, k string, v *T, enc func(W, *T)) {
	if v != nil {
		w.Key(k)
		enc(w, v)
	}
}
