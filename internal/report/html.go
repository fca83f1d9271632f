package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// The chart library, vendored and pinned (see assets/uplot/VERSION), is
// inlined so the page opens offline and makes no request.
var (
	//go:embed assets/uplot/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uplot/uPlot.min.css
	uplotCSS string
	//go:embed assets/html/page.css
	pageCSS string
	//go:embed assets/html/page.js
	pageJS string
	//go:embed assets/html/page.tmpl
	pageTmpl string
)

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{"words": glossed}).Parse(pageTmpl))

// Page is everything one HTML report shows.
type Page struct {
	Title string
	// Sets are the groups compared in the bar, percentile and QD charts:
	// the targets of a report, or the operands of a comparison. Each set
	// gets its own verdict.
	Sets []Set
	// Warnings open the page, before anything else (a comparison of
	// runs whose parameters differ), under WarningTitle ("Warning" when
	// empty).
	Warnings     []string
	WarningTitle string
	// Tables follow the warnings (a comparison and what it cost).
	Tables []*Table
	// Ceilings are expected limits drawn on the bar charts.
	Ceilings []Ceiling
	// Unknown lists what the run could not establish, beyond what its
	// sets' diagnoses say; it joins every set's verdict.
	Unknown []string
	// Generated is the time printed in the header (now when zero).
	Generated time.Time
	// Points is how many points a time series keeps (MaxPoints when 0).
	Points int
}

// Set is a named group of results.
type Set struct {
	Name    string
	Results []result.Result
	// Diagnosis is the set's diagnosis, built before the page (nil: the
	// set has none, as a watch's).
	Diagnosis *diagnosis.Diagnosis
}

// diagnosis is the set's diagnosis (empty when it has none).
func (s Set) diagnosis() diagnosis.Diagnosis {
	if s.Diagnosis != nil {
		return *s.Diagnosis
	}
	return diagnosis.Diagnosis{}
}

// Table is a plain table of strings.
type Table struct {
	// ID is the section's anchor (optional).
	ID     string
	Title  string
	Header []string
	Rows   [][]string
	// Class, when set, holds CSS classes per cell, in the shape of Rows:
	// space-separated names from CellClasses.
	Class [][]string
	// Titles, when set, hold a hover title per cell, in the shape of Rows
	// (a change's p-value).
	Titles [][]string
	Note   string
}

// cellClasses are the cell classes a Table may use; others are dropped.
// better, worse and same colour a change, group marks a row group's
// first cell, num a figure (right-aligned, never wrapped).
// repeat marks a row group's name written again on its other rows: hidden
// in the table, shown on a phone, where each row is a card of its own.
var cellClasses = []string{"better", "worse", "same", "group", "num", "repeat"}

// Ceiling is an expected limit: Metric is "iops", "bw_bytes" or "p99_ns".
// An empty Test applies to every test; an empty Dir to every direction.
// Findings whose evidence has "ceiling_iops", "ceiling_bw_bytes" or
// "ceiling_p99_ns" add ceilings for their test too.
type Ceiling struct {
	Test, Dir, Metric string
	Value             float64
	Label             string
}

// ResultsPage is the page of an outcome: one set per run and target,
// each with its diagnosis.
func ResultsPage(out diagnosis.Outcome) Page {
	p := Page{}
	rs := out.Results
	for _, g := range groupByTarget(rs) {
		r := g[0]
		p.Sets = append(p.Sets, Set{Name: r.Target.Path + " (" + r.RunID + ")", Results: g, Diagnosis: out.For(g)})
	}
	if len(rs) > 0 {
		p.Title = fmt.Sprintf("iolens report: %s on %s", rs[0].Suite, rs[0].Target.Path)
		if len(p.Sets) > 1 {
			p.Title = fmt.Sprintf("iolens report: %d targets", len(p.Sets))
		}
	} else {
		p.Title = "iolens report"
	}
	return p
}

