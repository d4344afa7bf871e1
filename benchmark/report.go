package benchmark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/harnessflow/harnessflow/benchmark/chart"
)

// Machine describes where a report was measured.
type Machine struct {
	// GoVersion, OS and Arch are the Go toolchain and platform.
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	// CPU is the processor model, where the system names it.
	CPU string `json:"cpu,omitempty"`
	// CPUs is the number of logical CPUs; GOMAXPROCS how many the Go
	// scheduler uses.
	CPUs       int `json:"cpus"`
	GOMAXPROCS int `json:"gomaxprocs"`
	// LoadBefore and LoadAfter are the load averages (1, 5 and 15
	// minutes) before and after the run, where the system reports them.
	LoadBefore string `json:"load_before,omitempty"`
	LoadAfter  string `json:"load_after,omitempty"`
}

// ReadMachine describes this machine now (LoadAfter is left for the caller
// to fill with LoadAverage after the run).
func ReadMachine() Machine {
	m := Machine{
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		CPUs:       runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		LoadBefore: LoadAverage(),
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// LoadAverage returns the 1-, 5- and 15-minute load averages ("2.46 1.14
// 0.64"), or "" where the system does not report them.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// String gives the machine in one line.
func (m Machine) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s/%s, %d CPUs (GOMAXPROCS %d)", m.GoVersion, m.OS, m.Arch, m.CPUs, m.GOMAXPROCS)
	if m.CPU != "" {
		fmt.Fprintf(&b, ", %s", m.CPU)
	}
	if m.LoadBefore != "" {
		fmt.Fprintf(&b, "; load average %s before", m.LoadBefore)
		if m.LoadAfter != "" {
			fmt.Fprintf(&b, ", %s after", m.LoadAfter)
		}
	}
	return b.String()
}

// Report is what `harnessflow bench` prints: the results of one or more
// runs, where and how they were measured. It renders as Markdown, JSON and
// an SVG chart.
type Report struct {
	// Title heads the Markdown and the chart.
	Title string `json:"title"`
	// Command is the command line that made the report.
	Command string `json:"command,omitempty"`
	// Machine is where the results were measured.
	Machine Machine `json:"machine"`
	// Results are the measured graphs.
	Results []*Result `json:"results"`
	// ChartCPU makes the chart show CPU ns per event instead of
	// wall-clock ns (steadier on a loaded machine).
	ChartCPU bool `json:"-"`
	// Wide makes the Markdown tables show every column: the spread of
	// the samples, events/s and MB/s, CPU and allocations of every mode
	// and the peers' descriptions. By default they show ns/event of every
	// mode and CPU ns and allocations of the first.
	Wide bool `json:"-"`
}

// Loaded reports whether the machine was busier than its CPUs during the
// run (a 1-minute load average above the CPU count, before or after):
// wall-clock figures are then unreliable, and the CPU figures are the ones
// to compare.
func (m Machine) Loaded() bool {
	for _, l := range []string{m.LoadBefore, m.LoadAfter} {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(f[0], 64); err == nil && m.CPUs > 0 && v > float64(m.CPUs) {
			return true
		}
	}
	return false
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("benchmark: write JSON: %w", err)
	}
	return nil
}

// WriteMarkdown writes the report as Markdown: per result a table of the
// stages, the sum and end to end, fused and async side by side, and a table
// of the peers.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	if r.Title != "" {
		fmt.Fprintf(&b, "## %s\n\n", r.Title)
	}
	clamped := false
	for _, res := range r.Results {
		if res.markdown(&b, r.Wide) {
			clamped = true
		}
	}
	if clamped {
		b.WriteString(belowNoiseNote + "\n\n")
	}
	b.WriteString("Figures are per upstream event of the corpus (per request for request graphs): the median of the samples, ± half their range; ")
	b.WriteString("CPU is the process's CPU time (all threads, garbage collection included). ")
	b.WriteString("A stage measured by *replay* is its recorded input replayed into it alone, minus the replay alone; ")
	b.WriteString("by *prefix*, the graph up to it minus the graph up to the stage before. ")
	b.WriteString("What end to end spends beyond the sum of its parts is mostly garbage collection running alongside the stages.\n\n")
	fmt.Fprintf(&b, "Machine: %s.\n", r.Machine)
	if r.Machine.Loaded() {
		b.WriteString("\n**The machine was loaded** (load average above its CPU count): wall-clock figures are unreliable; compare the CPU columns.\n")
	}
	if r.Command != "" {
		fmt.Fprintf(&b, "\nCommand: `%s`\n", r.Command)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("benchmark: write Markdown: %w", err)
	}
	return nil
}

