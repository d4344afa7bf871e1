package chart

import (
	"math"
	"strconv"
)

// Scale maps data values onto [0, 1] along an axis and proposes ticks.
type Scale struct {
	// Min and Max are the ends of the axis (Min < Max; both > 0 when Log).
	Min, Max float64
	// Log selects a base-10 logarithmic axis.
	Log bool
}

// Tick is one labelled position of an axis.
type Tick struct {
	// Value is the tick's position in data units; Label its text.
	Value float64
	Label string
}

// NewScale returns a scale covering every value of vs (values that are
// not finite, and values ≤ 0 on a log scale, are ignored), widened to nice
// round ends. A linear scale starts at 0 unless a value is negative. With
// no usable value it covers [0, 1] (linear) or [1, 10] (log).
func NewScale(vs []float64, log bool) Scale {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) || (log && v <= 0) {
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if log {
		if lo > hi {
			return Scale{Min: 1, Max: 10, Log: true}
		}
		return Scale{Min: math.Pow(10, math.Floor(math.Log10(lo))), Max: math.Pow(10, math.Ceil(math.Log10(hi)+1e-9)), Log: true}
	}
	if lo > hi {
		return Scale{Min: 0, Max: 1}
	}
	lo = min(lo, 0)
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	return Scale{Min: math.Floor(lo/step) * step, Max: math.Ceil(hi/step-1e-9) * step}
}

// niceStep rounds a raw tick step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// Pos returns where v falls on the axis, from 0 (Min) to 1 (Max), clamped.
// A value ≤ 0 on a log axis is at 0.
func (s Scale) Pos(v float64) float64 {
	var p float64
	if s.Log {
		if v <= 0 || s.Min <= 0 {
			return 0
		}
		p = (math.Log10(v) - math.Log10(s.Min)) / (math.Log10(s.Max) - math.Log10(s.Min))
	} else {
		p = (v - s.Min) / (s.Max - s.Min)
	}
	if math.IsNaN(p) {
		return 0
	}
	return min(max(p, 0), 1)
}

// Ticks returns the labelled ticks of the axis: every power of ten on a
// log axis (with 2 and 5 between them when the axis spans at most two
// decades), about five round steps on a linear one.
func (s Scale) Ticks() []Tick {
	var ts []Tick
	if s.Log {
		decades := math.Log10(s.Max) - math.Log10(s.Min)
		for e := math.Floor(math.Log10(s.Min)); e <= math.Ceil(math.Log10(s.Max)); e++ {
			for _, m := range []float64{1, 2, 5} {
				if m != 1 && decades > 2 {
					continue
				}
				v := m * math.Pow(10, e)
				if v >= s.Min*(1-1e-9) && v <= s.Max*(1+1e-9) {
					ts = append(ts, Tick{Value: v, Label: FormatValue(v)})
				}
			}
		}
		return ts
	}
	step := niceStep((s.Max - s.Min) / 5)
	for v := s.Min; v <= s.Max+step*1e-9; v += step {
		v := math.Round(v/step) * step
		ts = append(ts, Tick{Value: v, Label: FormatValue(v)})
	}
	return ts
}

// FormatValue renders a number compactly for labels: 3 significant digits,
// with k, M and G for thousands, millions and billions (1.5k, 42, 0.25).
func FormatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 1e9:
		return trimFloat(v/1e9) + "G"
	case a >= 1e6:
		return trimFloat(v/1e6) + "M"
	case a >= 1e4:
		return trimFloat(v/1e3) + "k"
	case a >= 1000:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return trimFloat(v)
}

// trimFloat gives 3 significant digits without trailing zeros.
func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', 3, 64)
	if f, err := strconv.ParseFloat(s, 64); err == nil && math.Abs(f) >= 1 {
		// Avoid exponent notation for numbers ≥ 1 (e.g. "1e+03").
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return s
}
