package jsonx

// Prefix and Suffix are the resume layer over a Scanner, for streams of
// documents that begin and end alike (the chunks of a chat completion
// stream share their first ~200 bytes and their last ~50 byte for byte).
// Reading is a pure function of the bytes read, so a document that begins
// with the bytes of an earlier one can be read on from where the scanner
// stood after them, and one whose rest equals the rest of an earlier one
// that had no effect on the caller's result can stop there. The scanner
// restores only its own state (position, depth); the caller restores what
// it had found in the prefix (offsets of values in it, say) and decides
// which prefixes and suffixes qualify.

// Prefix remembers the first bytes of a document and the nesting depth the
// scanner had after them. The zero Prefix is empty.
type Prefix struct {
	b     []byte
	depth int
}

// Take records the bytes s has read of its document as the prefix, when no
// string among them needed unescaping (so nothing the caller kept from them
// lies in the scratch buffer, which the next document reuses) and they are
// at most max bytes; otherwise the prefix stays what it was (a prefix of an
// earlier document is as good as any). It reports whether it recorded one.
func (p *Prefix) Take(s *Scanner, max int) bool {
	if s.err != nil || len(s.scratch) > 0 || s.pos > max {
		return false
	}
	p.b = append(p.b[:0], s.data[:s.pos]...)
	p.depth = s.depth
	return true
}

// Forget empties the prefix.
func (p *Prefix) Forget() { p.b = p.b[:0] }

// Bytes returns the prefix (valid until the next Take).
func (p *Prefix) Bytes() []byte { return p.b }

// Len returns the length of the prefix.
func (p *Prefix) Len() int { return len(p.b) }

// Matches reports whether data begins with the prefix, and goes on after it.
func (p *Prefix) Matches(data []byte) bool {
	return len(p.b) > 0 && len(data) > len(p.b) && string(data[:len(p.b)]) == string(p.b)
}

// Resume starts s on data, which Matches, positioned right after the
// prefix at the depth it had there.
func (p *Prefix) Resume(s *Scanner, data []byte) {
	s.Reset(data)
	s.pos, s.depth = len(p.b), p.depth
}

// Suffix remembers the rest of a document from some position on.
type Suffix struct{ b []byte }

// Record remembers the rest of s's document from offset from, when it is at
// most max bytes; otherwise the suffix is forgotten.
func (x *Suffix) Record(s *Scanner, from, max int) {
	if len(s.data)-from > max {
		x.Forget()
		return
	}
	x.b = append(x.b[:0], s.data[from:]...)
}

// Forget empties the suffix.
func (x *Suffix) Forget() { x.b = x.b[:0] }

// Bytes returns the suffix (valid until the next Record).
func (x *Suffix) Bytes() []byte { return x.b }

// SkipRest reports whether the rest of s's document from the read position
// equals the suffix and, if so, moves s to the end of the document, with
// every object and array closed, as if it had read the rest.
func (x *Suffix) SkipRest(s *Scanner) bool {
	if len(x.b) == 0 || s.err != nil || string(s.data[s.pos:]) != string(x.b) {
		return false
	}
	s.pos, s.depth = len(s.data), 0
	return true
}
