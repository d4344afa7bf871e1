package loadtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/benchmark"
	"github.com/harnessflow/harnessflow/benchmark/chart"
)

// Target names of a load run (`harnessflow-load`) that Compare relates the
// others to.
const (
	// TargetDirect is the upstream reached without a proxy.
	TargetDirect = "direct"
	// TargetPassThrough is the plain reverse proxy (the floor).
	TargetPassThrough = "pass-through"
)

// ProxyGoals are the thresholds a proxy report checks at its largest N.
type ProxyGoals struct {
	// AddedP99MS is the most p99 latency a proxy may add, in ms.
	AddedP99MS float64 `json:"added_p99_ms"`
	// VsPassThrough is the most p99 added latency may be, as a multiple of
	// the pass-through's.
	VsPassThrough float64 `json:"vs_pass_through"`
	// CPUPerDeltaUS is the most CPU time per delta, in µs.
	CPUPerDeltaUS float64 `json:"cpu_us_per_delta"`
	// BytesPerStream is the most memory per concurrent stream (RSS).
	BytesPerStream float64 `json:"bytes_per_stream"`
}

// DefaultProxyGoals are the goals the proxy is held to at 2,000 streams.
var DefaultProxyGoals = ProxyGoals{AddedP99MS: 1, VsPassThrough: 1.5, CPUPerDeltaUS: 5, BytesPerStream: 64 << 10}

// ProxyReport is what `harnessflow-load` prints.
type ProxyReport struct {
	// Title heads the Markdown and the chart.
	Title string `json:"title"`
	// Command is the command line that made the report.
	Command string `json:"command,omitempty"`
	// Machine is where it was measured.
	Machine benchmark.Machine `json:"machine"`
	// Setup describes the load: the stream's deltas and interval, the
	// rounds per client, the ramp, the processes.
	Setup []string `json:"setup,omitempty"`
	// Runs are the measurements, by N then target.
	Runs []*ProxyRun `json:"runs"`
	// Goals are checked at the largest N of every proxy that is not the
	// pass-through (nil: none).
	Goals *ProxyGoals `json:"goals,omitempty"`
}

// Compare fills in every run's Added (minus the direct target's latency at
// the same N) and VsPassThrough.
func (r *ProxyReport) Compare() {
	for _, run := range r.Runs {
		d := r.find(TargetDirect, run.Streams)
		if d == nil || run.Target == TargetDirect {
			continue
		}
		run.Added = &Percentiles{P50: run.Latency.P50 - d.Latency.P50, P99: run.Latency.P99 - d.Latency.P99, Max: run.Latency.Max - d.Latency.Max}
	}
	for _, run := range r.Runs {
		p := r.find(TargetPassThrough, run.Streams)
		if p == nil || run.Target == TargetPassThrough || run.Added == nil || p.Added == nil || !(p.Added.P99 > 0) {
			continue
		}
		run.VsPassThrough = run.Added.P99 / p.Added.P99
	}
}

