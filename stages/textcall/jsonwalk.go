package textcall

// jsWalker is the package's one JSON scanner. It validates one JSON value
// a byte at a time, so that a parser can pass on the bytes of a call's
// arguments as they arrive and still know that they form one valid JSON
// value. It reports where values and object keys begin and end, with the
// depth of the container that holds them (0 for the top-level value, 1
// for a member of the top-level object).
//
// With python set it reads a Python literal instead (as models trained on
// templates that render with Python's repr write): it then only follows
// strings in either quote and the nesting, to find where the value ends;
// literalJSON converts and checks the whole.
type jsWalker struct {
	stack  []byte // open containers: '{' or '['
	state  jwState
	lit    string // the rest of the literal being read (true, false, null)
	hex    int    // hex digits left in a \u escape
	inKey  bool   // the string being read is an object key
	failed bool
	python bool
	nest   bool // following only the nesting of a value that broke the JSON
	quote  byte // python or nest: the quote of the open string
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
	if w.python || w.nest {
		return w.stepNest(c)
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
			return flags | w.closeContainer()
		}
		return flags | w.begin(c)
	case jwKeyOrClose, jwKey:
		if jwIsSpace(c) {
			return flags
		}
		if c == '}' && w.state == jwKeyOrClose {
			return flags | w.closeContainer()
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
			return flags | w.closeContainer()
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

// closeContainer closes the innermost container: a value ends.
func (w *jsWalker) closeContainer() int {
	w.stack = w.stack[:len(w.stack)-1]
	w.afterValue()
	return jwEnd
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

// stepNest is Step for a Python literal, or for the rest of a value that
// broke the JSON (nest): strings (in either quote for Python) and nesting
// only.
func (w *jsWalker) stepNest(c byte) int {
	switch {
	case w.state == jwDone:
		if jwIsSpace(c) {
			return 0
		}
		return w.fail()
	case w.state == jwEscape:
		w.state = jwString
	case w.state == jwString:
		switch c {
		case '\\':
			w.state = jwEscape
		case w.quote:
			w.state = jwValue
		}
	case c == '"' || (w.python && c == '\''):
		w.state, w.quote = jwString, c
	case c == '{' || c == '[' || c == '(':
		if len(w.stack) >= jwMaxDepth {
			return w.fail()
		}
		w.stack = append(w.stack, c)
	case c == '}' || c == ']' || c == ')':
		if len(w.stack) == 0 {
			return w.fail()
		}
		w.stack = w.stack[:len(w.stack)-1]
		if len(w.stack) == 0 {
			w.state = jwDone
			return jwEnd
		}
	}
	return 0
}

// objScan finds where one JSON object (or Python literal) ends as its text
// arrives in pieces, with a jsWalker: the chunk-level view of the walker
// for parsers that pass the object on as it comes. A byte that breaks the
// JSON does not end the object: the scan follows its nesting on to where
// its writer closed it (so the markup ends there), and bad reports it.
type objScan struct {
	w       jsWalker
	started bool
	invalid bool // a byte broke the JSON
}

// reset readies the scanner for a new object, keeping its stack's memory.
func (o *objScan) reset(python bool) {
	*o = objScan{w: jsWalker{stack: o.w.stack[:0], python: python}}
}

// scan consumes the bytes of s that belong to the object (s starts with
// '{' on the first call) and reports how many it took and whether the
// object closed.
func (o *objScan) scan(s string) (n int, done bool) {
	o.started = o.started || s != ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		if o.w.Step(c)&jwErr != 0 && !o.w.nest {
			o.invalid = true
			o.w.failed, o.w.nest = false, true
			// Read on as the nesting alone: c again, in the same string
			// (or escape) if it was in one.
			switch o.w.quote = '"'; o.w.state {
			case jwEscape:
			case jwString, jwHex:
				o.w.state = jwString
			default:
				o.w.state = jwValue
			}
			o.w.Step(c)
		}
		if o.w.failed || o.w.state == jwDone {
			return i + 1, true
		}
	}
	return len(s), false
}

// bad reports whether the object scanned is not valid (JSON, or for a
// Python literal, its nesting).
func (o *objScan) bad() bool { return o.invalid || o.w.failed }
