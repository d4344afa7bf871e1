// Package promtext writes the Prometheus text exposition format (version
// 0.0.4) for the proxy's /metrics page: counter, gauge and histogram
// families, each with its HELP and TYPE lines once, label values and help
// text escaped as the format asks. It is the one place that writes that
// format, so that no package spells "# TYPE" by hand.
//
//	w := promtext.NewWriter(out)
//	w.Counter("x_total", "Things done, by result.")
//	w.Sample("x_total", 3, "result", "ok")
//	w.CounterMap("y_total", "Other things, by kind.", "kind", counts) // sorted
//	err := w.Flush()
//
// Families come out in the order they are started (the caller's order is
// the page's order); the samples of a map come out sorted by label value.
package promtext

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ContentType is the Content-Type of a page in this format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Writer writes families to an underlying writer, buffered: call Flush at
// the end. The zero value is not ready: use NewWriter. A Writer is not safe
// for concurrent use.
type Writer struct {
	bw      *bufio.Writer
	started map[string]bool // families whose HELP and TYPE lines are written
	buf     []byte
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriter(w), started: map[string]bool{}}
}

// Counter starts a counter family: its HELP and TYPE lines, written once
// however often it is called with the same name.
func (w *Writer) Counter(name, help string) { w.family(name, "counter", help) }

// Gauge starts a gauge family (see Counter).
func (w *Writer) Gauge(name, help string) { w.family(name, "gauge", help) }

func (w *Writer) family(name, typ, help string) {
	if w.started[name] {
		return
	}
	w.started[name] = true
	b := append(w.buf[:0], "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = appendEscaped(b, help, false)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	b = append(b, '\n')
	w.write(b)
}

// Sample writes one sample of an integer value. labels are name, value
// pairs, written in that order; a lone trailing name is dropped.
func (w *Writer) Sample(name string, v uint64, labels ...string) {
	b := w.series(name, labels)
	b = strconv.AppendUint(b, v, 10)
	w.write(append(b, '\n'))
}

// Float writes one sample of a float value (shortest form that reads back
// as v; NaN and ±Inf as the format spells them).
func (w *Writer) Float(name string, v float64, labels ...string) {
	b := w.series(name, labels)
	b = appendFloat(b, v)
	w.write(append(b, '\n'))
}

// CounterMap writes a counter family with one label: HELP and TYPE, then
// one sample per key of counts, sorted.
func (w *Writer) CounterMap(name, help, label string, counts map[string]uint64) {
	w.Counter(name, help)
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		w.Sample(name, counts[k], label, k)
	}
}

// Histogram writes a histogram family: HELP and TYPE (once per name), then
// for the given labels a cumulative _bucket sample per upper bound of
// bounds (ascending), one for +Inf (count), _sum and _count. counts[i] is
// the number of observations at or below bounds[i] and above the bound
// before it (not cumulative); len(counts) must be len(bounds).
func (w *Writer) Histogram(name, help string, bounds []float64, counts []uint64, sum float64, count uint64, labels ...string) {
	w.family(name, "histogram", help)
	bucket := name + "_bucket"
	le := make([]string, len(labels)&^1, len(labels)&^1+2)
	copy(le, labels)
	le = append(le, "le", "")
	var cum uint64
	for i, ub := range bounds {
		if i < len(counts) {
			cum += counts[i]
		}
		le[len(le)-1] = string(appendFloat(nil, ub))
		w.Sample(bucket, cum, le...)
	}
	le[len(le)-1] = "+Inf"
	w.Sample(bucket, count, le...)
	w.Float(name+"_sum", sum, labels...)
	w.Sample(name+"_count", count, labels...)
}

// Flush writes what is buffered and returns the first write error.
func (w *Writer) Flush() error {
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("promtext: %w", err)
	}
	return nil
}

// series appends name{labels} and a space to the scratch buffer.
func (w *Writer) series(name string, labels []string) []byte {
	b := append(w.buf[:0], name...)
	if len(labels) >= 2 {
		b = append(b, '{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, labels[i]...)
			b = append(b, `="`...)
			b = appendEscaped(b, labels[i+1], true)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	return append(b, ' ')
}

func (w *Writer) write(b []byte) {
	w.buf = b
	_, _ = w.bw.Write(b) // the error sticks in bw; Flush returns it
}

// appendEscaped appends s with backslash and newline escaped (and, in a
// label value, the double quote), as the format asks.
func appendEscaped(b []byte, s string, quote bool) []byte {
	if !strings.ContainsAny(s, "\\\n\"") {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// SortedPairs returns the keys of counts ordered element by element, for
// writing a family with two or three labels in a stable order.
func SortedPairs[K interface{ ~[2]string | ~[3]string }](counts map[K]uint64) []K {
	keys := slices.Collect(maps.Keys(counts))
	slices.SortFunc(keys, func(a, b K) int {
		for i := 0; i < len(a); i++ {
			if c := cmp.Compare(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	return keys
}
