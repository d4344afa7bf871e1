package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
)

// parse checks that svg is well-formed XML with an <svg> root and returns
// every element's name, its attributes and its text content, in order.
type element struct {
	name  string
	attrs map[string]string
	text  string
}

func parse(t *testing.T, svg []byte) []element {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var (
		els   []element
		stack []int
		root  string
	)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tk.Name.Local
				if tk.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("root namespace %q", tk.Name.Space)
				}
			}
			e := element{name: tk.Name.Local, attrs: map[string]string{}}
			for _, a := range tk.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			els = append(els, e)
			stack = append(stack, len(els)-1)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				els[stack[len(stack)-1]].text += string(tk)
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return els
}

func texts(els []element, class string) []string {
	var out []string
	for _, e := range els {
		if e.name == "text" && (class == "" || e.attrs["class"] == class) {
			out = append(out, e.text)
		}
	}
	return out
}

func count(els []element, name, class string) int {
	n := 0
	for _, e := range els {
		if e.name == name && (class == "" || e.attrs["class"] == class) {
			n++
		}
	}
	return n
}

func TestBarsLabelled(t *testing.T) {
	nan := math.NaN()
	c := Bars{
		Title:  `per stage <fused & async> "quoted"`,
		Notes:  []string{"corpus: generated", "machine: 2 CPUs"},
		Axis:   "ns per event (log scale)",
		Log:    true,
		Series: []Series{{Name: "fused"}, {Name: "async"}, {Name: "openai-go", Color: "#123456"}},
		Groups: []Group{
			{Label: "sse.decode", Values: []float64{60, 300, nan}},
			{Label: "chat.decode", Values: []float64{200, -5, nan}},
			{Label: "end to end", Values: []float64{650, 1700, 22000}, Separate: true},
		},
	}
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	els := parse(t, svg)
	if got := texts(els, "title"); len(got) != 1 || got[0] != c.Title {
		t.Errorf("title %q", got)
	}
	if got := texts(els, "axis-title"); len(got) != 1 || got[0] != c.Axis {
		t.Errorf("axis title %q", got)
	}
	if got := strings.Join(texts(els, "legend"), ","); got != "fused,async,openai-go" {
		t.Errorf("legend %q", got)
	}
	if got := strings.Join(texts(els, "group"), ","); got != "sse.decode,chat.decode,end to end" {
		t.Errorf("groups %q", got)
	}
	if got := texts(els, "note"); len(got) != 2 {
		t.Errorf("notes %q", got)
	}
	// 6 positive values → 6 bars; the negative one is labelled, NaNs take no room.
	if n := count(els, "rect", "bar"); n != 6 {
		t.Errorf("%d bars, want 6", n)
	}
	if vs := strings.Join(texts(els, "value"), ","); !strings.Contains(vs, "below noise") || !strings.Contains(vs, "22k") {
		t.Errorf("value labels %q", vs)
	}
	// Ticks of a log axis from 10 to 100k: powers of ten.
	if got := strings.Join(texts(els, "tick"), ","); got != "10,100,1000,10k,100k" {
		t.Errorf("ticks %q", got)
	}
	// The peer's bar uses its own colour; longer values have longer bars.
	var widths []float64
	for _, e := range els {
		if e.name == "rect" && e.attrs["class"] == "bar" {
			var w float64
			fmt.Sscan(e.attrs["width"], &w)
			widths = append(widths, w)
			if e.attrs["fill"] == "" {
				t.Errorf("bar without fill")
			}
		}
	}
	if !(widths[0] < widths[1] && widths[3] < widths[4] && widths[4] < widths[5]) {
		t.Errorf("bar widths not ordered like their values: %v", widths)
	}
	if !bytes.Contains(svg, []byte(`fill="#123456"`)) {
		t.Error("series colour not used")
	}
}