func (res *Result) title() string {
	if res.Label != "" {
		return res.Label
	}
	return res.Graph
}

// belowNoise marks a figure measured at or below zero; belowNoiseNote
// explains it under the tables.
const (
	belowNoise     = "≤0*"
	belowNoiseNote = belowNoise + " A stage's cost is a difference of two measurements (see below); when it comes out at or below zero, " +
		"the stage costs less than the noise between them, and the table shows ≤0 instead of the negative figure (the JSON keeps it)."
)

// markdown writes one result's tables; wide shows every column. It
// reports whether a figure was shown as belowNoise.
func (res *Result) markdown(b *bytes.Buffer, wide bool) (clamped bool) {
	fmt.Fprintf(b, "### %s\n\n", res.title())
	fmt.Fprintf(b, "Graph `%s` (%s → %s): %s.  \n", res.Graph, res.In, res.Out, strings.Join(res.Nodes, " → "))
	fmt.Fprintf(b, "Corpus: %s — %d input(s), %s, %d events. Run time %.1f s.\n\n", res.Corpus.Name, res.Corpus.Inputs, formatBytes(res.Corpus.Bytes), res.Corpus.Events, res.Seconds)

	header := []string{"stage", "method"}
	align := []string{":--", ":--"}
	cols := func(i int) columns {
		if wide {
			return allColumns
		}
		if i == 0 {
			return narrowFirst
		}
		return narrowOther
	}
	for i, m := range res.Modes {
		for _, c := range cols(i).names() {
			header = append(header, m+" "+c)
			align = append(align, "--:")
		}
	}
	var rows [][]string
	row := func(name, method string, ms map[string]*Measurement) {
		cells := []string{name, method}
		for i, m := range res.Modes {
			cs, low := measurementCells(ms[m], cols(i))
			cells = append(cells, cs...)
			clamped = clamped || low
		}
		rows = append(rows, cells)
	}
	if res.Source != nil {
		row("source (read the input)", res.Source.Method, res.Source.Modes)
	}
	var notes []string // "note: nodes", in order of first use
	noted := map[string][]string{}
	for _, st := range res.Stages {
		method := st.Method
		if st.Note != "" {
			method += "*"
			if noted[st.Note] == nil {
				notes = append(notes, st.Note)
			}
			noted[st.Note] = append(noted[st.Note], st.Node)
		}
		row(st.Node, method, st.Modes)
	}
	if res.SumOfStages != nil {
		row("**sum of the rows above**", "", res.SumOfStages)
	}
	row("**end to end**", "", res.EndToEnd)
	WriteTable(b, header, align, rows)
	for _, n := range notes {
		fmt.Fprintf(b, "\n\\* %s: %s.", strings.Join(noted[n], ", "), n)
	}
	if len(notes) > 0 {
		b.WriteString(" Prefix rows add up to the whole by construction.\n")
	}

	if len(res.SumRatio) > 0 {
		var parts []string
		for _, m := range res.Modes {
			s, e := res.SumOfStages[m], res.EndToEnd[m]
			part := fmt.Sprintf("%s %.2f", m, res.SumRatio[m])
			if s != nil && e != nil && e.CPUNsPerEvent > 0 {
				part += fmt.Sprintf(" (CPU %.2f)", s.CPUNsPerEvent/e.CPUNsPerEvent)
			}
			parts = append(parts, part)
		}
		fmt.Fprintf(b, "\nSum of the rows / end to end: %s.", strings.Join(parts, ", "))
		if slices.Contains(res.Modes, "async") {
			b.WriteString(" In async mode the stages run in parallel, so their sum may exceed the whole.")
		}
		b.WriteString("\n")
	}
	if len(res.Peers) > 0 {
		b.WriteString("\n")
		pc := narrowFirst
		if wide {
			pc = allColumns
		}
		peerHead, faster := "peer, same bytes, same run", " is faster by"
		if !wide {
			peerHead, faster = "peer (same run)", " speedup"
		}
		header := append([]string{peerHead}, pc.names()...)
		align := []string{":--"}
		for range pc.names() {
			align = append(align, "--:")
		}
		for _, m := range res.Modes {
			header = append(header, m+faster)
			align = append(align, "--:")
		}
		header = append(header, "same result")
		align = append(align, ":--")
		var rows [][]string
		for _, p := range res.Peers {
			name := p.Name
			if wide {
				name += " (" + p.Description + ")"
			}
			pcells, low := measurementCells(p.Measurement, pc)
			clamped = clamped || low
			cells := append([]string{name}, pcells...)
			for _, m := range res.Modes {
				cell := fmt.Sprintf("%.1f×", p.Speedup[m])
				if c, ok := p.CPUSpeedup[m]; ok {
					cell += fmt.Sprintf(" (CPU %.1f×)", c)
				}
				cells = append(cells, cell)
			}
			same := "yes"
			if !p.Agrees {
				same = "no: " + p.Difference
			}
			rows = append(rows, append(cells, same))
		}
		WriteTable(b, header, align, rows)
		if !wide {
			var descs []string
			for _, p := range res.Peers {
				descs = append(descs, p.Name+" ("+p.Description+")")
			}
			fmt.Fprintf(b, "\nPeers, on the same bytes in the same run: %s; speedup is the peer's time over ours.\n", strings.Join(descs, "; "))
		}
	}
	if !wide {
		b.WriteString("\n(`--wide`: every column — the spread of the samples, events/s, MB/s, CPU and allocations of every mode.)\n")
	}
	b.WriteString("\n")
	return clamped
}

