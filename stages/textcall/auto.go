package textcall

import (
	"slices"
	"strings"
)

// auto recognizes the format of a reply by its markers: until it sees the
// start of some format's markup that the format claims, it gives the text
// back (holding only a tail that could still start a marker); from then on
// the reply is that format's.
type auto struct {
	cfg     Config
	fs      []*Format // model-preferred formats first
	starts  []string  // every format's starts, deduplicated
	trigger byteSet   // the first bytes of starts
	held    string
	seen    bool // non-space text was given back
	locked  Parser
	name    string
	hinted  []*Format // formats whose ModelStarts the model name turns on
	ix      *autoIndex
}

// autoIndex is what auto needs of the registry: the formats by name, every
// start deduplicated, and the bytes a start can begin with.
type autoIndex struct {
	fs      []*Format
	starts  []string
	trigger byteSet
	leads   []*Format
	lead    byteSet
}

// byteSet is a set of bytes: the bytes a marker can begin with.
type byteSet [4]uint64

func (b *byteSet) add(c byte) { b[c>>6] |= 1 << (c & 63) }

func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }

// in reports whether s holds a byte of the set: one table look-up per byte,
// cheaper than strings.ContainsAny for the short deltas a stream carries.
func (b *byteSet) in(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; b[c>>6]&(1<<(c&63)) != 0 {
			return true
		}
	}
	return false
}

// index returns the registry's autoIndex, built once per registry state.
func index() *autoIndex {
	registryMu.RLock()
	ix := startIndex
	registryMu.RUnlock()
	if ix != nil {
		return ix
	}
	ix = &autoIndex{fs: formats()}
	for _, f := range ix.fs {
		for _, s := range f.Starts {
			if !slices.Contains(ix.starts, s) {
				ix.starts = append(ix.starts, s)
				ix.trigger.add(s[0])
			}
		}
		if len(f.LeadStarts) > 0 && f.LeadClaim != nil {
			ix.leads = append(ix.leads, f)
			for _, s := range f.LeadStarts {
				ix.lead.add(s[0])
			}
		}
	}
	registryMu.Lock()
	startIndex = ix
	registryMu.Unlock()
	return ix
}

func newAuto(cfg Config) *auto {
	ix := index()
	a := &auto{cfg: cfg, fs: ix.fs, starts: ix.starts, trigger: ix.trigger, ix: ix}
	model := strings.ToLower(cfg.Model)
	prefers := func(f *Format) bool {
		return model != "" && slices.ContainsFunc(f.Models, func(m string) bool { return strings.Contains(model, m) })
	}
	if slices.ContainsFunc(ix.fs, prefers) {
		a.fs = slices.Clone(ix.fs)
		slices.SortStableFunc(a.fs, func(x, y *Format) int {
			px, py := prefers(x), prefers(y)
			switch {
			case px && !py:
				return -1
			case py && !px:
				return 1
			}
			return 0
		})
	}
	for _, f := range ix.fs {
		if len(f.ModelStarts) == 0 || !prefers(f) {
			continue
		}
		if a.hinted == nil {
			a.starts = slices.Clone(a.starts)
		}
		a.hinted = append(a.hinted, f)
		for _, s := range f.ModelStarts {
			if !slices.Contains(a.starts, s) {
				a.starts = append(a.starts, s)
				a.trigger.add(s[0])
			}
		}
	}
	return a
}

// Chosen returns the name of the format auto locked on ("" before it has).
func (a *auto) Chosen() string { return a.name }

// Quiet reports whether s holds no byte that could start a marker.
func (a *auto) Quiet(s string) bool {
	if a.locked != nil {
		return a.locked.Quiet(s)
	}
	if a.held != "" || a.trigger.in(s) {
		return false
	}
	if !a.seen {
		rest := strings.TrimLeft(s, " \t\r\n")
		if rest == "" {
			return true
		}
		if a.ix.lead.has(rest[0]) {
			return false // the reply may start with a bare call
		}
		a.seen = true
	}
	return true
}

// leadClaim reads the first text of the reply, rest (white space before
// it left out), for a format whose LeadStarts it begins with: the format
// that claims it, or whether more text is needed to tell.
func (a *auto) leadClaim(rest string) (_ *Format, more bool) {
	if rest == "" || !a.ix.lead.has(rest[0]) {
		return nil, false
	}
	for _, f := range a.ix.leads {
		if hasPrefixAny(rest, f.LeadStarts...) == "" && !partialOf(rest, f.LeadStarts...) {
			continue
		}
		switch f.LeadClaim(rest, a.cfg) {
		case ClaimYes:
			return f, false
		case ClaimMore:
			more = true
		}
	}
	return nil, more
}

// Feed gives back text until a format's markup starts, then hands the rest
// to that format's parser.
func (a *auto) Feed(out []Event, s string) []Event {
	if a.locked != nil {
		return a.locked.Feed(out, s)
	}
	buf := a.held + s
	a.held = ""
	if !a.seen && len(a.ix.leads) > 0 {
		rest := strings.TrimLeft(buf, " \t\r\n")
		f, more := a.leadClaim(rest)
		switch {
		case f != nil:
			out = a.give(out, buf[:len(buf)-len(rest)])
			a.locked, a.name = f.New(a.cfg), f.Name
			return a.locked.Feed(out, rest)
		case more:
			// Held while the reply so far can still become a call.
			out = a.give(out, buf[:len(buf)-len(rest)])
			a.held = rest
			return out
		}
	}
	for buf != "" {
		at, which := IndexFirst(buf, a.starts...)
		if at < 0 {
			keep := HeldTail(buf, a.starts...)
			out = a.give(out, buf[:len(buf)-keep])
			a.held = buf[len(buf)-keep:]
			return out
		}
		start := a.starts[which]
		atStart := !a.seen && isSpace(buf[:at])
		more := false
		for _, f := range a.fs {
			if !slices.Contains(f.Starts, start) && !(slices.Contains(a.hinted, f) && slices.Contains(f.ModelStarts, start)) {
				continue
			}
			c := ClaimYes
			if f.Claim != nil {
				c = f.Claim(buf[at:], atStart)
			}
			switch c {
			case ClaimYes:
				out = a.give(out, buf[:at])
				a.locked, a.name = f.New(a.cfg), f.Name
				return a.locked.Feed(out, buf[at:])
			case ClaimMore:
				more = true
			}
		}
		if more {
			out = a.give(out, buf[:at])
			a.held = buf[at:]
			return out
		}
		// No format claims this start: it is text; look further on.
		out = a.give(out, buf[:at+1])
		buf = buf[at+1:]
	}
	return out
}

func (a *auto) give(out []Event, s string) []Event {
	if !a.seen && !isSpace(s) {
		a.seen = true
	}
	return AppendText(out, s)
}

// Close gives back what is held, or closes the format auto locked on.
func (a *auto) Close(out []Event) []Event {
	if a.locked != nil {
		return a.locked.Close(out)
	}
	out = AppendText(out, a.held)
	a.held = ""
	return out
}
