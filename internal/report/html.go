package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

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

var pageTemplate = template.Must(template.New("page").Parse(pageTmpl))

// Page is everything one HTML report shows.
type Page struct {
	Title string
	// Sets are the groups compared in the bar, percentile and QD charts:
	// the targets of a report, or the operands of a comparison.
	Sets []Set
	// Table is an optional table shown first (the comparison).
	Table *Table
	// Ceilings are expected limits drawn on the bar charts.
	Ceilings []Ceiling
	// Generated is the time printed in the header (now when zero).
	Generated time.Time
}

// Set is a named group of results.
type Set struct {
	Name    string
	Results []result.Result
}

// Table is a plain table of strings.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	Note   string
}

// Ceiling is an expected limit: Metric is "iops", "bw_bytes" or "p99_ns".
// An empty Test applies to every test; an empty Dir to every direction.
// Findings whose evidence has "ceiling_iops", "ceiling_bw_bytes" or
// "ceiling_p99_ns" add ceilings for their test too.
type Ceiling struct {
	Test, Dir, Metric string
	Value             float64
	Label             string
}

// HTML renders results as a self-contained page: one set per run and
// target.
func HTML(w io.Writer, rs []result.Result) error {
	p := Page{}
	for _, g := range groupByTarget(rs) {
		r := g[0]
		p.Sets = append(p.Sets, Set{Name: r.Target.Path + " (" + r.RunID + ")", Results: g})
	}
	if len(rs) > 0 {
		p.Title = fmt.Sprintf("iolens report: %s on %s", rs[0].Suite, rs[0].Target.Path)
		if len(p.Sets) > 1 {
			p.Title = fmt.Sprintf("iolens report: %d targets", len(p.Sets))
		}
	} else {
		p.Title = "iolens report"
	}
	return WriteHTML(w, p)
}

// palette is shared with page.js (same order).
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
	"#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173"}

type chartRef struct {
	ID, Title, Sub string
}

type metaRow struct {
	Set, Run, Suite, Target, Device, FS, Host, Kernel, CPUs, Mem, Fio, Version, Labels, Notes, Time string
	Color                                                                                           string
}

type findingRow struct {
	Set, Test, Severity, Kind, Summary, When, Evidence string
}

type barChart struct {
	Title string
	SVG   template.HTML
}

type legendEntry struct{ Name, Color string }

type pageView struct {
	Title, Generated, Version string
	NResults                  int
	Legend                    []legendEntry
	Table                     *Table
	Bars                      []barChart
	Findings                  []findingRow
	Series                    []chartRef
	Pct                       []chartRef
	QD                        []chartRef
	Meta                      []metaRow
	UplotCSS, PageCSS         template.CSS
	UplotJS, PageJS, Data     template.JS
}