// columns selects the measurement columns of a table.
type columns uint8

// The columns, and the selections of the tables.
const (
	colNs columns = 1 << iota
	colSpread
	colCPU
	colAllocs
	colRate
	colMB

	allColumns  = colNs | colSpread | colCPU | colAllocs | colRate | colMB
	narrowFirst = colNs | colCPU | colAllocs // the first mode of a narrow table, and its peers
	narrowOther = colNs
)

// names returns the headers of the selected columns.
func (c columns) names() []string {
	var out []string
	for _, x := range []struct {
		col  columns
		name string
	}{{colNs, "ns/event"}, {colCPU, "CPU ns/event"}, {colAllocs, "allocs/event"}, {colRate, "events/s"}, {colMB, "MB/s"}} {
		if c&x.col != 0 {
			out = append(out, x.name)
		}
	}
	return out
}

// measurementCells formats the selected columns: ns/event (± spread),
// CPU ns/event, allocs/event, events/s and MB/s. A time at or below zero
// (a stage cheaper than the noise of the difference that measures it) is
// shown as belowNoise, and clamped reports it.
func measurementCells(m *Measurement, cols columns) (cells []string, clamped bool) {
	add := func(c columns, v string) {
		if cols&c != 0 {
			cells = append(cells, v)
		}
	}
	if m == nil {
		for range cols.names() {
			cells = append(cells, "—")
		}
		return cells, false
	}
	ns := formatNs(m.NsPerEvent)
	if m.NsPerEvent <= 0 {
		ns, clamped = belowNoise, true
	}
	if cols&colSpread != 0 && m.NsSpread > 0 && !clamped {
		ns += " ± " + formatNs(m.NsSpread)
	}
	cpu := "—"
	switch {
	case m.CPUNsPerEvent < 0:
		cpu = belowNoise
		clamped = clamped || cols&colCPU != 0
	case m.CPUNsPerEvent != 0:
		cpu = formatNs(m.CPUNsPerEvent)
	}
	rate, mb := "—", "—"
	if m.EventsPerSec > 0 {
		rate = chart.FormatValue(m.EventsPerSec)
		mb = strconv.FormatFloat(m.MBPerSec, 'f', 1, 64)
	}
	add(colNs, ns)
	add(colCPU, cpu)
	allocs := formatAllocs(m.AllocsPerEvent)
	if m.AllocsPerEvent <= -0.0005 {
		allocs = belowNoise
		clamped = clamped || cols&colAllocs != 0
	}
	add(colAllocs, allocs)
	add(colRate, rate)
	add(colMB, mb)
	return cells, clamped
}

