package chat

import "github.com/harnessflow/harnessflow/internal/jsonx"

// AppendString appends s to dst as a JSON string, escaped exactly as
// encoding/json does with SetEscapeHTML(false): invalid UTF-8 becomes
// \ufffd, U+2028 and U+2029 are escaped, control characters use \b \f \n \r
// \t or \u00XX.
func AppendString(dst []byte, s string) []byte { return jsonx.AppendString(dst, s) }
