package chart

import (
	"errors"
	"math"
)

// Point is one value of a line: X along the horizontal axis, Y along the
// vertical one.
type Point struct{ X, Y float64 }

// Line is one series of a line chart.
type Line struct {
	Series
	// Points are drawn in order; points that are not finite (or ≤ 0 on a
	// log axis) are skipped.
	Points []Point
	// Dashed draws the line dashed (e.g. a p50 next to the p99 of the same
	// series).
	Dashed bool
}

// Lines is a line chart over two numeric axes, e.g. latency percentiles
// against the number of concurrent streams.
type Lines struct {
	// Title is the heading, and the document's accessible name.
	Title string
	// Notes are smaller lines under the title.
	Notes []string
	// XAxis and YAxis are the axis titles, with units.
	XAxis, YAxis string
	// XLog and YLog select logarithmic axes.
	XLog, YLog bool
	// Lines are the series.
	Lines []Line
	// Width and Height are the document size in pixels (default 1000×600).
	Width, Height float64
}

// SVG renders the chart as a standalone SVG file (see Render).
func (c Lines) SVG() ([]byte, error) {
	d, err := c.Render()
	if err != nil {
		return nil, err
	}
	return d.Bytes(), nil
}

// Render draws the chart. It fails when no line has a point.
func (c Lines) Render() (*Doc, error) {
	var xs, ys []float64
	for _, l := range c.Lines {
		for _, p := range l.Points {
			xs, ys = append(xs, p.X), append(ys, p.Y)
		}
	}
	if len(xs) == 0 {
		return nil, errors.New("chart: lines: no points")
	}
	w, h := c.Width, c.Height
	if w <= 0 {
		w = 1000
	}
	if h <= 0 {
		h = 600
	}
	series := make([]Series, len(c.Lines))
	for i, l := range c.Lines {
		series[i] = Series{Name: l.Name, Color: color(l.Color, i)}
	}
	left, right := 90.0, w-30
	head := newHeading(w, c.Title, c.Notes)
	top := head.height()
	bottom := h - 60
	d := NewDoc(w, h, c.Title)
	head.draw(d, w)
	legend(d, series, left, top-16, right)

	sx, sy := NewScale(xs, c.XLog), NewScale(ys, c.YLog)
	px := func(v float64) float64 { return left + sx.Pos(v)*(right-left) }
	py := func(v float64) float64 { return bottom - sy.Pos(v)*(bottom-top) }
	for _, t := range sx.Ticks() {
		x := px(t.Value)
		d.Line(x, top, x, bottom, Style{Stroke: "#e3e3e3", StrokeWidth: 1})
		d.Text(x, bottom+19, t.Label, Style{Size: labelSize, Anchor: "middle", Class: "tick"})
	}
	for _, t := range sy.Ticks() {
		y := py(t.Value)
		d.Line(left, y, right, y, Style{Stroke: "#e3e3e3", StrokeWidth: 1})
		d.Text(left-8, y+4, t.Label, Style{Size: labelSize, Anchor: "end", Class: "tick"})
	}
	d.Line(left, bottom, right, bottom, Style{Stroke: "#333333", StrokeWidth: 1, Class: "axis"})
	d.Line(left, top, left, bottom, Style{Stroke: "#333333", StrokeWidth: 1, Class: "axis"})
	d.Text((left+right)/2, bottom+44, c.XAxis, Style{Size: 13, Anchor: "middle", Class: "axis-title"})
	d.Text(24, (top+bottom)/2, c.YAxis, Style{Size: 13, Anchor: "middle", Rotate: -90, Class: "axis-title"})

	usable := func(v float64, log bool) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && (!log || v > 0) }
	for i, l := range c.Lines {
		st := Style{Stroke: series[i].Color, StrokeWidth: 2, Class: "line"}
		if l.Dashed {
			st.Dash = "6 4"
		}
		var pts []float64
		for _, p := range l.Points {
			if usable(p.X, c.XLog) && usable(p.Y, c.YLog) {
				pts = append(pts, px(p.X), py(p.Y))
			}
		}
		d.Polyline(pts, st)
		for j := 0; j+1 < len(pts); j += 2 {
			d.Circle(pts[j], pts[j+1], 3, Style{Fill: series[i].Color, Class: "point"})
		}
	}
	return d, nil
}
