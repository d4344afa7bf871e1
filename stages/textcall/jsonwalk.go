package textcall

// jsWalker validates one JSON value a byte at a time, so that a parser can
// pass on the bytes of a call's arguments as they arrive and still know
// that they form one valid JSON value. It reports where values and object
// keys begin and end, with the depth of the container that holds them
// (0 for the top-level value, 1 for a member of the top-level object).
type jsWalker struct {
	stack  []byte // open containers: '{' or '['
	state  jwState
	lit    string // the rest of the literal being read (true, false, null)
	hex    int    // hex digits left in a \u escape
	inKey  bool   // the string being read is an object key
	failed bool
}

// jwState is what a jsWalker expects next.
type jwState uint8

const (
	jwValue        jwState = iota // a value
	jwValueOrClose                // a value or ']' (after '[')
	jwKeyOrClose                  // a key or '}' (after '{')
	jwKey                         // a key (after ',')
	jwColon                       // ':' after a key
	jwAfter                       // ',' or the container's closer
	jwString                      // inside a string
	jwEscape                      // after '\' in a string
	jwHex                         // inside \uXXXX
	jwLiteral                     // inside true, false or null
	jwMinus                       // after a number's '-'
	jwZero                        // a number's leading 0
	jwInt                         // a number's integer digits
	jwDot                         // after a number's '.'
	jwFrac                        // a number's fraction digits
	jwExp                         // after 'e' or 'E'
	jwExpSign                     // after the exponent's sign
	jwExpDigits                   // the exponent's digits
	jwDone                        // the top-level value is complete
)

// jwMaxDepth bounds nesting, so that hostile input cannot grow the stack
// without limit.
const jwMaxDepth = 512

// Flags step reports for one byte.
const (
	// jwBegin: the byte begins a value (at depth Depth before the step).
	jwBegin = 1 << iota
	// jwEnd: the byte completes a value (closing quote, closing bracket,
	// last letter of a literal).
	jwEnd
	// jwEndBefore: a number ended just before the byte.
	jwEndBefore
	// jwKeyBegin and jwKeyEnd: the byte is a key's opening or closing
	// quote.
	jwKeyBegin
	jwKeyEnd
	// jwErr: the byte cannot continue valid JSON.
	jwErr
)

// Depth returns how many containers are open.
func (w *jsWalker) Depth() int { return len(w.stack) }

// Done reports whether the top-level value is complete.
func (w *jsWalker) Done() bool { return w.state == jwDone }

// Failed reports whether a byte broke the JSON.
func (w *jsWalker) Failed() bool { return w.failed }

func jwIsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// afterValue moves to what follows a complete value.
func (w *jsWalker) afterValue() {
	if len(w.stack) == 0 {
		w.state = jwDone
	} else {
		w.state = jwAfter
	}
}

