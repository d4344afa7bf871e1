package textcall

import "strings"

// HeldTail returns the length of the longest suffix of s that is a proper
// prefix of one of markers: the text a parser must hold back because more
// input could still turn it into that marker. Everything before it can be
// given back at once. Markers are whole UTF-8 texts, so a held tail never
// splits a character of a marker.
func HeldTail(s string, markers ...string) int {
	held := 0
	for _, m := range markers {
		n := min(len(m)-1, len(s))
		// Candidates are where m's first byte stands in the last n bytes,
		// longest first.
		for k := n; k > held; k-- {
			i := strings.IndexByte(s[len(s)-k:], m[0])
			if i < 0 {
				break
			}
			if k -= i; k <= held {
				break
			}
			if strings.HasPrefix(m, s[len(s)-k:]) {
				held = k
				break
			}
		}
	}
	return held
}

// IndexFirst returns the smallest index in s at which one of markers
// starts, and which marker (-1, -1 when none does).
func IndexFirst(s string, markers ...string) (at, which int) {
	if len(markers) == 1 {
		if at = strings.Index(s, markers[0]); at < 0 {
			return -1, -1
		}
		return at, 0
	}
	at, which = -1, -1
	for i, m := range markers {
		limit := s
		if at >= 0 {
			limit = s[:min(len(s), at+len(m))]
		}
		if j := strings.Index(limit, m); j >= 0 && (at < 0 || j < at) {
			at, which = j, i
		}
	}
	return at, which
}

// appendText appends a Text (or Reasoning) event, merged into the last
// event when that is of the same kind.
func appendText(out []Event, k Kind, s string) []Event {
	if s == "" {
		return out
	}
	if n := len(out); n > 0 && out[n-1].Kind == k {
		out[n-1].Text += s
		return out
	}
	return append(out, Event{Kind: k, Text: s})
}

// AppendText appends s as a Text event (nothing for "").
func AppendText(out []Event, s string) []Event { return appendText(out, Text, s) }

// AppendArgs appends s as a CallArgs event (nothing for "").
func AppendArgs(out []Event, s string) []Event { return appendText(out, CallArgs, s) }

// isSpace reports whether s is empty or only white space.
func isSpace(s string) bool { return strings.TrimSpace(s) == "" }
