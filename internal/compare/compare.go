package compare

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// alpha is the significance level of the tests.
const alpha = 0.05

// schema names the version of the comparison object (-o json).
const schema = "iolens.comparison/v1"

// WelchTest runs Welch's unequal-variance t-test on a and b, two-sided;
// T is positive when b's mean is higher.
func WelchTest(a, b []float64) Welch {
	t, df, p := analysis.WelchT(b, a)
	if math.IsNaN(p) {
		return Welch{}
	}
	return Welch{Enough: true, T: t, DF: df, P: p, Significant: p < alpha}
}

type key struct{ test, dir string }

// p99Test compares the p99 of two latency histograms. The p99 of n IOs
// is an order statistic: its rank is binomial, so its 95% interval runs
// between the quantiles 0.99 ± 1.96·sqrt(0.99·0.01/n), read off the
// histogram; from each side's interval a standard error, and from both a
// two-sided p-value (a normal approximation). T is positive when b's p99
// is higher. Fewer than 500 IOs a side (five beyond the p99) is not
// enough.
func p99Test(a, b *result.Histogram) Welch {
	const q, z = 0.99, 1.959964
	type side struct{ p99, se float64 }
	of := func(h *result.Histogram) (side, bool) {
		n := float64(h.Count())
		if n*(1-q) < 5 {
			return side{}, false
		}
		d := z * math.Sqrt(q*(1-q)/n)
		v := h.Percentiles([]float64{100 * (q - d), 100 * q, 100 * math.Min(q+d, 1)})
		// A histogram's bucket is about 1.5% of its value wide: no
		// interval is narrower than that.
		se := math.Max((v[2]-v[0])/(2*z), 0.015*v[1])
		return side{v[1], se}, v[1] > 0
	}
	sa, oka := of(a)
	sb, okb := of(b)
	if !oka || !okb {
		return Welch{Basis: "histograms"}
	}
	t := (sb.p99 - sa.p99) / math.Hypot(sa.se, sb.se)
	p := math.Erfc(math.Abs(t) / math.Sqrt2)
	return Welch{Enough: true, Basis: "histograms", T: t, P: p, Significant: p < alpha}
}

// Compare builds the table. Rows follow the first operand's test order,
// then tests only later operands have. Each operand's figures come from
// analysis.Summarize over its results.
func Compare(ops []Operand) Comparison {
	c := Comparison{Schema: schema, Alpha: alpha}
	var order []key
	seen := map[key]bool{}
	bs := map[key]int64{}
	cells := make([]map[key]*Cell, len(ops))
	hists := make([]map[key]*result.Histogram, len(ops))
	for i, op := range ops {
		c.Operands = append(c.Operands, op.Name)
		c.Labels = append(c.Labels, op.Title())
		c.Statuses = append(c.Statuses, result.StatusOfResults(op.Results))
		cells[i], hists[i] = map[key]*Cell{}, map[key]*result.Histogram{}
		// The first good result of each test with a series, found once.
		series := map[string]*result.Result{}
		for j := range op.Results {
			r := &op.Results[j]
			if _, ok := series[r.Test.Name]; !ok && r.Status == "ok" && len(r.FioSeries) >= 2 {
				series[r.Test.Name] = r
			}
		}
		for _, d := range analysis.Summarize(op.Results, analysis.SummarizeOptions{AcrossRuns: true}) {
			k := key{d.Test, d.Dir}
			if !seen[k] {
				seen[k] = true
				order = append(order, k)
				bs[k] = d.BlockSize
			}
			cells[i][k] = cell(d)
			if h := d.Hist; h.Count() > 0 {
				hists[i][k] = &h
			}
			if d.N() == 1 {
				cells[i][k].IOPSWindows = windows(series[d.Test], d.Dir)
			}
		}
	}
	for _, k := range order {
		row := Row{Test: k.test, Dir: k.dir, BlockSize: bs[k], Cells: make([]*Cell, len(ops))}
		for i := range ops {
			row.Cells[i] = cells[i][k]
		}
		if base := row.Cells[0]; base != nil {
			for ci, x := range row.Cells {
				if ci == 0 || x == nil {
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
				if !pt.Enough && hists[0][k] != nil && hists[ci][k] != nil {
					// Too few results a side for a test over them: each
					// run's histogram gives its p99 an interval.
					pt = p99Test(hists[0][k], hists[ci][k])
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
		v := Verdict{Figures: map[string]string{}}
		if d := op.Diagnosis; d != nil {
			v = Verdict{Lines: d.Verdict, ToChange: d.ToChange, Figures: figures(d)}
		}
		c.Verdicts = append(c.Verdicts, v)
		for _, s := range op.Stories {
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

// windows is the IOPS of each second of r (the one result of a test,
// nil when it has no series): fio's per-window series, merged into
// windows of a second or more, the last (partial) one left out.
func windows(r *result.Result, dir string) []float64 {
	if r != nil {
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
