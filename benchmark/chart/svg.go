// Package chart writes small, self-contained SVG charts — grouped
// horizontal bars and lines over numeric axes — with a title, labelled axes
// with units and a legend. It has no dependencies beyond the standard
// library; the output is plain SVG 1.1 that browsers render as it is.
//
// The charts are data: fill in a [Bars] or a [Lines] value and call its SVG
// method. Both are built on [Doc], a minimal SVG writer that escapes every
// text and attribute it is given, and on [Scale], a linear or logarithmic
// axis mapping with "nice" ticks.
package chart

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Doc is an SVG document being written. Shapes are appended in call order
// (later ones are painted on top). The zero value is not usable; call
// [NewDoc].
type Doc struct {
	w, h  float64
	title string
	b     strings.Builder // the shapes
}

// NewDoc starts a document of the given size in pixels, with a white
// background and title as its accessible name (the <title> element).
func NewDoc(width, height float64, title string) *Doc {
	d := &Doc{w: width, h: height, title: title}
	d.Rect(0, 0, width, height, Style{Fill: "#ffffff"})
	return d
}

// Size returns the document's width and height in pixels.
func (d *Doc) Size() (width, height float64) { return d.w, d.h }

// Style is the presentation of one shape or text. Empty fields are left
// out (the SVG defaults apply).
type Style struct {
	Fill        string  // fill colour, e.g. "#1f77b4" or "none"
	Stroke      string  // stroke colour
	StrokeWidth float64 // stroke width in pixels
	Dash        string  // stroke-dasharray, e.g. "4 3"
	Size        float64 // font size in pixels (text)
	Weight      string  // font weight, e.g. "bold" (text)
	Anchor      string  // text-anchor: start, middle or end (text)
	Rotate      float64 // rotation in degrees around the text's anchor point (text)
	Class       string  // class attribute, for tests and stylesheets
}

func (s Style) attrs(x, y float64) string {
	var b strings.Builder
	add := func(name, v string) {
		if v != "" {
			b.WriteString(" " + name + `="` + Escape(v) + `"`)
		}
	}
	add("class", s.Class)
	add("fill", s.Fill)
	add("stroke", s.Stroke)
	if s.StrokeWidth > 0 {
		add("stroke-width", num(s.StrokeWidth))
	}
	add("stroke-dasharray", s.Dash)
	if s.Size > 0 {
		add("font-size", num(s.Size))
	}
	add("font-weight", s.Weight)
	add("text-anchor", s.Anchor)
	if s.Rotate != 0 {
		add("transform", "rotate("+num(s.Rotate)+" "+num(x)+" "+num(y)+")")
	}
	return b.String()
}

// Rect draws a rectangle with its top-left corner at (x, y).
func (d *Doc) Rect(x, y, w, h float64, s Style) {
	fmt.Fprintf(&d.b, `<rect x="%s" y="%s" width="%s" height="%s"%s/>`+"\n", num(x), num(y), num(max(w, 0)), num(max(h, 0)), s.attrs(x, y))
}

// Line draws a straight line.
func (d *Doc) Line(x1, y1, x2, y2 float64, s Style) {
	fmt.Fprintf(&d.b, `<line x1="%s" y1="%s" x2="%s" y2="%s"%s/>`+"\n", num(x1), num(y1), num(x2), num(y2), s.attrs(x1, y1))
}

// Polyline draws connected segments through the points (x0, y0, x1, y1, …).
func (d *Doc) Polyline(xy []float64, s Style) {
	var pts strings.Builder
	for i := 0; i+1 < len(xy); i += 2 {
		if i > 0 {
			pts.WriteByte(' ')
		}
		pts.WriteString(num(xy[i]) + "," + num(xy[i+1]))
	}
	if s.Fill == "" {
		s.Fill = "none"
	}
	fmt.Fprintf(&d.b, `<polyline points="%s"%s/>`+"\n", pts.String(), s.attrs(0, 0))
}

// Circle draws a circle centred at (cx, cy).
func (d *Doc) Circle(cx, cy, r float64, s Style) {
	fmt.Fprintf(&d.b, `<circle cx="%s" cy="%s" r="%s"%s/>`+"\n", num(cx), num(cy), num(r), s.attrs(cx, cy))
}

// Text writes s with its anchor point at (x, y) (y is the baseline).
func (d *Doc) Text(x, y float64, s string, st Style) {
	fmt.Fprintf(&d.b, `<text x="%s" y="%s"%s>%s</text>`+"\n", num(x), num(y), st.attrs(x, y), Escape(s))
}

