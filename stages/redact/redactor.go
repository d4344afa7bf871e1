package redact

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// DefaultMaxPrivateKeyBytes bounds a private key block: after this many
// bytes without an END line the block is taken to be over.
const DefaultMaxPrivateKeyBytes = 16 << 10

// Config selects what a Redactor looks for.
type Config struct {
	// Builtins lists the built-in detectors to use, by kind (see Builtins).
	// nil means all of them; an empty non-nil slice means none.
	Builtins []string
	// Patterns are extra, user-supplied patterns.
	Patterns []Pattern
	// MaxPrivateKeyBytes caps a private key block (0: DefaultMaxPrivateKeyBytes).
	MaxPrivateKeyBytes int
}

// Redactor finds secrets in text and replaces each by [REDACTED:<kind>]. It
// is immutable and safe for concurrent use; streaming state lives in the
// Streams it creates.
type Redactor struct {
	dets    []detector
	markers []string
	byFirst [256][]int // detector indexes by first byte
	trigger [256]bool
	hold    int
}

// New compiles cfg into a Redactor.
func New(cfg Config) (*Redactor, error) {
	r := &Redactor{}
	kinds := cfg.Builtins
	if kinds == nil {
		kinds = Builtins
	}
	pemMax := cfg.MaxPrivateKeyBytes
	if pemMax <= 0 {
		pemMax = DefaultMaxPrivateKeyBytes
	}
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k] {
			continue
		}
		seen[k] = true
		switch k {
		case KindAPIKey:
			r.dets = append(r.dets, newSKKey())
		case KindAWSAccessKey:
			r.dets = append(r.dets, awsKey{})
		case KindGitHubToken:
			r.dets = append(r.dets, newGHToken())
		case KindBearerToken:
			r.dets = append(r.dets, newBearer())
		case KindPrivateKey:
			r.dets = append(r.dets, &pemKey{maxBytes: pemMax})
		default:
			return nil, fmt.Errorf("redact: unknown built-in detector %q (known: %s)", k, strings.Join(Builtins, ", "))
		}
	}
	for _, p := range cfg.Patterns {
		d, err := compilePattern(p)
		if err != nil {
			return nil, err
		}
		r.dets = append(r.dets, d)
	}
	for i, d := range r.dets {
		var set [256]bool
		d.firsts(&set)
		for b, ok := range set {
			if ok && (b < 0x80 || b >= 0xC0) { // never inside a rune
				r.byFirst[b] = append(r.byFirst[b], i)
				r.trigger[b] = true
			}
		}
		r.markers = append(r.markers, Marker(d.kind()))
		r.hold = max(r.hold, d.maxHold())
	}
	return r, nil
}

// Default returns the shared Redactor with every built-in detector.
func Default() *Redactor { return defaultRedactor() }

var defaultRedactor = sync.OnceValue(func() *Redactor {
	r, err := New(Config{})
	if err != nil {
		panic(err) // unreachable: the built-in configuration is valid
	}
	return r
})

// Kinds lists the kinds the Redactor detects, in the order they are tried.
func (r *Redactor) Kinds() []string {
	if r == nil {
		return nil
	}
	out := make([]string, len(r.dets))
	for i, d := range r.dets {
		out[i] = d.kind()
	}
	return out
}

// MaxHold is the most text, in bytes, a Stream ever holds back: the longest
// proper prefix of a secret that any detector has to see before it can tell
// whether a secret is there.
func (r *Redactor) MaxHold() int {
	if r == nil {
		return 0
	}
	return r.hold
}

// String redacts a whole text.
func (r *Redactor) String(s string) string {
	if r == nil || len(r.dets) == 0 {
		return s
	}
	st := Stream{r: r, prev: noPrev}
	return st.step(s, true)
}

// Stream returns a new Stream: the redactor for one text that arrives in
// pieces (the deltas of one output item).
func (r *Redactor) Stream() *Stream { return &Stream{r: r, prev: noPrev} }