func TestBarsErrors(t *testing.T) {
	if _, err := (Bars{}).SVG(); err == nil {
		t.Error("empty chart: no error")
	}
	c := Bars{Series: []Series{{Name: "a"}}, Groups: []Group{{Label: "g", Values: []float64{1, 2}}}}
	if _, err := c.SVG(); err == nil {
		t.Error("more values than series: no error")
	}
}

func TestLinesLabelled(t *testing.T) {
	c := Lines{
		Title: "added latency vs concurrent streams",
		XAxis: "concurrent streams", YAxis: "added latency per event (ms)",
		XLog: true,
		Lines: []Line{
			{Series: Series{Name: "serve p99"}, Points: []Point{{100, 0.5}, {1000, 11}, {2000, 107}}},
			{Series: Series{Name: "serve p50"}, Points: []Point{{100, 0.14}, {1000, 0.15}, {2000, math.NaN()}}, Dashed: true},
		},
	}
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	els := parse(t, svg)
	if got := strings.Join(texts(els, "axis-title"), "|"); got != c.XAxis+"|"+c.YAxis {
		t.Errorf("axis titles %q", got)
	}
	if n := count(els, "circle", "point"); n != 5 {
		t.Errorf("%d points, want 5 (the NaN is skipped)", n)
	}
	if n := count(els, "polyline", "line"); n != 2 {
		t.Errorf("%d lines", n)
	}
	if _, err := (Lines{}).SVG(); err == nil {
		t.Error("no points: no error")
	}
}

func TestStack(t *testing.T) {
	a, _ := Bars{Title: "a", Series: []Series{{Name: "s"}}, Groups: []Group{{Label: "g", Values: []float64{1}}}}.Render()
	b, _ := Lines{Title: "b", Lines: []Line{{Series: Series{Name: "l"}, Points: []Point{{1, 1}, {2, 3}}}}}.Render()
	svg := Stack("both", a, b)
	els := parse(t, svg)
	if n := count(els, "svg", ""); n != 3 {
		t.Errorf("%d svg elements, want root + 2", n)
	}
	_, ha := a.Size()
	if els[2].name != "svg" || els[2].attrs["y"] != "0" {
		t.Errorf("first part: %+v", els[2])
	}
	found := false
	for _, e := range els[3:] {
		if e.name == "svg" && e.attrs["y"] == num(ha) {
			found = true
		}
	}
	if !found {
		t.Errorf("second part is not below the first (y = %v)", ha)
	}
}

func TestEscape(t *testing.T) {
	got := Escape("a<b>&\"c'\x01\td")
	if got != "a&lt;b&gt;&amp;&quot;c&#39;\td" {
		t.Errorf("Escape = %q", got)
	}
	d := NewDoc(10, 10, "t\x00<")
	d.Text(1, 1, "x]]>&", Style{Class: `"q"`})
	parse(t, d.Bytes())
}

func TestScale(t *testing.T) {
	tests := []struct {
		vs       []float64
		log      bool
		min, max float64
	}{
		{[]float64{3, 47}, false, 0, 50},
		{[]float64{-3, 8}, false, -5, 10},
		{[]float64{12, 22000}, true, 10, 100000},
		{[]float64{100}, true, 100, 1000},
		{nil, false, 0, 1},
		{[]float64{math.NaN(), -1}, true, 1, 10},
	}
	for _, tt := range tests {
		s := NewScale(tt.vs, tt.log)
		if s.Min != tt.min || s.Max != tt.max {
			t.Errorf("NewScale(%v, %v) = [%v, %v], want [%v, %v]", tt.vs, tt.log, s.Min, s.Max, tt.min, tt.max)
		}
		for _, v := range tt.vs {
			if p := s.Pos(v); p < 0 || p > 1 {
				t.Errorf("Pos(%v) = %v", v, p)
			}
		}
		ts := s.Ticks()
		if len(ts) < 2 {
			t.Errorf("%v: ticks %v", tt.vs, ts)
		}
		for i := 1; i < len(ts); i++ {
			if ts[i].Value <= ts[i-1].Value {
				t.Errorf("%v: ticks not increasing: %v", tt.vs, ts)
			}
		}
	}
	s := Scale{Min: 10, Max: 1000, Log: true}
	if p := s.Pos(100); math.Abs(p-0.5) > 1e-9 {
		t.Errorf("log Pos(100) = %v", p)
	}
	if got := fmt.Sprint(Scale{Min: 1, Max: 100, Log: true}.Ticks()); !strings.Contains(got, "{2 2}") || !strings.Contains(got, "{50 50}") {
		t.Errorf("two-decade log ticks lack 2 and 5: %s", got)
	}
}