// HTML renders results as a self-contained page: the verdict of each run
// and target, the findings worst first, then the tables and charts.
func HTML(w io.Writer, out diagnosis.Outcome) error {
	return WriteHTML(w, ResultsPage(out))
}

// palette is shared with page.js (same order).
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
	"#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173"}

type chartRef struct {
	ID, Title, Sub string
}

// metaCol is one run and target of the metadata table, which lists
// fields down and runs across so that it fits a narrow window.
type metaCol struct {
	Set, Color string
	key        string
	Values     []string
}

var metaFields = []string{"run", "started", "suite", "target", "device", "file system", "host", "kernel", "CPUs", "RAM", "fio", "iolens", "labels", "notes"}

type metaRow struct {
	Field  string
	Values []string
}

type findingRow struct {
	Set, Test, Severity, Kind, Summary, When, Evidence string
	EvidenceCount                                      int
}

type barChart struct {
	Title string
	SVG   template.HTML
}

type legendEntry struct{ Name, Color string }

// line is a line of text with a CSS class (a severity, or "").
// line is a line of text or a table's cell: its class, and in a table
// its column's name (the label a phone's card shows) and a hover title.
type line struct{ Text, Class, Label, Title string }

// modelRow is one direction of the disk model.
type modelRow struct {
	Dir, IOPS, IOPSLimit, IOPSClass, BW, BWLimit, BWClass, QD1, Knee string
}

// verdictView is one set's disk model as the page opens with it.
type verdictView struct {
	Set, Color string
	Lines      []line
	ToChange   []string
	Model      []modelRow
	Charts     []chartRef
	Unknown    []string
	Matches    []string
	// NoMatch says why no catalog disk is listed.
	NoMatch  string
	Expected string
}

type tableView struct {
	ID, Title, Note string
	Header          []string
	Rows            [][]line
}

// testView is one test, collapsed below the first screen: its figures
// in the summary line, its findings, latency percentiles and time
// series inside (drawn when opened).
type testView struct {
	ID, Name, Headline, Class string
	Findings                  []line
	Pct, Series               []chartRef
}

type pageView struct {
	Title, Generated, Version string
	NResults                  int
	Legend                    []legendEntry
	Multi                     bool
	Warnings                  []string
	WarningTitle              string
	Tables                    []tableView
	Verdicts                  []verdictView
	Findings                  []findingRow
	Repeats                   *tableView
	Bars                      []barChart
	Tests                     []testView
	// Smooth: some series are sampled faster than once a second, and
	// the page offers to smooth them.
	Smooth                bool
	MetaCols              []metaCol
	Meta                  []metaRow
	UplotCSS, PageCSS     template.CSS
	UplotJS, PageJS, Data template.JS
}

// pageData is what page.js draws, as JSON. Every list is an array, never
// null, so the script needs no guard for a report without one.
type pageData struct {
	Colors []string `json:"colors"`
	// Metrics are the colours of the time series' metrics, the same in
	// every chart; Shade those of the stall and cliff shading, which no
	// metric uses.
	Metrics map[string]string `json:"metrics"`
	Shade   map[string]string `json:"shade"`
	Sets    []string          `json:"sets"`
	Series  []seriesItem      `json:"series"`
	Pct     []pctItem         `json:"pct"`
	Model   []modelItem       `json:"model"`
}

type seriesItem struct {
	ID string `json:"id"`
	*seriesData
}

type pctItem struct {
	ID    string       `json:"id"`
	X     []float64    `json:"x"` // nines
	Sets  []int        `json:"sets"`
	Ys    [][]*float64 `json:"ys"` // ms
	Title string       `json:"title"`
}