// Stream redacts one text delivered in pieces. Push returns at once all the
// text that can no longer be part of a secret; it holds back only the
// shortest tail that could still be the start of one (at most
// Redactor.MaxHold bytes). Once a secret is confirmed its marker is returned
// immediately and the rest of the secret is dropped as it arrives. The
// concatenation of everything a Stream returns equals Redactor.String of the
// whole text, however the text was split. A Stream is not safe for
// concurrent use.
type Stream struct {
	r    *Redactor
	pend string    // held back
	prev rune      // the rune before pend (noPrev at the start)
	part string    // trailing bytes of an incomplete rune before pend
	sw   swallower // inside a confirmed secret
}

// Push adds the next piece of text and returns what may be released now.
func (s *Stream) Push(text string) string { return s.step(text, false) }

// Flush ends the text: it returns everything still held back, redacted, and
// resets the stream for a new text.
func (s *Stream) Flush() string {
	out := s.step("", true)
	s.Reset()
	return out
}

// Pending returns the text held back.
func (s *Stream) Pending() string { return s.pend }

// Reset discards all state: the next Push starts a new text.
func (s *Stream) Reset() { *s = Stream{r: s.r, prev: noPrev} }

// prevAt returns the rune before buf[i].
func (s *Stream) prevAt(buf string, i int) rune {
	if i == 0 {
		return s.prev
	}
	if c := buf[i-1]; c < utf8.RuneSelf {
		// The letter of a JSON escape (\n, \t …) stands for a separator:
		// tool-call arguments stream as raw JSON text.
		if strings.IndexByte("bfnrt", c) >= 0 && (i >= 2 && buf[i-2] == '\\' || i == 1 && s.prev == '\\') {
			return ' '
		}
		return rune(c)
	}
	tail := buf[max(0, i-utf8.UTFMax):i]
	if i < utf8.UTFMax {
		tail = s.part + buf[:i]
	}
	r, _ := utf8.DecodeLastRuneInString(tail)
	return r
}

// setContext records the left context for the text that follows buf[:i].
func (s *Stream) setContext(buf string, i int) {
	if i == 0 {
		return
	}
	s.prev = s.prevAt(buf, i)
	s.part = ""
	if s.prev == utf8.RuneError {
		// Perhaps a rune split across pushes: keep its first bytes.
		s.part = strings.Clone(buf[max(0, i-utf8.UTFMax+1):i])
	}
}

func (s *Stream) step(in string, final bool) string {
	r := s.r
	if r == nil || len(r.dets) == 0 {
		return s.pend + in
	}
	buf := in
	if s.pend != "" {
		buf = s.pend + in
		s.pend = ""
	}
	i := 0
	if s.sw != nil {
		n, more := s.sw.eat(buf, final)
		i = n
		if more {
			s.setContext(buf, i)
			return ""
		}
		s.sw = nil
	}
	var out []byte // nil until something is replaced
	start := i
	for i < len(buf) {
		c := buf[i]
		if !r.trigger[c] {
			i++
			continue
		}
		prev := s.prevAt(buf, i)
		best, bestDet, anyNeed := result{}, -1, false
		for _, di := range r.byFirst[c] {
			res := r.dets[di].scan(buf[i:], prev, final)
			switch res.v {
			case match:
				if bestDet < 0 || res.n > best.n {
					best, bestDet = res, di
				}
			case need:
				anyNeed = true
			}
		}
		switch {
		case bestDet >= 0:
			out = append(out, buf[start:i+best.keep]...)
			out = append(out, r.markers[bestDet]...)
			i += best.n
			if best.more != nil {
				n, more := best.more.eat(buf[i:], final)
				i += n
				if more {
					s.sw = best.more
					s.setContext(buf, i)
					return string(out)
				}
			}
			start = i
		case anyNeed:
			s.pend = strings.Clone(buf[i:])
			s.setContext(buf, i)
			if out == nil {
				return buf[start:i]
			}
			return string(append(out, buf[start:i]...))
		default:
			i++
		}
	}
	s.setContext(buf, len(buf))
	if out == nil {
		return buf[start:]
	}
	return string(append(out, buf[start:]...))
}
