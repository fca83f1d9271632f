package compare

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Alpha is the significance level of the tests.
const Alpha = 0.05

// Operand is one side of a comparison. Name is what the user gave (a
// file, a selector, a run id); Label says what was measured in words
// (empty: Name says it).
type Operand struct {
	Name    string          `json:"name"`
	Label   string          `json:"label,omitempty"`
	Results []result.Result `json:"-"`
}

// Title is how reports name an operand: its label, else its name.
func (o Operand) Title() string {
	if o.Label != "" {
		return o.Label
	}
	return o.Name
}

// Schema names the version of the comparison object (-o json).
const Schema = "iolens.comparison/v1"

// Comparison is the whole side-by-side table.
type Comparison struct {
	// Schema says what the JSON is: no command reads it back as
	// results, and the reader says so.
	Schema   string   `json:"schema"`
	Operands []string `json:"operands"`
	// Labels name the operands in words, in the same order.
	Labels []string `json:"labels"`
	Alpha  float64  `json:"alpha"`
	Rows   []Row    `json:"rows"`
	// Mismatches are the parameters that differ between operands for
	// the same test: a warning that the figures are not like for like.
	Mismatches []Mismatch `json:"mismatches"`
	// Costs has one entry per operand: what its disk costs per measured
	// IOPS and MB/s, nil when the disk is unknown or not priced.
	Costs []*Cost `json:"costs"`
	// Verdicts are each operand's diagnosis, side by side.
	Verdicts []Verdict `json:"verdicts"`
	// Findings are every operand's findings once per story, worst first
	// across operands.
	Findings []Finding `json:"findings"`
}

// Verdict is one operand's diagnosis as a comparison shows it.
type Verdict struct {
	Lines    []string `json:"verdict"`
	ToChange []string `json:"to_change"`
	// Figures are the headline figures by row name (FigureRows), each
	// with how sure it is and what binds it.
	Figures map[string]string `json:"figures"`
}

// Finding is one story of one operand.
type Finding struct {
	Operand  int    `json:"operand"`
	Severity string `json:"severity"`
	Subject  string `json:"subject"`
	Summary  string `json:"summary"`
}

// Row is one test and direction across the operands.
type Row struct {
	Test string `json:"test"`
	Dir  string `json:"dir"`
	// BlockSize is the test's block size (the first operand's that ran it).
	BlockSize int64 `json:"bs_bytes"`
	// Cells has one entry per operand, nil when it lacks the test.
	Cells []*Cell `json:"cells"`
}

// Cell is one operand's figures for a row.
type Cell struct {
	// N is the number of results (repeats, or runs in a selection).
	N       int     `json:"n"`
	IOPS    float64 `json:"iops"`     // mean over the N results
	BWBytes float64 `json:"bw_bytes"` // bytes/s, mean over the N results
	P50Ns   float64 `json:"p50_ns"`   // from the merged histogram
	P99Ns   float64 `json:"p99_ns"`
	P999Ns  float64 `json:"p99_9_ns"`
	Samples uint64  `json:"lat_samples"`
	// NoPercentiles: several results without histograms, whose
	// percentiles cannot be merged (and must not be averaged).
	NoPercentiles bool      `json:"no_percentiles,omitempty"`
	IOPSAll       []float64 `json:"iops_values"`
	P99All        []float64 `json:"p99_ns_values"`
	// IOPSWindows is the rate of each second of a lone result (fio's
	// series, its 250 ms windows merged into seconds): what a side of
	// one result is compared by.
	IOPSWindows []float64 `json:"iops_windows,omitempty"`
	// Diff* are percent differences to the first operand's cell (absent
	// for the first operand itself or when it lacks the row).
	DiffIOPSPct *float64 `json:"diff_iops_pct,omitempty"`
	DiffBWPct   *float64 `json:"diff_bw_pct,omitempty"`
	DiffP50Pct  *float64 `json:"diff_p50_pct,omitempty"`
	DiffP99Pct  *float64 `json:"diff_p99_pct,omitempty"`
	DiffP999Pct *float64 `json:"diff_p99_9_pct,omitempty"`
	// IOPSTest and P99Test compare the per-result values with the first
	// operand's.
	IOPSTest *Welch `json:"iops_test,omitempty"`
	P99Test  *Welch `json:"p99_test,omitempty"`
}

