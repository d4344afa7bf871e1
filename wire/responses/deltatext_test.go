package responses

import (
	"strings"
	"testing"
	"unsafe"
)

// appendLog is an honest producer: one append-only buffer, SoFar a view
// over it (the rule of protocol.ResponseEvent.SoFar).
type appendLog struct{ b []byte }

func (l *appendLog) add(p string) (delta, soFar string) {
	start := len(l.b)
	l.b = append(l.b, p...)
	return unsafe.String(&l.b[start], len(p)), unsafe.String(&l.b[0], len(l.b))
}

// An honest producer's text is kept as its own bytes, never copied, across
// the moves of its buffer.
func TestDeltaTextHonest(t *testing.T) {
	var l appendLog
	var d deltaText
	var want strings.Builder
	for i := range 5000 {
		p := strings.Repeat(string(rune('a'+i%26)), 1+i%200)
		delta, soFar := l.add(p)
		d.add(delta, soFar)
		want.WriteString(p)
	}
	got := d.String()
	if got != want.String() {
		t.Fatalf("text of %d bytes differs from the deltas' %d", len(got), want.Len())
	}
	if d.copied || unsafe.StringData(got) != &l.b[0] {
		t.Errorf("the text was copied (copied=%v)", d.copied)
	}
}

// Without SoFar the text is a copy, and exactly the deltas.
func TestDeltaTextWithoutSoFar(t *testing.T) {
	var d deltaText
	for _, p := range []string{"a", "bc", "def"} {
		d.add(p, "")
	}
	if d.String() != "abcdef" || !d.copied {
		t.Errorf("text %q (copied=%v)", d.String(), d.copied)
	}
}

// Every SoFar that is not the text so far plus the delta is refused, and
// the text stays the deltas' from then on, even when later SoFars are
// right.
func TestDeltaTextLies(t *testing.T) {
	fresh := func(s string) string { return strings.Clone(s) } // same bytes, another address
	cases := []struct {
		name  string
		soFar string // of the delta "def" after "abc"
		keep  bool   // an honest SoFar (at another address)
	}{
		{"right, elsewhere", fresh("abcdef"), true},
		{"wrong prefix, same length", fresh("abXdef"), false},
		{"wrong suffix, same length", fresh("abcdeX"), false},
		{"suffix rewritten, same length", fresh("abc***"), false},
		{"longer", fresh("abcdefg"), false},
		{"longer, ends right", fresh("xabcdef"), false},
		{"shorter, ends right", fresh("bcdef"), false},
		{"the delta alone", fresh("def"), false},
		{"the text so far only", fresh("abc"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var l appendLog
			var d deltaText
			delta, soFar := l.add("abc")
			d.add(delta, soFar)
			d.add("def", c.soFar)
			if d.copied == c.keep {
				t.Errorf("copied = %v, want %v", d.copied, !c.keep)
			}
			_, soFar = l.add("def")
			d.add("ghi", soFar+"ghi") // right, but after the lie it is not looked at
			if got := d.String(); got != "abcdefghi" {
				t.Errorf("text %q, want the deltas %q", got, "abcdefghi")
			}
		})
	}
}

// A stage between the producer and the writer rewrote a delta and left
// SoFar: equal length or not, the writer keeps what it wrote.
func TestDeltaTextRewrittenDelta(t *testing.T) {
	for _, repl := range []string{"******", "[redacted]", ""} {
		var l appendLog
		var d deltaText
		want := ""
		for _, p := range []string{"my ", "secret", " is out"} {
			delta, soFar := l.add(p)
			out := strings.ReplaceAll(delta, "secret", repl)
			if out == "" {
				continue // the writer skips empty deltas
			}
			d.add(out, soFar)
			want += out
		}
		if d.String() != want || !d.copied {
			t.Errorf("%q: text %q (copied=%v), want %q", repl, d.String(), d.copied, want)
		}
	}
}

// The first delta of a text may come with the producer's longer text (its
// item began in one the writer closed before): the text is the delta on.
func TestDeltaTextStartsInside(t *testing.T) {
	var l appendLog
	l.add("closed early: ")
	var d deltaText
	for _, p := range []string{"after", " the split"} {
		delta, soFar := l.add(p)
		d.add(delta, soFar)
	}
	if d.String() != "after the split" || d.copied {
		t.Errorf("text %q (copied=%v)", d.String(), d.copied)
	}
	var e deltaText
	e.add("x", "not ending with the delta")
	if e.String() != "x" || !e.copied {
		t.Errorf("text %q (copied=%v)", e.String(), e.copied)
	}
}

// A SoFar at a new address with every delta (a producer copying its text
// each time) costs a comparison each: the credit runs out, the text is
// copied, and the bytes compared stay a small multiple of the text.
func TestDeltaTextCheckingIsLinear(t *testing.T) {
	var d deltaText
	var text strings.Builder
	compared := 0
	for i := 0; i < 10000 && !d.copied; i++ {
		p := strings.Repeat("z", 256)
		before := d.credit
		text.WriteString(p)
		d.add(p, strings.Clone(text.String()))
		if !d.copied && i > 0 {
			compared += before + creditPerByte*len(p) - d.credit
		}
	}
	if !d.copied {
		t.Fatalf("a SoFar copied every delta was still checked after %d bytes", text.Len())
	}
	d.add("end", "")
	if d.String() != text.String()+"end" {
		t.Fatal("text differs from the deltas")
	}
	if limit := compareCredit + creditPerByte*text.Len(); compared > limit {
		t.Errorf("compared %d bytes for a text of %d, more than %d", compared, text.Len(), limit)
	}
}
