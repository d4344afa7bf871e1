package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/harness"
)

// sniffLimit bounds what translate reads ahead to check its input: the
// first data line of a stream must fit in it to be checked.
const sniffLimit = 64 << 10

// inputError is translate's refusal of an input that is not what --wire
// and --unary say: what it found and the flag that would read it.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

// sniffInput checks the start of translate's input before the graph runs:
// a stream must be SSE (the first line a field such as "data:", "event:" or
// a comment) whose first data event is of the wire's protocol; with unary,
// one JSON object of the wire. It returns a reader that gives the whole
// input again. Reading stops at the first data line (a live stream on
// standard input is not waited for beyond it); what it cannot classify is
// left to the graph's own errors.
func sniffInput(r io.Reader, wire harness.Wire, unary bool) (io.Reader, error) {
	if unary {
		return sniffUnary(r, wire)
	}
	br := bufio.NewReaderSize(r, sniffLimit)
	var head bytes.Buffer
	rest := func() io.Reader { return io.MultiReader(bytes.NewReader(head.Bytes()), br) }
	for lineNo := 1; ; lineNo++ {
		raw, err := br.ReadSlice('\n')
		head.Write(raw)
		if errors.Is(err, bufio.ErrBufferFull) {
			return rest(), nil // a line too long to check here: the graph reads it
		}
		line := strings.TrimRight(string(raw), "\r\n")
		if lineNo == 1 {
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		if line != "" || err == nil {
			if done, perr := sniffLine(line, lineNo, wire); perr != nil || done {
				return rest(), perr
			}
		}
		if err != nil {
			return rest(), nil // EOF (or a read error the graph reports)
		}
		if head.Len() > sniffLimit {
			return rest(), nil
		}
	}
}

// sniffLine checks one line of the start of a stream; done is set once a
// data line was classified.
func sniffLine(line string, lineNo int, wire harness.Wire) (done bool, err error) {
	if line == "" || line[0] == ':' {
		return false, nil
	}
	field, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch field {
	case "id", "retry":
		return false, nil
	case "event":
		if w, what := eventWire(value); w != "" && w != wire {
			return true, wrongWire(wire, w, "its first event is "+what)
		}
		return false, nil
	case "data":
		if value == "[DONE]" {
			return true, nil
		}
		if w, what := dataWire([]byte(value)); w != "" && w != wire {
			return true, wrongWire(wire, w, "its first data is "+what)
		}
		return true, nil
	}
	return true, notSSE(line, lineNo)
}

// notSSE describes a stream input whose first line is no SSE field.
func notSSE(line string, lineNo int) error {
	found, hint := "text", "translate reads a recorded SSE stream (lines \"data: …\"), or one JSON body with --unary"
	t := strings.TrimSpace(line)
	switch {
	case strings.HasPrefix(t, "<"):
		found = "an HTML or XML page"
	case strings.HasPrefix(t, "{"), strings.HasPrefix(t, "["):
		found, hint = "JSON, not SSE", "for one non-streaming response body use --unary"
	}
	return &inputError{fmt.Sprintf("not an SSE stream: line %d starts %s (%s); %s", lineNo, quoteStart(line), found, hint)}
}

// wrongWire is the error of an input of another wire.
func wrongWire(want, got harness.Wire, why string) error {
	return &inputError{fmt.Sprintf("this is a %s stream (%s), not %s: use --wire %s", got, why, want, got)}
}

// eventWire names the wire whose streams use the SSE event name (its
// codec's SniffEvent).
func eventWire(name string) (harness.Wire, string) { return codec.Sniff(name, nil) }

// dataWire names the wire of one streamed data object by the markers its
// codec knows (a chat chunk's "choices" or "object", a Messages or
// Responses event "type"). Error objects and anything else say nothing.
func dataWire(data []byte) (harness.Wire, string) { return codec.Sniff("", data) }

// sniffUnary checks a --unary input: one JSON object, of the wire.
func sniffUnary(r io.Reader, wire harness.Wire) (io.Reader, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return bytes.NewReader(data), nil // the graph reports the read error
	}
	t := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\uFEFF")))
	switch {
	case len(t) == 0:
		return bytes.NewReader(data), &inputError{"empty input: --unary reads one JSON response body"}
	case bytes.HasPrefix(t, []byte("data:")), bytes.HasPrefix(t, []byte("event:")), bytes.HasPrefix(t, []byte(":")):
		return bytes.NewReader(data), &inputError{fmt.Sprintf("this is an SSE stream (it starts %s), not one JSON body: drop --unary", quoteStart(string(t)))}
	case t[0] != '{':
		found := "not JSON"
		if t[0] == '<' {
			found = "an HTML or XML page"
		}
		return bytes.NewReader(data), &inputError{fmt.Sprintf("not a JSON response body: it starts %s (%s)", quoteStart(string(t)), found)}
	}
	if got, why := codec.SniffBody(t); got != "" && got != wire {
		fix := "use --wire " + string(got)
		if c, _ := codec.Lookup(got); !c.HasUnary() {
			fix = "--unary reads " + unaryWires() + " bodies only"
		}
		return bytes.NewReader(data), &inputError{fmt.Sprintf("this is a %s response body (%s), not %s: %s", got, why, wire, fix)}
	}
	return bytes.NewReader(data), nil
}

// unaryWires names the wires whose answers --unary reads ("chat").
func unaryWires() string {
	var names []string
	for _, w := range codec.All() {
		if c, _ := codec.Lookup(w); c.HasUnary() {
			names = append(names, string(w))
		}
	}
	return strings.Join(names, " and ")
}

// quoteStart quotes the first 40 characters of s.
func quoteStart(s string) string {
	const n = 40
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q…", s[:cut])
}

// bodyWire names the wire of a recorded SSE body by its first event name
// or data object that says one ("" when none does), and why.
func bodyWire(body []byte) (harness.Wire, string) {
	for n := 0; len(body) > 0 && n < 64; n++ {
		var line []byte
		line, body, _ = bytes.Cut(body, []byte("\n"))
		field, value, _ := strings.Cut(strings.TrimRight(string(line), "\r"), ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			if w, what := eventWire(value); w != "" {
				return w, "its first event is " + what
			}
		case "data":
			if w, what := dataWire([]byte(value)); w != "" {
				return w, "its first data is " + what
			}
			return "", ""
		}
	}
	return "", ""
}