func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.0242: "0.0242", 4.47: "4.47", 42: "42", 839.3: "839", 1500: "1500", 22163.9: "22.2k", 3.4e6: "3.4M", 2e9: "2G", -12.5: "-12.5"} {
		if got := FormatValue(v); got != want {
			t.Errorf("FormatValue(%v) = %q, want %q", v, got, want)
		}
	}
}

// A title or note wider than the canvas is wrapped into several centred
// lines, each within the canvas with its margins (the bench chart's title
// used to run off both sides), and the plot moves down to make room; the
// text is kept whole.
func TestHeadingWrapsInsideCanvas(t *testing.T) {
	long := "harnessflow bench — claude-code-bare · messages · response direction (MessagesHarness(ClaudeCode)): cost per stage"
	note := "go1.26.8 linux/amd64, 2 CPUs (GOMAXPROCS 2), AMD EPYC 7B13 64-Core Processor; load average 2.46 1.14 0.64 before, 3.01 2.00 1.00 after; corpus generated chat, 10000 chunks"
	bars := Bars{Title: long, Notes: []string{note}, Series: []Series{{Name: "fused"}}, Groups: []Group{{Label: "a", Values: []float64{1}}}}
	lines := Lines{Title: long, Notes: []string{note}, Lines: []Line{{Series: Series{Name: "l"}, Points: []Point{{X: 1, Y: 1}, {X: 2, Y: 3}}}}}
	short := Bars{Title: "short", Series: bars.Series, Groups: bars.Groups}
	for name, render := range map[string]func() ([]byte, error){"bars": bars.SVG, "lines": lines.SVG} {
		svg, err := render()
		if err != nil {
			t.Fatal(err)
		}
		els := parse(t, svg)
		width, _ := strconvFloat(els[0].attrs["width"])
		var titles, notes []string
		for _, e := range els {
			cls := e.attrs["class"]
			if cls != "title" && cls != "note" {
				continue
			}
			size, _ := strconvFloat(e.attrs["font-size"])
			factor := textFactor
			if cls == "title" {
				factor, titles = boldFactor, append(titles, e.text)
			} else {
				notes = append(notes, e.text)
			}
			if w := textWidth(e.text, size, factor); w > width-2*headingMargin {
				t.Errorf("%s: %s line %q is %.0f px wide, the canvas %.0f", name, cls, e.text, w, width)
			}
			if x, _ := strconvFloat(e.attrs["x"]); x != width/2 || e.attrs["text-anchor"] != "middle" {
				t.Errorf("%s: %s line not centred: x %v", name, cls, e.attrs["x"])
			}
		}
		if len(titles) < 2 || strings.Join(titles, " ") != long {
			t.Errorf("%s: title lines %q, want %q wrapped", name, titles, long)
		}
		if len(notes) < 2 || strings.Join(notes, " ") != note {
			t.Errorf("%s: note lines %q", name, notes)
		}
	}
	d1, _ := bars.Render()
	d2, _ := short.Render()
	if _, h1 := d1.Size(); func() bool { _, h2 := d2.Size(); return h1 <= h2 }() {
		t.Errorf("the wrapped heading did not make the chart taller")
	}
}

func strconvFloat(s string) (float64, error) {
	var f float64
	_, err := fmt.Sscan(s, &f)
	return f, err
}