// WriteHTML renders a page: each set's verdict, what to change and its
// disk model first, then the findings once per story, then each test
// collapsed, the tests side by side and the run's metadata.
func WriteHTML(w io.Writer, p Page) error {
	points := p.Points
	if points <= 0 {
		points = MaxPoints
	}
	v := pageView{Title: p.Title, UplotCSS: template.CSS(uplotCSS), PageCSS: template.CSS(pageCSS),
		UplotJS: template.JS(uplotJS), PageJS: template.JS(pageJS), Multi: len(p.Sets) > 1, Warnings: p.Warnings, WarningTitle: p.WarningTitle}
	if v.WarningTitle == "" {
		v.WarningTitle = "Warning"
	}
	gen := p.Generated
	if gen.IsZero() {
		gen = time.Now()
	}
	v.Generated = gen.UTC().Format("2006-01-02 15:04 UTC")
	data := pageData{Colors: palette, Metrics: metricColors, Shade: shadeColors, Sets: []string{}, Series: []seriesItem{}, Pct: []pctItem{}, Model: []modelItem{}}
	for _, t := range p.Tables {
		if t != nil {
			v.Tables = append(v.Tables, tableOf(t))
		}
	}
	aggs := make([]map[testKey]*aggregate, len(p.Sets))
	var keys []testKey
	seen := map[testKey]bool{}
	var repeats tableView
	tests := map[string]*testView{}
	var testOrder []string
	testOf := func(name string) *testView {
		if tv, ok := tests[name]; ok {
			return tv
		}
		tv := &testView{ID: fmt.Sprintf("test-%d", len(testOrder)), Name: name}
		tests[name] = tv
		testOrder = append(testOrder, name)
		return tv
	}
	for i, s := range p.Sets {
		data.Sets = append(data.Sets, s.Name)
		v.Legend = append(v.Legend, legendEntry{s.Name, color(i)})
		v.NResults += len(s.Results)
		d := s.diagnosis()
		d.Unknown = append(slices.Clip(p.Unknown), slices.DeleteFunc(slices.Clone(d.Unknown), func(u string) bool { return slices.Contains(p.Unknown, u) })...)
		vv := verdictOf(s, &d, color(i))
		for _, m := range modelCharts(&d, fmt.Sprintf("model-%d", i)) {
			vv.Charts = append(vv.Charts, chartRef{ID: m.ID, Title: m.Title, Sub: m.Sub})
			data.Model = append(data.Model, m)
		}
		v.Verdicts = append(v.Verdicts, vv)
		for _, fl := range stories(s.Results, &d) {
			v.Findings = append(v.Findings, findingView(s.Name, fl))
		}
		for _, r := range repeatRows(s.Results) {
			row := make([]line, 0, len(r)+1)
			cls := ""
			if r[len(r)-1] != "" {
				cls = "warn"
			}
			if v.Multi {
				row = append(row, line{Text: s.Name})
			}
			for _, c := range r {
				row = append(row, line{Text: c, Class: cls})
			}
			repeats.Rows = append(repeats.Rows, row)
		}
		var order []testKey
		aggs[i], order = aggregateSet(s.Results)
		for _, k := range order {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		for j := range s.Results {
			r := &s.Results[j]
			if v.Version == "" {
				v.Version = r.Host.IolensVersion
			}
			v.MetaCols = appendMeta(v.MetaCols, s.Name, color(i), r)
			tv := testOf(r.Test.Name)
			label := ""
			if r.Repeat > 1 || hasRepeats(s.Results) {
				label += fmt.Sprintf(" #%d", r.Repeat)
			}
			if v.Multi {
				label += " · " + s.Name
			}
			if r.Status != "ok" {
				tv.Findings = append(tv.Findings, line{Text: "FAILED" + label + ": " + r.Error, Class: "fail"})
				tv.Class = "fail"
			}
			for _, f := range r.Findings {
				if f.Kind == result.KindModel || f.Kind == result.KindSteady {
					continue
				}
				txt := f.Summary
				if label != "" {
					txt = strings.TrimPrefix(label, " ") + ": " + txt
				}
				tv.Findings = append(tv.Findings, line{Text: txt, Class: f.Severity})
			}
			if sd := buildSeries(r, points); sd != nil {
				id := fmt.Sprintf("ts-%d-%d", i, j)
				v.Smooth = v.Smooth || sd.Fast
				tv.Series = append(tv.Series, chartRef{ID: id, Title: r.Test.Name + label, Sub: r.Test.Summary()})
				data.Series = append(data.Series, seriesItem{ID: id, seriesData: sd})
			}
		}
	}
	// Findings worst first across every set: a comparison's reader
	// sees the worst story first, whichever side it is on.
	sort.SliceStable(v.Findings, func(i, j int) bool { return sevRank(v.Findings[i].Severity) < sevRank(v.Findings[j].Severity) })
	if len(repeats.Rows) > 0 {
		repeats.Header = append([]string(nil), repeatHeader...)
		repeats.Header[len(repeats.Header)-1] = "stability"
		if v.Multi {
			repeats.Header = append([]string{"set"}, repeats.Header...)
		}
		v.Repeats = &repeats
	}
	for fi, f := range metaFields {
		row := metaRow{Field: f}
		for _, c := range v.MetaCols {
			row.Values = append(row.Values, c.Values[fi])
		}
		v.Meta = append(v.Meta, row)
	}
	v.Bars = barCharts(p, keys, aggs)

	// Latency percentile curves: one chart per test and direction, one
	// curve per set, from the set's merged histogram, in the test's
	// section.
	for ki, k := range keys {
		it := pctItem{ID: fmt.Sprintf("pct-%d", ki), X: nines, Title: k.Test}
		for i := range p.Sets {
			a := aggs[i][k]
			if a == nil || a.Hist.Count() == 0 {
				continue
			}
			curve := percentileCurve(&a.Hist, a.MaxNs)
			for j, c := range curve {
				if c != nil && *c <= 0 {
					curve[j] = nil // a log scale has no zero
				}
			}
			it.Sets, it.Ys = append(it.Sets, i), append(it.Ys, curve)
		}
		if len(it.Sets) > 0 {
			tv := testOf(k.Test)
			tv.Pct = append(tv.Pct, chartRef{ID: it.ID, Title: "Latency percentiles, " + k.Dir,
				Sub: "latency (ms, log scale) at each percentile, from the merged histogram"})
			data.Pct = append(data.Pct, it)
		}
	}
	for _, name := range testOrder {
		tv := tests[name]
		var heads []string
		for _, k := range keys {
			if k.Test != name {
				continue
			}
			for i := range p.Sets {
				if a := aggs[i][k]; a != nil {
					heads = append(heads, headline(k.Dir, a))
					break
				}
			}
		}
		tv.Headline = strings.Join(heads, "; ")
		for _, f := range tv.Findings {
			if sevRank(f.Class) < sevRank(tv.Class) || tv.Class == "" && f.Class != "info" && f.Class != "" {
				tv.Class = f.Class
			}
		}
		v.Tests = append(v.Tests, *tv)
	}

	b, err := json.Marshal(data) // escapes <, > and &: safe inside <script>
	if err != nil {
		return err
	}
	v.Data = template.JS(b)
	return pageTemplate.Execute(w, v)
}

// headline is one direction of a test in a few figures.
func headline(dir string, a *aggregate) string {
	s := dir + " " + units.Figure(a.IOPS.Mean) + " IOPS"
	if dir != "sync" {
		s += ", " + units.Figure(a.BWBytes.Mean/1e6) + " MB/s"
	}
	if a.P99Ns > 0 && !a.NoPercentiles {
		s += ", p99 " + units.Latency(a.P99Ns)
	}
	return s
}

// metricColors are the time series' colours by metric: one colour per
// metric across every chart of the page (app and device sides of a
// metric differ by dash, not colour). Red is kept for stall shading.
var metricColors = map[string]string{
	"read": "#1f77b4", "write": "#ff7f0e", "queue": "#9467bd", "util": "#7f7f7f",
	"dirty": "#8c564b", "writeback": "#e377c2", "iowait": "#17becf",
}

// shadeColors are the regions' colours: stalls in red, which no metric
// uses, cliffs in olive.
var shadeColors = map[string]string{"stall": "rgba(214,39,40,0.18)", "cliff": "rgba(188,189,34,0.25)", "other": "rgba(120,120,120,0.12)"}

func color(i int) string { return palette[i%len(palette)] }

func tableOf(t *Table) tableView {
	tv := tableView{ID: t.ID, Title: t.Title, Note: t.Note, Header: t.Header}
	for i, r := range t.Rows {
		row := make([]line, len(r))
		for j, c := range r {
			row[j].Text = c
			if j < len(t.Header) {
				row[j].Label = t.Header[j]
			}
			if i < len(t.Titles) && j < len(t.Titles[i]) {
				row[j].Title = t.Titles[i][j]
			}
			if i < len(t.Class) && j < len(t.Class[i]) {
				var keep []string
				for _, c := range strings.Fields(t.Class[i][j]) {
					if slices.Contains(cellClasses, c) && !slices.Contains(keep, c) {
						keep = append(keep, c)
					}
				}
				row[j].Class = strings.Join(keep, " ")
			}
		}
		tv.Rows = append(tv.Rows, row)
	}
	return tv
}

// limitName is a limit code in a few words, for the model table.
func limitName(code string) string {
	switch code {
	case result.CodeIOPSCap:
		return "IOPS cap"
	case result.CodeBandwidthCap:
		return "bandwidth cap"
	case result.CodeLatency:
		return "latency"
	case result.CodeDevice:
		return "device saturated"
	case result.CodeCPU:
		return "CPU"
	case "", result.CodeUnknown:
		return "unknown"
	}
	return code
}

// verdictOf lays a set's diagnosis out for the page, as the text report
// opens with it.
func verdictOf(s Set, d *diagnosis.Diagnosis, col string) verdictView {
	vv := verdictView{Set: s.Name, Color: col, Unknown: d.Unknown, ToChange: d.ToChange}
	worstStall := ""
	for _, st := range d.Disk.Stalls {
		if sevRank(st.Severity) < sevRank(worstStall) || worstStall == "" {
			worstStall = st.Severity
		}
	}
	for _, l := range d.Verdict {
		cls := ""
		switch {
		case strings.HasPrefix(l, "fsync:") && d.Disk.Fsync != nil:
			cls = map[string]string{"pass": "pass", "warn": "warn", "fail": "fail"}[d.Disk.Fsync.Etcd]
		case strings.HasPrefix(l, "stalls:"):
			cls = map[string]string{"fail": "fail", "warn": "warn"}[worstStall]
		case strings.HasPrefix(l, "burst:"):
			cls = "warn"
		}
		vv.Lines = append(vv.Lines, line{Text: l, Class: cls})
	}
	limitClass := func(code string) string {
		switch code {
		case "", result.CodeUnknown:
			return "lim-unknown"
		}
		return "lim"
	}
	for _, x := range []struct {
		name string
		d    *diagnosis.Direction
	}{{"read", d.Disk.Read}, {"write", d.Disk.Write}} {
		if x.d == nil {
			continue
		}
		m := modelRow{Dir: x.name, IOPS: "-", BW: "-", QD1: "-", Knee: "-"}
		if x.d.IOPS > 0 {
			m.IOPS, m.IOPSLimit, m.IOPSClass = units.Figure(x.d.IOPS), limitName(x.d.IOPSLimit), limitClass(x.d.IOPSLimit)
		}
		if x.d.BWBytes > 0 {
			m.BW, m.BWLimit, m.BWClass = units.Figure(x.d.BWBytes/1e6), limitName(x.d.BWLimit), limitClass(x.d.BWLimit)
		}
		if x.d.QD1LatencyNs > 0 {
			m.QD1 = units.Latency(x.d.QD1LatencyNs) + " (" + units.Figure(x.d.QD1IOPS) + " IOPS)"
		}
		if x.d.KneeReachedQD > 0 {
			// The measured depths the knee lies between.
			m.Knee = "QD" + strconv.Itoa(x.d.KneeReachedQD)
			if x.d.KneeBelowQD > 0 {
				m.Knee += fmt.Sprintf(" (QD%d: %.0f%%)", x.d.KneeBelowQD, 100*x.d.KneeBelowShare)
			}
		}
		vv.Model = append(vv.Model, m)
	}
	vv.NoMatch = "none: no flat IOPS or bandwidth cap was measured"
	for _, dir := range []*diagnosis.Direction{d.Disk.Read, d.Disk.Write} {
		if dir != nil && (dir.IOPSLimit == result.CodeIOPSCap || dir.BWLimit == result.CodeBandwidthCap) {
			vv.NoMatch = "none whose published limits are within 10% of the measured caps (disks provisioned to order, such as gp3, fit any figure and are not listed)"
		}
	}
	for _, m := range d.CatalogMatch {
		s := m.Disk
		if m.VM != "" {
			s += " on " + m.VM
		}
		vv.Matches = append(vv.Matches, fmt.Sprintf("%s: %s IOPS, %s MB/s (within %.0f%%)", s, units.Figure(m.IOPS), units.Figure(m.BWBytes/1e6), m.Distance*100))
	}
	if e := d.Expected; e != nil {
		vv.Expected = e.Disk
		if e.VM != "" {
			vv.Expected += " on " + e.VM
		}
		vv.Expected += ", from " + e.Source
	}
	return vv
}

func appendMeta(cs []metaCol, set, col string, r *result.Result) []metaCol {
	// One column per run and target within a set.
	key := set + "\x00" + r.RunID + "\x00" + r.Target.Kind + " " + r.Target.Path
	for _, c := range cs {
		if c.key == key {
			return cs
		}
	}
	h, t := r.Host, r.Target
	dev := t.Device
	if len(t.Devices) > 1 {
		dev += " (" + strings.Join(t.Devices[1:], ", ") + ")"
	}
	if t.Emulated != "" {
		dev += ", emulated " + t.Emulated
	}
	fs := t.Filesystem
	if t.MountOptions != "" {
		fs += " (" + t.MountOptions + ")"
	}
	var notes []string
	for _, n := range r.Notes {
		if !runNote(n) {
			notes = appendOnce(notes, n)
		}
	}
	// In the order of metaFields.
	vals := []string{r.RunID, r.Start.UTC().Format("2006-01-02 15:04:05 UTC"), r.Suite, t.Kind + " " + t.Path, units.OrDash(dev), units.OrDash(fs),
		units.OrDash(h.Hostname), units.OrDash(h.Kernel), strconv.Itoa(h.CPUs), units.HumanBytes(float64(h.MemTotalBytes)),
		units.OrDash(r.FioVersion), units.OrDash(h.IolensVersion), formatLabels(t.Labels), strings.Join(notes, "; ")}
	return append(cs, metaCol{Set: set, Color: col, key: key, Values: vals})
}

func findingView(set string, fl findingLine) findingRow {
	fr := findingRow{Set: set, Test: fl.Test, Severity: fl.Severity, Summary: fl.Summary, Kind: result.KindSteady}
	f := fl.F
	if f == nil {
		return fr
	}
	fr.Kind = f.Kind
	if f.StartS != nil {
		fr.When = fmt.Sprintf("at %.0f s", *f.StartS)
		if f.DurationS != nil {
			fr.When += fmt.Sprintf(" for %.0f s", *f.DurationS)
		}
	}
	ks := make([]string, 0, len(f.Evidence))
	for k := range f.Evidence {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, k+"="+strconv.FormatFloat(f.Evidence[k], 'g', 5, 64))
	}
	fr.Evidence, fr.EvidenceCount = strings.Join(parts, ", "), len(parts)
	return fr
}

