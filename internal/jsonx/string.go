// Package jsonx holds the hand-written JSON helpers of harnessflow: string escaping
// ([AppendString]), an object writer ([Encoder]) and an object reader ([Fields]), which protocol
// and wire/chat share, and the validating zero-copy reader of the stream decoders ([Scanner],
// with its resume layer [Prefix] and [Suffix], and their common [DecodeError]). Strings are
// escaped exactly as encoding/json does with SetEscapeHTML(false), and unescaped as it does.
package jsonx

import (
	"math/bits"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// safeASCII[b] is true for the ASCII bytes a JSON string holds as they are
// (encoding/json's safeSet: '<', '>' and '&' are not escaped).
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special8 returns, for the 8 bytes of w (little-endian), a mask whose lowest set bit is the
// high bit of the first byte that needs care: a control byte (< 0x20), '"', '\\' or a
// non-ASCII byte. 0 means all 8 bytes are copied as they are. (The word tricks can flag bytes
// above a true hit, never below it, so the lowest bit is exact.)
func special8(w uint64) uint64 { return stop8(w) | w&msb }

// stop8 is special8 without the non-ASCII bytes: the mask of the bytes that end a plain run
// inside a JSON string being read (a control byte, '"' or '\\'), exact in its lowest bit.
func stop8(w uint64) uint64 {
	ctl := (w - 0x20*lsb) &^ w
	q := w ^ ('"' * lsb)
	q = (q - lsb) &^ q
	bs := w ^ ('\\' * lsb)
	bs = (bs - lsb) &^ bs
	return (ctl | q | bs) & msb
}

// AppendString appends s to dst as a JSON string, escaped exactly as encoding/json does with
// SetEscapeHTML(false): invalid UTF-8 becomes \ufffd, U+2028 and U+2029 are escaped, control
// characters use \b \f \n \r \t or \u00XX. Runs of plain ASCII are skipped 8 bytes at a time.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) {
			w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			if m := special8(w); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
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