// header is the opening svg tag of a document of size w×h.
func header(w, h float64, extra string) string {
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%s" height="%s" viewBox="0 0 %s %s"%s>`,
		num(w), num(h), num(w), num(h), extra)
}

// Bytes returns the document as a standalone SVG file.
func (d *Doc) Bytes() []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(header(d.w, d.h, ` font-family="Helvetica, Arial, sans-serif"`))
	b.WriteString("\n<title>" + Escape(d.title) + "</title>\n")
	b.WriteString(d.b.String())
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// Stack returns one SVG file showing docs one below the other (as wide as
// the widest), titled title: e.g. a per-stage chart above a latency chart.
func Stack(title string, docs ...*Doc) []byte {
	w, h := 0.0, 0.0
	for _, d := range docs {
		w, h = max(w, d.w), h+d.h
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(header(w, h, ` font-family="Helvetica, Arial, sans-serif"`))
	b.WriteString("\n<title>" + Escape(title) + "</title>\n")
	y := 0.0
	for _, d := range docs {
		fmt.Fprintf(&b, `<svg x="0" y="%s" width="%s" height="%s" viewBox="0 0 %s %s">`+"\n", num(y), num(d.w), num(d.h), num(d.w), num(d.h))
		b.WriteString("<title>" + Escape(d.title) + "</title>\n")
		b.WriteString(d.b.String())
		b.WriteString("</svg>\n")
		y += d.h
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// Escape escapes s for XML text and attribute values, dropping the control
// characters XML 1.0 does not allow.
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteRune(r)
		case r < 0x20 || r == 0xFFFE || r == 0xFFFF || (r >= 0xD800 && r <= 0xDFFF):
			// not allowed in XML 1.0: dropped
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// num formats a coordinate compactly (at most two decimals).
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// Palette is the default series colours (colour-blind safe, distinct in
// greyscale by lightness).
var Palette = []string{"#1b6ca8", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2", "#9c755f", "#4e4e4e"}

// color returns the colour of series i: its own, else the palette's.
func color(own string, i int) string {
	if own != "" {
		return own
	}
	return Palette[i%len(Palette)]
}

// heading is the title and notes of a chart, wrapped to the canvas.
type heading struct {
	titleLines []string
	noteLines  []string
}

// newHeading wraps title and notes to fit a canvas w pixels wide, with a
// margin on both sides: a long title is never cut by the canvas's edges.
func newHeading(w float64, title string, notes []string) heading {
	width := w - 2*headingMargin
	h := heading{titleLines: wrapText(title, titleSize, width, boldFactor)}
	for _, n := range notes {
		h.noteLines = append(h.noteLines, wrapText(n, noteSize, width, textFactor)...)
	}
	return h
}

// headingMargin is the space kept free on each side of a heading.
const headingMargin = 24

// height is the space the heading takes from the top of the canvas,
// including the room left for the legend below it.
func (h heading) height() float64 {
	return 40 + float64(len(h.titleLines)-1)*titleLine + float64(len(h.noteLines))*noteLine + 30
}

// Line heights of the heading.
const (
	titleLine = 24
	noteLine  = 18
)

// draw writes the heading centred on a canvas w pixels wide.
func (h heading) draw(d *Doc, w float64) {
	y := 30.0
	for i, t := range h.titleLines {
		if i > 0 {
			y += titleLine
		}
		d.Text(w/2, y, t, Style{Size: titleSize, Weight: "bold", Anchor: "middle", Class: "title"})
	}
	y += 22
	for _, n := range h.noteLines {
		d.Text(w/2, y, n, Style{Size: noteSize, Anchor: "middle", Fill: "#444444", Class: "note"})
		y += noteLine
	}
}

// wrapText breaks s at spaces into lines no wider than width (estimated
// with factor); a word longer than width stays whole on its own line.
func wrapText(s string, size, width, factor float64) []string {
	words := strings.Fields(s)
	if len(words) == 0 {
		return []string{s}
	}
	var lines []string
	cur := words[0]
	for _, w := range words[1:] {
		if textWidth(cur+" "+w, size, factor) <= width {
			cur += " " + w
			continue
		}
		lines = append(lines, cur)
		cur = w
	}
	return append(lines, cur)
}

// Width factors of the layout estimates: an average glyph is about this
// many times the font size wide (bold is wider).
const (
	textFactor = 0.56
	boldFactor = 0.62
)

// textWidth estimates the rendered width of s at a font size.
func textWidth(s string, size, factor float64) float64 {
	return float64(len([]rune(s))) * size * factor
}

// approxTextWidth estimates the rendered width of s at a font size, for
// layout (the SVG is not measured by a renderer).
func approxTextWidth(s string, size float64) float64 {
	return textWidth(s, size, textFactor)
}