func (r *ProxyReport) find(target string, n int) *ProxyRun {
	for _, run := range r.Runs {
		if run.Target == target && run.Streams == n {
			return run
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r *ProxyReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("loadtest: write JSON: %w", err)
	}
	return nil
}

// WriteMarkdown writes the report as Markdown: one table row per N and
// target, then the goals' checks.
func (r *ProxyReport) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	if r.Title != "" {
		fmt.Fprintf(&b, "## %s\n\n", r.Title)
	}
	if r.Command != "" {
		fmt.Fprintf(&b, "`%s`\n\n", r.Command)
	}
	fmt.Fprintf(&b, "Machine: %s.\n", r.Machine)
	if r.Machine.Loaded() {
		b.WriteString("The machine was loaded (load average above its CPU count): latencies include waiting for a CPU.\n")
	}
	for _, s := range r.Setup {
		fmt.Fprintf(&b, "%s\n", s)
	}
	b.WriteString("\nLatency: per delta, receive time minus the send time the upstream stamped into it (ms). Added: minus direct at the same N. " +
		"CPU, memory and goroutines are the proxy process's; memory per stream is (peak − before) / N.\n\n")
	header := []string{"N", "target", "p50", "p99", "max", "added p50", "added p99", "× pass-through (added p99)", "errors",
		"proxy CPU/delta", "RSS/stream", "Go memory/stream", "heap/stream", "goroutines before → peak → after", "machine busy",
		"request", "proxy CPU/request"}
	align := []string{"--:", ":--", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:"}
	rejections := slices.ContainsFunc(r.Runs, func(run *ProxyRun) bool { return run.Rejected > 0 })
	if rejections {
		header = append(header, "rejected (503)", "503 p50", "503 p99", "503 max")
		align = append(align, "--:", "--:", "--:", "--:")
	}
	var rows [][]string
	for _, run := range r.Runs {
		row := []string{strconv.Itoa(run.Streams), run.Target, ms(run.Latency.P50), ms(run.Latency.P99), ms(run.Latency.Max)}
		if a := run.Added; a != nil {
			row = append(row, signedMS(a.P50), signedMS(a.P99))
		} else {
			row = append(row, "—", "—")
		}
		if run.VsPassThrough > 0 {
			row = append(row, fmt.Sprintf("%.2f×", run.VsPassThrough))
		} else {
			row = append(row, "—")
		}
		errs := fmt.Sprintf("%d / %d", run.Errors, run.Requests)
		row = append(row, errs)
		if p := run.Process; p != nil {
			row = append(row, fmt.Sprintf("%.1f µs", p.CPUPerDeltaUS), kb(p.RSSPerStream))
			if p.RuntimePeak != nil {
				row = append(row, kb(p.GoPerStream), kb(p.HeapPerStream),
					fmt.Sprintf("%d → %d → %d", p.GoroutinesBefore, p.GoroutinesPeak, p.GoroutinesAfter))
			} else {
				row = append(row, "—", "—", "—")
			}
		} else {
			row = append(row, "—", "—", "—", "—", "—")
		}
		if run.MachineBusy > 0 {
			row = append(row, fmt.Sprintf("%.0f%%", run.MachineBusy*100))
		} else {
			row = append(row, "—")
		}
		row = append(row, kb(float64(run.RequestBytes)))
		if p := run.Process; p != nil && p.CPUPerRequestUS > 0 {
			row = append(row, fmt.Sprintf("%.0f µs", p.CPUPerRequestUS))
		} else {
			row = append(row, "—")
		}
		if rejections {
			row = append(row, strconv.Itoa(run.Rejected))
			if l := run.RejectLatency; l != nil {
				row = append(row, ms(l.P50), ms(l.P99), ms(l.Max))
			} else {
				row = append(row, "—", "—", "—")
			}
		}
		rows = append(rows, row)
	}
	benchmark.WriteTable(&b, header, align, rows)
	for _, run := range r.Runs {
		if run.FirstError != "" {
			fmt.Fprintf(&b, "\nFirst error of %s at N = %d: %s\n", run.Target, run.Streams, run.FirstError)
		}
	}
	if checks := r.GoalChecks(); len(checks) > 0 {
		b.WriteString("\nGoals:\n\n")
		for _, c := range checks {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// GoalChecks returns one line per goal and proxy at the largest N: the
// figure, the goal and whether it is met. It is empty without Goals.
func (r *ProxyReport) GoalChecks() []string {
	if r.Goals == nil || len(r.Runs) == 0 {
		return nil
	}
	g := r.Goals
	n := 0
	for _, run := range r.Runs {
		n = max(n, run.Streams)
	}
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	var out []string
	for _, run := range r.Runs {
		if run.Streams != n || run.Target == TargetDirect || run.Target == TargetPassThrough {
			continue
		}
		name := fmt.Sprintf("%s at N = %d", run.Target, n)
		if run.Added != nil {
			out = append(out, fmt.Sprintf("%s: p99 added latency %s ms (goal ≤ %g ms): %s", name, signedMS(run.Added.P99), g.AddedP99MS, mark(run.Added.P99 <= g.AddedP99MS)))
			if p := r.find(TargetPassThrough, n); p != nil && p.Added != nil {
				limit := g.VsPassThrough * max(p.Added.P99, 0)
				out = append(out, fmt.Sprintf("%s: p99 added %s ms vs the pass-through's %s ms (goal ≤ %g×, i.e. ≤ %s ms): %s",
					name, signedMS(run.Added.P99), signedMS(p.Added.P99), g.VsPassThrough, ms(limit), mark(run.Added.P99 <= limit)))
			}
		}
		if p := run.Process; p != nil {
			out = append(out, fmt.Sprintf("%s: proxy CPU %.2f µs per delta (goal ≤ %g µs): %s", name, p.CPUPerDeltaUS, g.CPUPerDeltaUS, mark(p.CPUPerDeltaUS <= g.CPUPerDeltaUS)))
			out = append(out, fmt.Sprintf("%s: %s RSS per concurrent stream (goal ≤ %s): %s", name, kb(p.RSSPerStream), kb(g.BytesPerStream), mark(p.RSSPerStream <= g.BytesPerStream)))
		}
		if run.Errors > 0 {
			out = append(out, fmt.Sprintf("%s: %d of %d streams failed", name, run.Errors, run.Requests))
		}
	}
	return out
}

func ms(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', msDigits(v), 64)
}

func signedMS(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	s := ms(v)
	if v >= 0 {
		s = "+" + s
	}
	return s
}

func msDigits(v float64) int {
	if math.Abs(v) >= 100 {
		return 0
	}
	if math.Abs(v) >= 10 {
		return 1
	}
	return 2
}

func kb(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.1f KB", v/1024)
}

// targetColors keeps a target's colour across both charts.
var targetColors = map[string]string{
	TargetDirect:      chart.Palette[7],
	TargetPassThrough: chart.Palette[2],
}

// SVG renders the latency percentiles against N: per target p99 (solid)
// and p50 (dashed), and below, the p99 latency each proxy adds.
func (r *ProxyReport) SVG() ([]byte, error) {
	var targets []string
	for _, run := range r.Runs {
		if !slices.Contains(targets, run.Target) {
			targets = append(targets, run.Target)
		}
	}
	// The proxies measured get the palette's colours that the direct and
	// pass-through lines do not use, in order.
	var free []string
	for _, c := range chart.Palette {
		if c != targetColors[TargetDirect] && c != targetColors[TargetPassThrough] {
			free = append(free, c)
		}
	}
	next := 0
	colorOf := func(t string) string {
		if c, ok := targetColors[t]; ok {
			return c
		}
		c := free[next%len(free)]
		next++
		return c
	}
	notes := append([]string{r.Machine.String()}, r.Setup...)
	lat := chart.Lines{
		Title: r.Title + ": per-event latency vs concurrent streams",
		Notes: notes,
		XAxis: "concurrent streams N (log scale)",
		YAxis: "latency per event, ms (log scale)",
		XLog:  true, YLog: true,
		// Wide enough for a legend of two lines per target in one row.
		Width: 1300, Height: 640,
	}
	added := chart.Lines{
		Title: r.Title + ": p99 latency added by the proxy (minus direct)",
		Notes: []string{"values ≤ 0 (within the noise) are not drawn"},
		XAxis: "concurrent streams N (log scale)",
		YAxis: "p99 added latency per event, ms (log scale)",
		XLog:  true, YLog: true,
		Width: 1300, Height: 560,
	}
	for _, t := range targets {
		c := colorOf(t)
		p99 := chart.Line{Series: chart.Series{Name: t + " p99", Color: c}}
		p50 := chart.Line{Series: chart.Series{Name: t + " p50", Color: c}, Dashed: true}
		add := chart.Line{Series: chart.Series{Name: t, Color: c}}
		for _, run := range r.Runs {
			if run.Target != t {
				continue
			}
			x := float64(run.Streams)
			p99.Points = append(p99.Points, chart.Point{X: x, Y: run.Latency.P99})
			p50.Points = append(p50.Points, chart.Point{X: x, Y: run.Latency.P50})
			if run.Added != nil {
				add.Points = append(add.Points, chart.Point{X: x, Y: run.Added.P99})
			}
		}
		lat.Lines = append(lat.Lines, p99, p50)
		if len(add.Points) > 0 {
			added.Lines = append(added.Lines, add)
		}
	}
	if r.Goals != nil && len(added.Lines) > 0 {
		var goal chart.Line
		goal.Name, goal.Color, goal.Dashed = fmt.Sprintf("goal ≤ %g ms", r.Goals.AddedP99MS), "#e15759", true
		for _, run := range r.Runs {
			if run.Target == TargetDirect {
				goal.Points = append(goal.Points, chart.Point{X: float64(run.Streams), Y: r.Goals.AddedP99MS})
			}
		}
		if len(goal.Points) > 0 {
			added.Lines = append(added.Lines, goal)
		}
	}
	d1, err := lat.Render()
	if err != nil {
		return nil, fmt.Errorf("loadtest: latency chart: %w", err)
	}
	d2, err := added.Render()
	if err != nil {
		// Nothing positive to draw (no direct run, or no proxy added
		// latency above the noise): the latency chart alone.
		return d1.Bytes(), nil
	}
	return chart.Stack(r.Title, d1, d2), nil
}

// SetupLines describes a load in words, for ProxyReport.Setup.
func SetupLines(events int, interval string, rounds int, ramp string, extra ...string) []string {
	s := []string{fmt.Sprintf("Each stream: %d text deltas %s apart; each client runs %d stream(s) one after another; clients start evenly over %s.",
		events, interval, rounds, ramp)}
	for _, e := range extra {
		if e = strings.TrimSpace(e); e != "" {
			s = append(s, e)
		}
	}
	return s
}
