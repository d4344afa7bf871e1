package chart

import (
	"errors"
	"math"
)

// Series is one named, coloured set of values (one bar per group, or one
// line).
type Series struct {
	// Name is shown in the legend.
	Name string
	// Color is the fill or stroke colour; "" takes the next of [Palette].
	Color string
}

// Group is one labelled row of bars: one value per series, in the order of
// Bars.Series. A NaN value means the series has nothing here (no bar, no
// room); a value ≤ 0 on a log axis is labelled as below the noise.
type Group struct {
	// Label names the group, left of its bars.
	Label string
	// Values are the series' values, in the order of Bars.Series.
	Values []float64
	// Separate draws a rule above the group and its label in bold, to set
	// a total apart from the rows it sums up.
	Separate bool
}

// Bars is a horizontal grouped bar chart: groups top to bottom, one bar
// per series in each, their length along a value axis at the bottom.
type Bars struct {
	// Title is the heading, and the document's accessible name.
	Title string
	// Notes are smaller lines under the title (corpus, machine, load).
	Notes []string
	// Axis is the value axis title, with its unit, e.g. "ns per event
	// (log scale)".
	Axis string
	// Log selects a logarithmic value axis, for values spanning decades.
	Log bool
	// Series name the bars of every group, in order.
	Series []Series
	// Groups are the rows, top to bottom.
	Groups []Group
	// Width is the document width in pixels (default 1000).
	Width float64
	// Format renders a value at the end of its bar (default FormatValue).
	Format func(float64) string
}

// Layout constants of the bar chart, in pixels.
const (
	barHeight  = 15
	barGap     = 2
	groupGap   = 14
	titleSize  = 20
	noteSize   = 12
	labelSize  = 12
	legendSize = 12
)

// SVG renders the chart as a standalone SVG file (see Render).
func (c Bars) SVG() ([]byte, error) {
	d, err := c.Render()
	if err != nil {
		return nil, err
	}
	return d.Bytes(), nil
}

// Render draws the chart. It fails when there is no series or no group,
// or when a group has more values than there are series.
func (c Bars) Render() (*Doc, error) {
	if len(c.Series) == 0 || len(c.Groups) == 0 {
		return nil, errors.New("chart: bars: no series or no groups")
	}
	var all []float64
	for _, g := range c.Groups {
		if len(g.Values) > len(c.Series) {
			return nil, errors.New("chart: bars: group " + g.Label + " has more values than series")
		}
		all = append(all, g.Values...)
	}
	format := c.Format
	if format == nil {
		format = FormatValue
	}
	w := c.Width
	if w <= 0 {
		w = 1000
	}
	labelW := 0.0
	for _, g := range c.Groups {
		labelW = max(labelW, approxTextWidth(g.Label, labelSize))
	}
	left := min(max(labelW+24, 120), w/2.5)
	right := w - 80
	head := newHeading(w, c.Title, c.Notes)
	top := head.height() // title, notes, legend
	plotH := float64(groupGap)
	for _, g := range c.Groups {
		plotH += float64(max(present(g.Values), 1))*(barHeight+barGap) - barGap + groupGap
	}
	h := top + plotH + 60 // axis ticks and title

	d := NewDoc(w, h, c.Title)
	head.draw(d, w)
	legend(d, c.Series, left, top-16, right)

	sc := NewScale(all, c.Log)
	x := func(v float64) float64 { return left + sc.Pos(v)*(right-left) }
	plotBottom := top + plotH
	for _, t := range sc.Ticks() {
		tx := x(t.Value)
		d.Line(tx, top, tx, plotBottom, Style{Stroke: "#e3e3e3", StrokeWidth: 1})
		d.Line(tx, plotBottom, tx, plotBottom+5, Style{Stroke: "#333333", StrokeWidth: 1})
		d.Text(tx, plotBottom+19, t.Label, Style{Size: labelSize, Anchor: "middle", Class: "tick"})
	}
	d.Line(left, plotBottom, right, plotBottom, Style{Stroke: "#333333", StrokeWidth: 1, Class: "axis"})
	d.Line(left, top, left, plotBottom, Style{Stroke: "#333333", StrokeWidth: 1})
	d.Text((left+right)/2, plotBottom+42, c.Axis, Style{Size: 13, Anchor: "middle", Class: "axis-title"})

	y := top + groupGap
	for _, g := range c.Groups {
		st := Style{Size: labelSize, Anchor: "end", Class: "group"}
		if g.Separate {
			st.Weight = "bold"
			d.Line(8, y-groupGap/2, right, y-groupGap/2, Style{Stroke: "#999999", StrokeWidth: 1, Dash: "4 3"})
		}
		rows := present(g.Values)
		gh := float64(max(rows, 1))*(barHeight+barGap) - barGap
		d.Text(left-8, y+gh/2+4, g.Label, st)
		slot := 0
		for i := range c.Series {
			if i >= len(g.Values) || math.IsNaN(g.Values[i]) {
				continue // this series has no value here: no bar, no room
			}
			v := g.Values[i]
			by := y + float64(slot)*(barHeight+barGap)
			slot++
			if math.IsInf(v, 0) || (c.Log && v <= 0) {
				d.Text(left+4, by+barHeight-3, "≤ 0 (below noise)", Style{Size: 11, Fill: "#777777", Class: "value"})
				continue
			}
			x0 := x(sc.Min)
			if !c.Log && sc.Min < 0 {
				x0 = x(0)
			}
			x1 := x(v)
			d.Rect(min(x0, x1), by, math.Abs(x1-x0), barHeight, Style{Fill: color(c.Series[i].Color, i), Class: "bar"})
			d.Text(max(x0, x1)+4, by+barHeight-3, format(v), Style{Size: 11, Class: "value"})
		}
		y += gh + groupGap
	}
	return d, nil
}

// legend draws one swatch and name per series in a row from x, centred
// between x and right when it fits.
func legend(d *Doc, ss []Series, x, y, right float64) {
	total := 0.0
	for _, s := range ss {
		total += 18 + approxTextWidth(s.Name, legendSize) + 18
	}
	if total < right-x {
		x += (right - x - total) / 2
	}
	for i, s := range ss {
		d.Rect(x, y-10, 12, 12, Style{Fill: color(s.Color, i), Class: "swatch"})
		d.Text(x+18, y, s.Name, Style{Size: legendSize, Class: "legend"})
		x += 18 + approxTextWidth(s.Name, legendSize) + 18
	}
}

// present counts the values that are not NaN.
func present(vs []float64) int {
	n := 0
	for _, v := range vs {
		if !math.IsNaN(v) {
			n++
		}
	}
	return n
}
