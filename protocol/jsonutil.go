package protocol

import "github.com/harnessflow/harnessflow/internal/jsonx"

// AppendString appends s to dst as a JSON string, escaped exactly as encoding/json does with
// SetEscapeHTML(false): invalid UTF-8 becomes \ufffd, U+2028 and U+2029 are escaped, control
// characters use \b \f \n \r \t or \u00XX.
func AppendString(dst []byte, s string) []byte { return jsonx.AppendString(dst, s) }

// newEnc returns an encoder that appends to dst. Extra fields never repeat a key written
// before them in the same object.
func newEnc(dst []byte) *jsonx.Encoder {
	w := &jsonx.Encoder{B: dst, InvalidRaw: "invalid raw JSON"}
	w.TrackKeys()
	return w
}