// pageData is what page.js draws, as JSON.
type pageData struct {
	Colors []string     `json:"colors"`
	Sets   []string     `json:"sets"`
	Series []seriesItem `json:"series"`
	Pct    []pctItem    `json:"pct"`
	QD     []qdItem     `json:"qd"`
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

type qdItem struct {
	ID    string       `json:"id"`
	X     []float64    `json:"x"` // outstanding IOs
	Sets  []int        `json:"sets"`
	IOPS  [][]*float64 `json:"iops"`
	P99   [][]*float64 `json:"p99"` // ms
	Knees []int        `json:"knees"`
}

// WriteHTML renders a page.
func WriteHTML(w io.Writer, p Page) error {
	v := pageView{Title: p.Title, UplotCSS: template.CSS(uplotCSS), PageCSS: template.CSS(pageCSS),
		UplotJS: template.JS(uplotJS), PageJS: template.JS(pageJS)}
	gen := p.Generated
	if gen.IsZero() {
		gen = time.Now()
	}
	v.Generated = gen.UTC().Format("2006-01-02 15:04 UTC")
	data := pageData{Colors: palette}
	aggs := make([]map[testKey]*aggregate, len(p.Sets))
	knees := make([]map[string]int, len(p.Sets))
	var keys []testKey
	seen := map[testKey]bool{}
	for i, s := range p.Sets {
		data.Sets = append(data.Sets, s.Name)
		v.Legend = append(v.Legend, legendEntry{s.Name, color(i)})
		v.NResults += len(s.Results)
		var order []testKey
		aggs[i], order = aggregateSet(s.Results)
		knees[i] = sweepKnees(s.Results)
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
			v.Meta = appendMeta(v.Meta, s.Name, color(i), r)
			for _, f := range r.Findings {
				v.Findings = append(v.Findings, findingView(s.Name, r, f))
			}
			if sd := buildSeries(r); sd != nil {
				id := fmt.Sprintf("ts-%d-%d", i, j)
				title := r.Test.Name
				if r.Repeat > 1 || hasRepeats(s.Results) {
					title += fmt.Sprintf(" #%d", r.Repeat)
				}
				if len(p.Sets) > 1 {
					title += " · " + s.Name
				}
				v.Series = append(v.Series, chartRef{ID: id, Title: title, Sub: r.Test.Summary()})
				data.Series = append(data.Series, seriesItem{ID: id, seriesData: sd})
			}
		}
	}
	v.Table = p.Table
	v.Bars = barCharts(p, keys, aggs)

	// Latency percentile curves: one chart per test and direction, one
	// curve per set, from the set's merged histogram.
	for ki, k := range keys {
		it := pctItem{ID: fmt.Sprintf("pct-%d", ki), X: nines, Title: k.Test}
		for i := range p.Sets {
			a := aggs[i][k]
			if a == nil || a.Hist.Count() == 0 {
				continue
			}
			curve := percentileCurve(&a.Hist)
			for j, c := range curve {
				if c != nil && *c <= 0 {
					curve[j] = nil // a log scale has no zero
				}
			}
			it.Sets, it.Ys = append(it.Sets, i), append(it.Ys, curve)
		}
		if len(it.Sets) > 0 {
			v.Pct = append(v.Pct, chartRef{ID: it.ID, Title: k.Test + " (" + k.Dir + ")",
				Sub: "latency (ms, log scale) at each percentile, from the merged histogram"})
			data.Pct = append(data.Pct, it)
		}
	}

	// QD sweeps: tests sharing a "qd-sweep:" group.
	type sweepKey struct{ group, dir string }
	var sweeps []sweepKey
	seenSweep := map[sweepKey]bool{}
	for _, k := range keys {
		for i := range p.Sets {
			if a := aggs[i][k]; a != nil && strings.HasPrefix(a.Group, "qd-sweep:") {
				sk := sweepKey{a.Group, k.Dir}
				if !seenSweep[sk] {
					seenSweep[sk] = true
					sweeps = append(sweeps, sk)
				}
			}
		}
	}
	for si, sk := range sweeps {
		depthSet := map[int]bool{}
		for i := range p.Sets {
			for k, a := range aggs[i] {
				if a.Group == sk.group && k.Dir == sk.dir {
					depthSet[a.Depth] = true
				}
			}
		}
		depths := sortedDepths(depthSet)
		it := qdItem{ID: fmt.Sprintf("qd-%d", si)}
		for _, d := range depths {
			it.X = append(it.X, float64(d))
		}
		for i := range p.Sets {
			iops, p99 := make([]*float64, len(depths)), make([]*float64, len(depths))
			n := 0
			for k, a := range aggs[i] {
				if a.Group != sk.group || k.Dir != sk.dir {
					continue
				}
				j := sort.SearchInts(depths, a.Depth)
				iops[j], p99[j] = pf(round(a.IOPS.Mean, 5)), pf(round(a.P99Ns/1e6, 4))
				n++
			}
			if n == 0 {
				continue
			}
			it.Sets, it.IOPS, it.P99, it.Knees = append(it.Sets, i), append(it.IOPS, iops), append(it.P99, p99), append(it.Knees, knees[i][sk.group])
		}
		v.QD = append(v.QD, chartRef{ID: it.ID, Title: strings.TrimPrefix(sk.group, "qd-sweep:") + " (" + sk.dir + ")",
			Sub: "IOPS (solid, left) and p99 latency (dashed, right, ms) against outstanding IOs (iodepth x numjobs); the knee (from the sweep finding) is the first depth reaching 90% of the highest IOPS"})
		data.QD = append(data.QD, it)
	}

	b, err := json.Marshal(data) // escapes <, > and &: safe inside <script>
	if err != nil {
		return err
	}
	v.Data = template.JS(b)
	return pageTemplate.Execute(w, v)
}

func color(i int) string { return palette[i%len(palette)] }