// Step consumes byte c and reports what it did (jw* flags). After jwErr
// the walker stays failed.
func (w *jsWalker) Step(c byte) int {
	if w.failed {
		return jwErr
	}
	flags := 0
	switch w.state {
	case jwMinus, jwZero, jwInt, jwDot, jwFrac, jwExp, jwExpSign, jwExpDigits:
		if w.number(c) {
			return 0
		}
		switch w.state {
		case jwZero, jwInt, jwFrac, jwExpDigits:
		default:
			return w.fail()
		}
		flags |= jwEndBefore
		w.afterValue()
	}
	switch w.state {
	case jwValue, jwValueOrClose:
		if jwIsSpace(c) {
			return flags
		}
		if c == ']' && w.state == jwValueOrClose {
			w.stack = w.stack[:len(w.stack)-1]
			w.afterValue()
			return flags | jwEnd
		}
		return flags | w.begin(c)
	case jwKeyOrClose, jwKey:
		if jwIsSpace(c) {
			return flags
		}
		if c == '}' && w.state == jwKeyOrClose {
			w.stack = w.stack[:len(w.stack)-1]
			w.afterValue()
			return flags | jwEnd
		}
		if c != '"' {
			return w.fail()
		}
		w.state, w.inKey = jwString, true
		return flags | jwKeyBegin
	case jwColon:
		if jwIsSpace(c) {
			return flags
		}
		if c != ':' {
			return w.fail()
		}
		w.state = jwValue
		return flags
	case jwAfter:
		if jwIsSpace(c) {
			return flags
		}
		top := w.stack[len(w.stack)-1]
		switch {
		case c == ',' && top == '{':
			w.state = jwKey
		case c == ',':
			w.state = jwValue
		case (c == '}' && top == '{') || (c == ']' && top == '['):
			w.stack = w.stack[:len(w.stack)-1]
			w.afterValue()
			return flags | jwEnd
		default:
			return w.fail()
		}
		return flags
	case jwString:
		switch {
		case c == '"':
			if w.inKey {
				w.inKey = false
				w.state = jwColon
				return flags | jwKeyEnd
			}
			w.afterValue()
			return flags | jwEnd
		case c == '\\':
			w.state = jwEscape
		case c < 0x20:
			return w.fail()
		}
		return flags
	case jwEscape:
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			w.state = jwString
		case 'u':
			w.state, w.hex = jwHex, 4
		default:
			return w.fail()
		}
		return flags
	case jwHex:
		if !jwIsHex(c) {
			return w.fail()
		}
		if w.hex--; w.hex == 0 {
			w.state = jwString
		}
		return flags
	case jwLiteral:
		if c != w.lit[0] {
			return w.fail()
		}
		if w.lit = w.lit[1:]; w.lit == "" {
			w.afterValue()
			return flags | jwEnd
		}
		return flags
	case jwDone:
		if jwIsSpace(c) {
			return flags
		}
		return w.fail()
	}
	return w.fail()
}

// begin starts the value whose first byte is c.
func (w *jsWalker) begin(c byte) int {
	switch {
	case c == '{' || c == '[':
		if len(w.stack) >= jwMaxDepth {
			return w.fail()
		}
		w.stack = append(w.stack, c)
		if c == '{' {
			w.state = jwKeyOrClose
		} else {
			w.state = jwValueOrClose
		}
	case c == '"':
		w.state, w.inKey = jwString, false
	case c == 't':
		w.state, w.lit = jwLiteral, "rue"
	case c == 'f':
		w.state, w.lit = jwLiteral, "alse"
	case c == 'n':
		w.state, w.lit = jwLiteral, "ull"
	case c == '-':
		w.state = jwMinus
	case c == '0':
		w.state = jwZero
	case c >= '1' && c <= '9':
		w.state = jwInt
	default:
		return w.fail()
	}
	return jwBegin
}

// number consumes c as part of the number being read, or reports false
// when c cannot continue it.
func (w *jsWalker) number(c byte) bool {
	digit := c >= '0' && c <= '9'
	switch w.state {
	case jwMinus:
		switch {
		case c == '0':
			w.state = jwZero
		case digit:
			w.state = jwInt
		default:
			return false
		}
	case jwZero, jwInt:
		switch {
		case digit && w.state == jwInt:
		case c == '.':
			w.state = jwDot
		case c == 'e' || c == 'E':
			w.state = jwExp
		default:
			return false
		}
	case jwDot, jwFrac:
		switch {
		case digit:
			w.state = jwFrac
		case (c == 'e' || c == 'E') && w.state == jwFrac:
			w.state = jwExp
		default:
			return false
		}
	case jwExp:
		switch {
		case c == '+' || c == '-':
			w.state = jwExpSign
		case digit:
			w.state = jwExpDigits
		default:
			return false
		}
	case jwExpSign, jwExpDigits:
		if !digit {
			return false
		}
		w.state = jwExpDigits
	}
	return true
}

func (w *jsWalker) fail() int {
	w.failed = true
	return jwErr
}

func jwIsHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
