package jsonx

import (
	"errors"
	"testing"
)

// named is a test element that must be an object with a string "n".
type named struct{ N string }

func (v *named) UnmarshalJSON(data []byte) error {
	d, err := NewFields(data)
	if err != nil {
		return err
	}
	v.N = d.DecodeStr("n")
	return d.Err
}

func TestStringOrArray(t *testing.T) {
	tests := []struct {
		in      string
		text    string
		elems   []named
		shape   Shape
		wantErr string
	}{
		{in: ` "hi" `, text: "hi", shape: ShapeString},
		{in: `[]`, elems: []named{}, shape: ShapeArray},
		{in: `[{"n":"a"},{"n":"b"}]`, elems: []named{{"a"}, {"b"}}, shape: ShapeArray},
		{in: `null`, shape: ShapeNull},
		{in: ``, wantErr: "x: empty value"},
		{in: `42`, wantErr: "x: expected a string, an array or null, got 42"},
		{in: `[{"n":"a"},3]`, wantErr: "x[1]: expected a JSON object"},
		{in: `"unterminated`, wantErr: "x: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		text, elems, shape, err := StringOrArray[named]([]byte(tt.in), "x")
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%q: err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if text != tt.text || shape != tt.shape || (elems == nil) != (tt.elems == nil) || len(elems) != len(tt.elems) {
			t.Errorf("%q: got %q %v %d, want %q %v %d", tt.in, text, elems, shape, tt.text, tt.elems, tt.shape)
			continue
		}
		for i := range elems {
			if elems[i] != tt.elems[i] {
				t.Errorf("%q: elems[%d] = %v, want %v", tt.in, i, elems[i], tt.elems[i])
			}
		}
	}
	if _, _, _, err := StringOrArray[named]([]byte(`[3]`), "x"); !errors.Is(err, errNotObject) {
		t.Errorf("element error not wrapped: %v", err)
	}
}