// Welch is the outcome of Welch's t-test between two samples.
type Welch struct {
	// Enough is false when either side has fewer than two values or
	// neither varies: then T, DF and P are not set.
	Enough bool `json:"enough_data"`
	// Basis says what the samples were: "results" (repeats, or runs in
	// a selection), or "windows" (one result a side: the rate of each
	// second of it, fio's per-window series).
	Basis       string  `json:"basis,omitempty"`
	T           float64 `json:"t"`
	DF          float64 `json:"df"`
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
}

// Verdict is the short form used in tables.
func (w *Welch) Verdict() string {
	switch {
	case w == nil:
		return ""
	case !w.Enough:
		return "not enough data"
	case w.Significant:
		return "significant"
	}
	return "not significant"
}

// Change words a test's outcome for a figure where higher is better when
// higherBetter: "better" or "worse" when the difference is significant,
// "same" when it is not, "" when there is no test (the first operand, or
// too few results on either side).
func (w *Welch) Change(higherBetter bool) string {
	switch {
	case w == nil || !w.Enough:
		return ""
	case !w.Significant:
		return "same"
	case (w.T > 0) == higherBetter:
		return "better"
	}
	return "worse"
}

// IOPSChange is the IOPS test's outcome: more IOPS is better.
func (x *Cell) IOPSChange() string {
	if x == nil {
		return ""
	}
	return x.IOPSTest.Change(true)
}

// P99Change is the p99 test's outcome: a lower p99 is better.
func (x *Cell) P99Change() string {
	if x == nil {
		return ""
	}
	return x.P99Test.Change(false)
}

// WelchTest runs Welch's unequal-variance t-test on a and b, two-sided;
// T is positive when b's mean is higher.
func WelchTest(a, b []float64) Welch {
	t, df, p := analysis.WelchT(b, a)
	if math.IsNaN(p) {
		return Welch{}
	}
	return Welch{Enough: true, T: t, DF: df, P: p, Significant: p < Alpha}
}

type key struct{ test, dir string }

// Compare builds the table. Rows follow the first operand's test order,
// then tests only later operands have. Each operand's figures come from
// analysis.Summarize over its results.
func Compare(ops []Operand) Comparison {
	c := Comparison{Schema: Schema, Alpha: Alpha}
	var order []key
	seen := map[key]bool{}
	bs := map[key]int64{}
	cells := make([]map[key]*Cell, len(ops))
	for i, op := range ops {
		c.Operands = append(c.Operands, op.Name)
		c.Labels = append(c.Labels, op.Title())
		cells[i] = map[key]*Cell{}
		for _, d := range analysis.Summarize(op.Results, analysis.SummarizeOptions{AcrossRuns: true}) {
			k := key{d.Test, d.Dir}
			if !seen[k] {
				seen[k] = true
				order = append(order, k)
				bs[k] = d.BlockSize
			}
			cells[i][k] = cell(d)
			if d.N() == 1 {
				cells[i][k].IOPSWindows = windows(op.Results, d.Test, d.Dir)
			}
		}
	}
	for _, k := range order {
		row := Row{Test: k.test, Dir: k.dir, BlockSize: bs[k], Cells: make([]*Cell, len(ops))}
		for i := range ops {
			row.Cells[i] = cells[i][k]
		}
		if base := row.Cells[0]; base != nil {
			for _, x := range row.Cells[1:] {
				if x == nil {
					continue
				}
				x.DiffIOPSPct = pct(base.IOPS, x.IOPS)
				x.DiffBWPct = pct(base.BWBytes, x.BWBytes)
				if !base.NoPercentiles && !x.NoPercentiles {
					x.DiffP50Pct = pct(base.P50Ns, x.P50Ns)
					x.DiffP99Pct = pct(base.P99Ns, x.P99Ns)
					x.DiffP999Pct = pct(base.P999Ns, x.P999Ns)
				}
				it, pt := WelchTest(base.IOPSAll, x.IOPSAll), WelchTest(base.P99All, x.P99All)
				it.Basis, pt.Basis = "results", "results"
				if (base.N < 2 || x.N < 2) && len(base.IOPSWindows) >= 2 && len(x.IOPSWindows) >= 2 {
					// One result a side: its seconds are the sample.
					it = WelchTest(base.IOPSWindows, x.IOPSWindows)
					it.Basis = "windows"
				}
				x.IOPSTest, x.P99Test = &it, &pt
			}
		}
		c.Rows = append(c.Rows, row)
	}
	c.Mismatches = mismatches(ops, order)
	if c.Mismatches == nil {
		c.Mismatches = []Mismatch{}
	}
	c.Costs = costs(ops, &c)
	for i, op := range ops {
		d := report.Diagnose(op.Results, nil)
		c.Verdicts = append(c.Verdicts, Verdict{Lines: d.Verdict, ToChange: d.ToChange, Figures: figures(&d)})
		for _, s := range report.Stories(op.Results, &d) {
			c.Findings = append(c.Findings, Finding{Operand: i, Severity: s.Severity, Subject: s.Subject, Summary: s.Summary})
		}
	}
	sort.SliceStable(c.Findings, func(i, j int) bool {
		a, _ := analysis.SeverityRank(c.Findings[i].Severity)
		b, _ := analysis.SeverityRank(c.Findings[j].Severity)
		return a > b
	})
	if c.Findings == nil {
		c.Findings = []Finding{}
	}
	return c
}