// barCharts draws, per metric, one horizontal bar chart: a group of bars
// per test and direction, one bar per set, with the expected ceiling as a
// dashed line and, for means over several results, the 95% confidence
// interval as a whisker. Drawn as inline SVG: no script needed, and it
// prints sharply.
func barCharts(p Page, keys []testKey, aggs []map[testKey]*aggregate) []barChart {
	if len(keys) == 0 {
		return nil
	}
	metrics := []struct {
		name, title string
		get         func(a *aggregate) float64
		ci          func(a *aggregate) *ciBar
		scale       float64
	}{
		{"iops", "IOPS (mean over repeats)", func(a *aggregate) float64 { return a.IOPS.Mean }, func(a *aggregate) *ciBar { return ciOf(a.IOPS.N, a.IOPS.CILow, a.IOPS.CIHigh, a.IOPS.Truncated) }, 1},
		{"bw_bytes", "Throughput, MB/s (10^6 bytes/s, mean over repeats)", func(a *aggregate) float64 { return a.BWBytes.Mean }, func(a *aggregate) *ciBar {
			return ciOf(a.BWBytes.N, a.BWBytes.CILow, a.BWBytes.CIHigh, a.BWBytes.Truncated)
		}, 1e6},
		{"p99_ns", "p99 latency, ms (from the merged histogram)", func(a *aggregate) float64 { return a.P99Ns }, func(*aggregate) *ciBar { return nil }, 1e6},
	}
	var out []barChart
	for _, m := range metrics {
		type bar struct {
			set int
			v   float64
			ci  *ciBar
		}
		type group struct {
			label   string
			dir     string
			bars    []bar
			ceiling float64
		}
		var groups []group
		top := 0.0
		anyCI, anyShort := false, false
		for _, k := range keys {
			if m.name == "bw_bytes" && k.Dir == "sync" {
				continue
			}
			g := group{label: k.Test + " · " + k.Dir, dir: k.Dir}
			for i := range p.Sets {
				a := aggs[i][k]
				if a == nil || m.name == "p99_ns" && a.NoPercentiles {
					continue
				}
				val := m.get(a) / m.scale
				b := bar{set: i, v: val, ci: m.ci(a)}
				if b.ci != nil {
					b.ci.lo, b.ci.hi = b.ci.lo/m.scale, b.ci.hi/m.scale
					top = math.Max(top, b.ci.hi)
					anyCI, anyShort = true, anyShort || b.ci.truncated
				}
				g.bars = append(g.bars, b)
				top = math.Max(top, val)
				if c := a.Ceiling[m.name]; c > 0 {
					g.ceiling = c / m.scale
				}
			}
			for _, c := range p.Ceilings {
				if c.Metric == m.name && (c.Test == "" || c.Test == k.Test) && (c.Dir == "" || c.Dir == k.Dir) {
					g.ceiling = c.Value / m.scale
				}
			}
			top = math.Max(top, g.ceiling)
			if len(g.bars) > 0 {
				groups = append(groups, g)
			}
		}
		if len(groups) == 0 || top <= 0 {
			continue
		}
		valueW := 70.0
		if anyShort {
			valueW = 150 // room for "too few runs"
		}
		// Narrow, with each group's label on a line of its own above
		// its bars: the chart scales to its container and its text
		// stays readable on a phone.
		const (
			width, labelW = 480.0, 0.0
			barH, gap     = 18.0, 8.0
			labelH        = 16.0
		)
		plotW := width - labelW - valueW
		var b strings.Builder
		y := 20.0
		body := &strings.Builder{}
		for _, g := range groups {
			fmt.Fprintf(body, `<text class="bl" x="0" y="%g">%s</text>`, y+labelH-4, html.EscapeString(g.label))
			y += labelH
			gh := float64(len(g.bars)) * barH
			for bi, br := range g.bars {
				w := br.v / top * plotW
				by := y + float64(bi)*barH
				tip := html.EscapeString(p.Sets[br.set].Name) + ": " + units.Chart(br.v)
				label := units.Chart(br.v)
				end := labelW + w
				if br.ci != nil {
					tip += fmt.Sprintf(", 95%% CI %s..%s over %d results", units.Chart(br.ci.lo), units.Chart(br.ci.hi), br.ci.n)
					if br.ci.truncated {
						tip += " (too few runs to bound it from below)"
						label += " (too few runs)"
					}
				}
				// One set: a bar's colour is its direction's, as in
				// every chart; several: the set's.
				fill := color(br.set)
				if len(p.Sets) == 1 {
					fill = curveColor(g.dir, false)
				}
				fmt.Fprintf(body, `<rect x="%g" y="%g" width="%.1f" height="%g" fill="%s"><title>%s</title></rect>`,
					labelW, by+1, w, barH-2, fill, tip)
				if br.ci != nil {
					x0, x1 := labelW+br.ci.lo/top*plotW, labelW+br.ci.hi/top*plotW
					cy := by + barH/2
					cls := "err"
					if br.ci.truncated {
						cls = "err short" // reaches zero: drawn dashed
					}
					fmt.Fprintf(body, `<g class="%s" data-lo="%s" data-hi="%s"><line x1="%.1f" x2="%.1f" y1="%g" y2="%g"/><line x1="%.1f" x2="%.1f" y1="%g" y2="%g"/><line x1="%.1f" x2="%.1f" y1="%g" y2="%g"/><title>%s</title></g>`,
						cls, units.Chart(br.ci.lo), units.Chart(br.ci.hi), x0, x1, cy, cy, x0, x0, cy-4, cy+4, x1, x1, cy-4, cy+4, tip)
					end = math.Max(end, x1)
				}
				fmt.Fprintf(body, `<text class="bv" x="%.1f" y="%g">%s</text>`, end+4, by+barH-4, label)
			}
			if g.ceiling > 0 {
				x := labelW + g.ceiling/top*plotW
				fmt.Fprintf(body, `<line class="ceil" x1="%.1f" x2="%.1f" y1="%g" y2="%g"><title>expected: %s</title></line>`, x, x, y-3, y+gh+3, units.Chart(g.ceiling))
			}
			y += gh + gap
		}
		// Axis: 0 and the top value, with a light grid at quarters.
		var axis strings.Builder
		for q := 0; q <= 4; q++ {
			x := labelW + float64(q)/4*plotW
			fmt.Fprintf(&axis, `<line class="grid" x1="%.1f" x2="%.1f" y1="14" y2="%g"/><text class="ax" x="%.1f" y="11">%s</text>`, x, x, y, x, units.Chart(top*float64(q)/4))
		}
		fmt.Fprintf(&b, `<svg class="bars" role="img" viewBox="0 0 %g %g" width="%g" height="%g">%s%s</svg>`,
			width, y+4, width, y+4, axis.String(), body.String())
		title := m.title
		if anyCI {
			title += "; whiskers: 95% confidence interval of the mean"
		}
		out = append(out, barChart{Title: title, SVG: template.HTML(b.String())})
	}
	return out
}

// ciBar is a 95% interval drawn on a bar.
type ciBar struct {
	n         int
	lo, hi    float64
	truncated bool
}

// ciOf is the interval of a mean over n results, nil for a lone result.
func ciOf(n int, lo, hi float64, truncated bool) *ciBar {
	if n < 2 {
		return nil
	}
	return &ciBar{n: n, lo: math.Max(lo, 0), hi: hi, truncated: truncated}
}
