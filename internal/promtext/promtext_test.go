package promtext_test

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/harnessflow/harnessflow/internal/promtext"
)

func TestWriter(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(w *promtext.Writer)
		want  string
	}{
		{"counter without labels", func(w *promtext.Writer) {
			w.Counter("a_total", "Things.")
			w.Sample("a_total", 3)
		}, "# HELP a_total Things.\n# TYPE a_total counter\na_total 3\n"},
		{"gauge with labels in given order", func(w *promtext.Writer) {
			w.Gauge("g", "A gauge.")
			w.Sample("g", 1, "z", "1", "a", "2")
		}, "# HELP g A gauge.\n# TYPE g gauge\ng{z=\"1\",a=\"2\"} 1\n"},
		{"label value escaping", func(w *promtext.Writer) {
			w.Counter("e_total", "E.")
			w.Sample("e_total", 1, "v", "a\\b\"c\nd")
		}, "# HELP e_total E.\n# TYPE e_total counter\ne_total{v=\"a\\\\b\\\"c\\nd\"} 1\n"},
		{"help escaping keeps quotes", func(w *promtext.Writer) {
			w.Counter("h_total", "back\\slash \"quoted\"\nnext")
		}, "# HELP h_total back\\\\slash \"quoted\"\\nnext\n# TYPE h_total counter\n"},
		{"HELP and TYPE once per family", func(w *promtext.Writer) {
			w.Counter("o_total", "O.")
			w.Sample("o_total", 1, "k", "a")
			w.Counter("o_total", "O.")
			w.Sample("o_total", 2, "k", "b")
		}, "# HELP o_total O.\n# TYPE o_total counter\no_total{k=\"a\"} 1\no_total{k=\"b\"} 2\n"},
		{"map samples sorted", func(w *promtext.Writer) {
			w.CounterMap("m_total", "M.", "k", map[string]uint64{"zeta": 1, "alpha": 2, "mid": 3})
		}, "# HELP m_total M.\n# TYPE m_total counter\nm_total{k=\"alpha\"} 2\nm_total{k=\"mid\"} 3\nm_total{k=\"zeta\"} 1\n"},
		{"empty map writes the family alone", func(w *promtext.Writer) {
			w.CounterMap("n_total", "N.", "k", nil)
		}, "# HELP n_total N.\n# TYPE n_total counter\n"},
		{"families in the order started", func(w *promtext.Writer) {
			w.Counter("b_total", "B.")
			w.Counter("a_total", "A.")
		}, "# HELP b_total B.\n# TYPE b_total counter\n# HELP a_total A.\n# TYPE a_total counter\n"},
		{"floats", func(w *promtext.Writer) {
			w.Counter("s_total", "S.")
			w.Float("s_total", 0.25, "n", "x")
			w.Float("s_total", math.Inf(1), "n", "y")
			w.Float("s_total", math.NaN(), "n", "z")
		}, "# HELP s_total S.\n# TYPE s_total counter\ns_total{n=\"x\"} 0.25\ns_total{n=\"y\"} +Inf\ns_total{n=\"z\"} NaN\n"},
		{"histogram", func(w *promtext.Writer) {
			w.Histogram("d_seconds", "D.", []float64{0.1, 1}, []uint64{2, 3}, 4.5, 6, "route", "r")
		}, "# HELP d_seconds D.\n# TYPE d_seconds histogram\n" +
			"d_seconds_bucket{route=\"r\",le=\"0.1\"} 2\nd_seconds_bucket{route=\"r\",le=\"1\"} 5\nd_seconds_bucket{route=\"r\",le=\"+Inf\"} 6\n" +
			"d_seconds_sum{route=\"r\"} 4.5\nd_seconds_count{route=\"r\"} 6\n"},
		{"histogram without labels", func(w *promtext.Writer) {
			w.Histogram("d", "D.", []float64{1}, []uint64{0}, 0, 0)
		}, "# HELP d D.\n# TYPE d histogram\nd_bucket{le=\"1\"} 0\nd_bucket{le=\"+Inf\"} 0\nd_sum 0\nd_count 0\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			w := promtext.NewWriter(&b)
			c.write(w)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != c.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), c.want)
			}
			if err := promtext.Check(b.Bytes()); err != nil {
				t.Errorf("not valid exposition: %v", err)
			}
		})
	}
}

func TestSortedPairs(t *testing.T) {
	got := promtext.SortedPairs(map[[2]string]uint64{{"b", "a"}: 1, {"a", "z"}: 1, {"a", "b"}: 1})
	want := [][2]string{{"a", "b"}, {"a", "z"}, {"b", "a"}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("gone") }

func TestFlushError(t *testing.T) {
	w := promtext.NewWriter(failing{})
	w.Counter("x_total", "X.")
	if err := w.Flush(); err == nil {
		t.Error("Flush on a failing writer: no error")
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct{ name, page string }{
		{"sample before its TYPE", "x_total 1\n"},
		{"TYPE twice", "# TYPE x counter\n# TYPE x counter\n"},
		{"family split", "# TYPE x counter\nx 1\n# TYPE y counter\ny 1\nx 2\n"},
		{"unknown type", "# TYPE x thing\n"},
		{"bad value", "# TYPE x counter\nx one\n"},
		{"unterminated label", "# TYPE x counter\nx{a=\"b} 1\n"},
		{"bad escape", "# TYPE x counter\nx{a=\"\\t\"} 1\n"},
		{"duplicate series", "# TYPE x counter\nx{a=\"b\"} 1\nx{a=\"b\"} 2\n"},
		{"no final newline", "# TYPE x counter\nx 1"},
		{"histogram without +Inf", "# TYPE h histogram\nh_bucket{le=\"1\"} 0\nh_sum 0\nh_count 0\n"},
	} {
		if err := promtext.Check([]byte(c.page)); err == nil {
			t.Errorf("%s: Check accepted %q", c.name, c.page)
		}
	}
}