// windows is the IOPS of each second of the one result of rs that ran
// test: fio's per-window series, merged into windows of a second or
// more, the last (partial) one left out.
func windows(rs []result.Result, test, dir string) []float64 {
	for i := range rs {
		r := &rs[i]
		if r.Test.Name != test || r.Status != "ok" || len(r.FioSeries) < 2 {
			continue
		}
		step := r.Interval()
		per := max(1, int(math.Round(1/math.Max(step, 1e-3))))
		var out []float64
		for j := 0; j+per <= len(r.FioSeries); j += per {
			var sum float64
			for _, s := range r.FioSeries[j : j+per] {
				if dir == "write" {
					sum += s.WriteIOPS
				} else {
					sum += s.ReadIOPS
				}
			}
			out = append(out, sum/float64(per))
		}
		if len(out) > 2 {
			out = out[:len(out)-1]
		}
		return out
	}
	return nil
}

// FigureRows name the headline figures of Verdict.Figures, in order.
var FigureRows = []string{"read IOPS", "read MB/s", "write IOPS", "write MB/s", "QD1 read latency", "fsync p99", "looks like"}

// figures are d's headline figures, each with how sure it is and what
// binds it, by FigureRows name ("" when not measured).
func figures(d *diagnosis.Diagnosis) map[string]string {
	out := map[string]string{}
	pm := func(lo, hi, v float64) string {
		if lo <= 0 || hi <= lo || v <= 0 {
			return ""
		}
		return fmt.Sprintf(" ±%.1f%%", 100*math.Max(hi-v, v-lo)/v)
	}
	bound := func(state, code string) string {
		switch state {
		case result.StateLatency, result.StateApproaching:
			return " (no plateau)"
		}
		name := map[string]string{result.CodeIOPSCap: "IOPS cap", result.CodeBandwidthCap: "bandwidth cap", result.CodeLatency: "latency",
			result.CodeDevice: "device saturated", result.CodeCPU: "CPU"}[code]
		if name == "" {
			name = "limit unknown"
		}
		return " (" + name + ")"
	}
	for _, x := range []struct {
		name string
		d    *diagnosis.Direction
	}{{"read", d.Disk.Read}, {"write", d.Disk.Write}} {
		if x.d == nil {
			continue
		}
		if x.d.IOPS > 0 {
			out[x.name+" IOPS"] = units.Figure(x.d.IOPS) + pm(x.d.IOPSLow, x.d.IOPSHigh, x.d.IOPS) + bound(x.d.IOPSState, x.d.IOPSLimit)
		}
		if x.d.BWBytes > 0 {
			out[x.name+" MB/s"] = units.Figure(x.d.BWBytes/1e6) + pm(x.d.BWLow, x.d.BWHigh, x.d.BWBytes) + bound(x.d.BWState, x.d.BWLimit)
		}
	}
	if r := d.Disk.Read; r != nil && r.QD1LatencyNs > 0 {
		out["QD1 read latency"] = units.Latency(r.QD1LatencyNs)
	}
	if f := d.Disk.Fsync; f != nil {
		out["fsync p99"] = units.Latency(f.P99Ns) + " (etcd " + strings.ToUpper(f.Etcd) + ")"
	}
	if len(d.CatalogMatch) > 0 {
		out["looks like"] = d.CatalogMatch[0].Disk
	}
	return out
}

func cell(d analysis.DirSummary) *Cell {
	return &Cell{N: d.N(), IOPS: d.IOPS.Mean, BWBytes: d.BWBytes.Mean, P50Ns: d.P50Ns, P99Ns: d.P99Ns, P999Ns: d.P999Ns,
		Samples: d.Samples, NoPercentiles: d.NoPercentiles, IOPSAll: d.IOPSValues, P99All: d.P99Values}
}

func pct(base, v float64) *float64 {
	if base == 0 {
		return nil
	}
	d := (v - base) / base * 100
	return &d
}