// formatNs shows nanoseconds with one decimal below 100, none above.
func formatNs(v float64) string {
	if math.Abs(v) < 100 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// formatAllocs shows allocation counts with 3 significant digits.
func formatAllocs(v float64) string {
	if math.Abs(v) < 0.0005 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// formatBytes shows a size in MB (10⁶ bytes) or kB.
func formatBytes(n int) string {
	if n >= 1e6 {
		return fmt.Sprintf("%.2f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f kB", float64(n)/1e3)
}

// WriteTable writes a Markdown table to b: the header, the alignment row
// ("---", "--:", …) and the rows; pipes in cells are escaped. The proxy
// load test's report (package loadtest) writes its table with it too.
func WriteTable(b *bytes.Buffer, header, align []string, rows [][]string) {
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + strings.ReplaceAll(c, "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	line(header)
	line(align)
	for _, r := range rows {
		line(r)
	}
}

// Chart returns the result as a bar chart: ns per event of every stage,
// the sum and end to end, one bar per mode, and the peers' bars in the
// end-to-end group, on a log axis (peers can be dozens of times slower).
//
// With cpu set it shows the process's CPU ns per event instead of wall
// time.
func (res *Result) Chart(m Machine, cpu bool) chart.Bars {
	axis, value := "wall-clock ns per upstream event (log scale; shorter is faster)", func(x *Measurement) float64 { return x.NsPerEvent }
	if cpu {
		axis, value = "CPU ns per upstream event, all threads (log scale; shorter is faster)", func(x *Measurement) float64 { return x.CPUNsPerEvent }
	}
	c := chart.Bars{
		Title: "harnessflow bench — " + res.title() + ": cost per stage",
		Notes: []string{
			fmt.Sprintf("graph %s: %s", res.Graph, strings.Join(res.Nodes, " → ")),
			fmt.Sprintf("corpus: %s (%s, %d events); median of the samples", res.Corpus.Name, formatBytes(res.Corpus.Bytes), res.Corpus.Events),
			m.String(),
		},
		Axis: axis,
		Log:  true,
		Format: func(v float64) string {
			return formatNs(v) + " ns"
		},
	}
	for _, mode := range res.Modes {
		c.Series = append(c.Series, chart.Series{Name: mode})
	}
	for _, p := range res.Peers {
		c.Series = append(c.Series, chart.Series{Name: p.Name + " (peer)"})
	}
	nan := math.NaN()
	group := func(label string, ms map[string]*Measurement, peers bool, separate bool) chart.Group {
		g := chart.Group{Label: label, Separate: separate}
		for _, mode := range res.Modes {
			v := nan
			if x := ms[mode]; x != nil {
				v = value(x)
			}
			g.Values = append(g.Values, v)
		}
		for _, p := range res.Peers {
			v := nan
			if peers && p.Measurement != nil {
				v = value(p.Measurement)
			}
			g.Values = append(g.Values, v)
		}
		return g
	}
	if res.Source != nil {
		c.Groups = append(c.Groups, group("source (read)", res.Source.Modes, false, false))
	}
	for _, st := range res.Stages {
		c.Groups = append(c.Groups, group(st.Node, st.Modes, false, false))
	}
	if res.SumOfStages != nil {
		c.Groups = append(c.Groups, group("sum of the above", res.SumOfStages, false, true))
	}
	c.Groups = append(c.Groups, group("end to end", res.EndToEnd, true, res.SumOfStages == nil))
	return c
}

// SVG renders the report as one SVG file: the chart of every result, one
// below the other.
func (r *Report) SVG() ([]byte, error) {
	var docs []*chart.Doc
	for _, res := range r.Results {
		d, err := res.Chart(r.Machine, r.ChartCPU).Render()
		if err != nil {
			return nil, fmt.Errorf("benchmark: chart %s: %w", res.title(), err)
		}
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("benchmark: chart: no results")
	}
	if len(docs) == 1 {
		return docs[0].Bytes(), nil
	}
	return chart.Stack(r.Title, docs...), nil
}
