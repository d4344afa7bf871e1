package protocol

import (
	"regexp"
	"strings"
)

// RequestError is a Responses request body that [DecodeRequest] could not
// read, said in harnessflow's words: where, as a JSON path into the body
// (input[3].content, tools[0].name), and what is wrong there ("want an
// array or a string, got a number"). Err is the decoder's own error, whose
// text names Go types and decoding layers; Error never shows it.
type RequestError struct {
	// Path is the JSON path of the value at fault; "" for the whole body.
	Path string
	// Problem says what is wrong with it.
	Problem string
	// Err is the decoder's error.
	Err error
}

// Error implements error: "PATH: PROBLEM".
func (e *RequestError) Error() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

// Unwrap returns the decoder's error.
func (e *RequestError) Unwrap() error { return e.Err }

var (
	reItemsIndex  = regexp.MustCompile(`^items\[(\d+)\]$`)
	reIndex       = regexp.MustCompile(`^\[(\d+)\]$`)
	reField       = regexp.MustCompile(`^field (\S+)$`)
	reContext     = regexp.MustCompile(`^(?:[a-z_]+(?: [a-z_]+)*|tool "[^"]*")$`)
	reUnmarshal   = regexp.MustCompile(`^json: cannot unmarshal (\w+) into Go (?:value|struct field \S+) of type (\S+)$`)
	reExpectedGot = regexp.MustCompile(`^expected (a string|a string or an array|a string, an array or null|an integer|a JSON object), got (.*)$`)
)

// stringOrArray are the fields that take a string as well as an array (the
// shorthand forms DecodeRequest accepts, and a call output).
func stringOrArray(path string) bool {
	return path == "input" || strings.HasSuffix(path, ".content") || strings.HasSuffix(path, ".output")
}

// describeRequestError restates a decoding error of a Responses request as
// a *RequestError. The decoders' errors are chains of "layer: " prefixes
// ("protocol: responses request: input: protocol: items[0]: message:
// field content: json: cannot unmarshal …"); the indexes and field names
// among them make the path, item and tool type names are dropped, and the
// last part is reworded.
func describeRequestError(err error) error {
	if err == nil {
		return nil
	}
	parts := strings.Split(err.Error(), ": ")
	var path strings.Builder
	i := 0
loop:
	for ; i < len(parts)-1; i++ {
		p := parts[i]
		switch {
		case p == "json": // encoding/json's complaint starts here
			break loop
		case p == "protocol" || p == "responses request" || p == "items":
		case p == "input":
			path.Reset()
			path.WriteString("input")
		case reItemsIndex.MatchString(p):
			path.WriteString("[" + reItemsIndex.FindStringSubmatch(p)[1] + "]")
		case reIndex.MatchString(p):
			path.WriteString(p)
		case reField.MatchString(p):
			if path.Len() > 0 {
				path.WriteByte('.')
			}
			path.WriteString(reField.FindStringSubmatch(p)[1])
		case reContext.MatchString(p):
			// an item or tool type, a decoding layer
		default:
			break loop
		}
	}
	where, problem := path.String(), strings.Join(parts[i:], ": ")
	if got, ok := strings.CutPrefix(problem, `"type" is not a string: `); ok {
		where, problem = join(where, "type"), "expected a string, got "+got
	}
	if where == "" && problem == "expected a JSON object" {
		return &RequestError{Problem: "expected a JSON object (a Responses request)", Err: err}
	}
	return &RequestError{Path: where, Problem: reword(problem, where), Err: err}
}

// join appends a field name to a path.
func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// reword says a decoder's complaint about the value at path in our words.
func reword(problem, path string) string {
	if m := reUnmarshal.FindStringSubmatch(problem); m != nil {
		want := goTypeWord(m[2])
		if want == "an array" && stringOrArray(path) {
			want = "an array or a string"
		}
		return "want " + want + ", got " + jsonKindWord(m[1])
	}
	if m := reExpectedGot.FindStringSubmatch(problem); m != nil {
		want := m[1]
		if want == "a JSON object" {
			want = "an object"
		}
		return "want " + want + ", got " + rawKindWord(m[2])
	}
	switch problem {
	case "expected a JSON object":
		return "want an object"
	}
	return problem
}

// goTypeWord names what a Go type takes in JSON.
func goTypeWord(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "map[") || strings.Contains(t, "."):
		return "an object"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint") || strings.HasPrefix(t, "float"):
		return "a number"
	}
	return "another kind of value"
}

// jsonKindWord names a JSON kind as encoding/json's errors call it.
func jsonKindWord(k string) string {
	switch k {
	case "number":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "object":
		return "an object"
	case "array":
		return "an array"
	}
	return k
}

// rawKindWord names the kind of a (possibly cut) JSON value from how it
// starts.
func rawKindWord(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "nothing"
	}
	switch c := raw[0]; {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	return "something else"
}