func appendMeta(ms []metaRow, set, col string, r *result.Result) []metaRow {
	// One row per run and target within a set.
	for _, m := range ms {
		if m.Set == set && m.Run == r.RunID && m.Target == r.Target.Kind+" "+r.Target.Path {
			return ms
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
		notes = appendOnce(notes, n)
	}
	return append(ms, metaRow{Set: set, Color: col, Run: r.RunID, Suite: r.Suite, Target: t.Kind + " " + t.Path, Device: orDash(dev), FS: orDash(fs),
		Host: orDash(h.Hostname), Kernel: orDash(h.Kernel), CPUs: strconv.Itoa(h.CPUs), Mem: units.HumanBytes(float64(h.MemTotalBytes)),
		Fio: orDash(r.FioVersion), Version: orDash(h.IolensVersion), Labels: formatLabels(t.Labels), Notes: strings.Join(notes, "; "),
		Time: r.Start.UTC().Format("2006-01-02 15:04:05 UTC")})
}

func findingView(set string, r *result.Result, f result.Finding) findingRow {
	fr := findingRow{Set: set, Test: r.Test.Name, Severity: f.Severity, Kind: f.Kind, Summary: f.Summary}
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
	fr.Evidence = strings.Join(parts, ", ")
	return fr
}

// barCharts draws, per metric, one horizontal bar chart: a group of bars
// per test and direction, one bar per set, with the expected ceiling as a
// dashed line. Drawn as inline SVG: no script needed, and it prints
// sharply.
func barCharts(p Page, keys []testKey, aggs []map[testKey]*aggregate) []barChart {
	if len(keys) == 0 {
		return nil
	}
	metrics := []struct {
		name, title string
		get         func(a *aggregate) float64
		scale       float64
		unit        string
	}{
		{"iops", "IOPS (mean over repeats)", func(a *aggregate) float64 { return a.IOPS.Mean }, 1, ""},
		{"bw_bytes", "Throughput, MB/s (10^6 bytes/s)", func(a *aggregate) float64 { return a.BWBytes.Mean }, 1e6, ""},
		{"p99_ns", "p99 latency, ms (from the merged histogram)", func(a *aggregate) float64 { return a.P99Ns }, 1e6, ""},
	}
	var out []barChart
	for _, m := range metrics {
		type bar struct {
			set int
			v   float64
		}
		type group struct {
			label   string
			bars    []bar
			ceiling float64
		}
		var groups []group
		top := 0.0
		for _, k := range keys {
			if m.name == "bw_bytes" && k.Dir == "sync" {
				continue
			}
			g := group{label: k.Test + " · " + k.Dir}
			for i := range p.Sets {
				if a := aggs[i][k]; a != nil {
					val := m.get(a) / m.scale
					g.bars = append(g.bars, bar{i, val})
					top = math.Max(top, val)
					if c := a.Ceiling[m.name]; c > 0 {
						g.ceiling = c / m.scale
					}
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
		const (
			width, labelW, valueW = 900.0, 260.0, 70.0
			barH, gap             = 14.0, 10.0
		)
		plotW := width - labelW - valueW
		var b strings.Builder
		y := 20.0
		body := &strings.Builder{}
		for _, g := range groups {
			gh := float64(len(g.bars)) * barH
			fmt.Fprintf(body, `<text class="bl" x="%g" y="%g">%s</text>`, labelW-6, y+gh/2+4, html.EscapeString(g.label))
			for bi, br := range g.bars {
				w := br.v / top * plotW
				fmt.Fprintf(body, `<rect x="%g" y="%g" width="%.1f" height="%g" fill="%s"><title>%s: %s</title></rect>`,
					labelW, y+float64(bi)*barH+1, w, barH-2, color(br.set), html.EscapeString(p.Sets[br.set].Name), fmtVal(br.v))
				fmt.Fprintf(body, `<text class="bv" x="%.1f" y="%g">%s</text>`, labelW+w+4, y+float64(bi)*barH+barH-3, fmtVal(br.v))
			}
			if g.ceiling > 0 {
				x := labelW + g.ceiling/top*plotW
				fmt.Fprintf(body, `<line class="ceil" x1="%.1f" x2="%.1f" y1="%g" y2="%g"><title>expected: %s</title></line>`, x, x, y-3, y+gh+3, fmtVal(g.ceiling))
			}
			y += gh + gap
		}
		// Axis: 0 and the top value, with a light grid at quarters.
		var axis strings.Builder
		for q := 0; q <= 4; q++ {
			x := labelW + float64(q)/4*plotW
			fmt.Fprintf(&axis, `<line class="grid" x1="%.1f" x2="%.1f" y1="14" y2="%g"/><text class="ax" x="%.1f" y="11">%s</text>`, x, x, y, x, fmtVal(top*float64(q)/4))
		}
		fmt.Fprintf(&b, `<svg class="bars" role="img" viewBox="0 0 %g %g" width="%g" height="%g">%s%s</svg>`,
			width, y+4, width, y+4, axis.String(), body.String())
		out = append(out, barChart{Title: m.title, SVG: template.HTML(b.String())})
	}
	return out
}

func fmtVal(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case a < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}
