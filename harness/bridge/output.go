package bridge

import (
	"strconv"
	"strings"
)

// UnwrapOutput takes apart the text Codex returns for an exec_command (and
// older shell) call:
//
//	Chunk ID: c3196a
//	Wall time: 0.0009 seconds
//	Process exited with code 0
//	Original token count: 0
//	Output:
//	hello
//
// It returns the text after the "Output:" line (out, always a suffix of
// text), the exit code when a "Process exited with code N" or "Exit code: N"
// line gives one (hasExit), and ok. A process still running ("Process
// running with session ID N") has no exit code.
//
// The header is the lines before "Output:". Each must be one of "Chunk ID:",
// "Wall time:", "Process exited with code N", "Process running with session
// ID …", "Original token count:", "Exit code: N" or "Total output lines:",
// in any order, and there must be at least one; lines may end in CRLF, and
// "Output:" may be the last line with or without its newline (out is then
// ""). Any other text is not in the framing: ok is false and out is text
// unchanged.
func UnwrapOutput(text string) (out string, exitCode int, hasExit bool, ok bool) {
	rest := text
	headers := 0
	for {
		line, next, found := strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		if line == "Output:" {
			if headers == 0 {
				return text, 0, false, false
			}
			if !found {
				return "", exitCode, hasExit, true
			}
			return next, exitCode, hasExit, true
		}
		if !found {
			return text, 0, false, false
		}
		code, isExit, known := headerLine(line)
		if !known {
			return text, 0, false, false
		}
		if isExit {
			exitCode, hasExit = code, true
		}
		headers++
		rest = next
	}
}

// headerLine classifies one header line of Codex's exec framing.
func headerLine(line string) (code int, isExit, known bool) {
	for _, p := range [...]string{"Chunk ID:", "Wall time:", "Original token count:", "Total output lines:", "Process running with session ID "} {
		if strings.HasPrefix(line, p) {
			return 0, false, true
		}
	}
	for _, p := range [...]string{"Process exited with code ", "Exit code: "} {
		if n, ok := strings.CutPrefix(line, p); ok {
			c, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil {
				return 0, false, false
			}
			return c, true, true
		}
	}
	return 0, false, false
}

// WallTime returns the seconds of the "Wall time: S seconds" line of
// Codex's exec framing, as written there ("0.0123"); ok is false when the
// text is not in the framing or has no such line.
func WallTime(text string) (seconds string, ok bool) {
	if _, _, _, framed := UnwrapOutput(text); !framed {
		return "", false
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "Output:" {
			break
		}
		if v, found := strings.CutPrefix(line, "Wall time:"); found {
			v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "seconds"))
			if _, err := strconv.ParseFloat(v, 64); err == nil {
				return v, true
			}
		}
	}
	return "", false
}
