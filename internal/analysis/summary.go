package analysis

import (
	"fmt"
	"math"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// DirSummary is one test's direction over the results that ran it: the
// repeats of a run, or every run of a selection. It is the one place
// where figures over several results are computed; the reports, compare,
// metrics and the repeats table all read it.
type DirSummary struct {
	RunID  string `json:"run_id,omitempty"` // empty when summarised across runs
	Target string `json:"target,omitempty"`
	Test   string `json:"test"`
	Dir    string `json:"dir"`
	// Group is the test's group (a QD sweep's), Depth its outstanding IOs
	// (iodepth x numjobs) and BlockSize its block size.
	Group     string `json:"group,omitempty"`
	Depth     int    `json:"depth"`
	BlockSize int64  `json:"bs_bytes"`
	// IOPS and BWBytes describe the per-result figures: mean, spread and
	// a 95% interval that never goes below zero.
	IOPS    Summary `json:"iops"`
	BWBytes Summary `json:"bw_bytes"`
	// IOPSValues and P99Values are the per-result figures, in result
	// order (P99Values holds each result's own p99).
	IOPSValues []float64 `json:"iops_values"`
	P99Values  []float64 `json:"p99_ns_values"`
	// Repeats lists each result's repeat number, in the same order.
	Repeats []int `json:"repeats"`
	// LatMeanNs is the IO-weighted mean latency over all results.
	LatMeanNs float64 `json:"lat_mean_ns"`
	// Percentiles come from the merged histograms of the results (those
	// that have one; Samples counts the IOs they hold). A lone result
	// without a histogram keeps fio's own percentiles (exact for it);
	// several without any have none, and NoPercentiles says so:
	// percentiles are never averaged.
	P50Ns   float64 `json:"p50_ns"`
	P90Ns   float64 `json:"p90_ns"`
	P99Ns   float64 `json:"p99_ns"`
	P999Ns  float64 `json:"p99_9_ns"`
	P9999Ns float64 `json:"p99_99_ns"`
	// MaxNs is the largest latency of any result; no percentile is
	// above it.
	MaxNs         float64 `json:"max_ns"`
	Samples       uint64  `json:"lat_samples"`
	NoPercentiles bool    `json:"no_percentiles,omitempty"`
	// Hist is the merged histogram (empty when no result had one).
	Hist result.Histogram `json:"-"`
	// Unstable is set when the IOPS vary by more than UnstableCV or one
	// result is an outlier; Why says which, Outlier names its repeat.
	Unstable bool   `json:"unstable"`
	Why      string `json:"why,omitempty"`
	Outlier  int    `json:"outlier_repeat,omitempty"`
}

// N is the number of results summarised.
func (d *DirSummary) N() int { return len(d.IOPSValues) }

// SummarizeOptions says how results are grouped.
type SummarizeOptions struct {
	// AcrossRuns groups by test and direction alone, for a selection of
	// runs (compare); otherwise run and target also tell groups apart.
	AcrossRuns bool
}

// Summarize groups results by test and direction (and by run and target
// unless o.AcrossRuns) and summarises each group, in the order the groups
// first appear. Failed results are left out.
func Summarize(rs []result.Result, o SummarizeOptions) []DirSummary {
	type key struct{ run, target, test, dir string }
	var order []key
	groups := map[key][]int{}
	for i := range rs {
		r := &rs[i]
		if r.Status != "ok" {
			continue
		}
		for name := range r.Dirs() {
			k := key{test: r.Test.Name, dir: name}
			if !o.AcrossRuns {
				k.run, k.target = r.RunID, targetKey(r)
			}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], i)
		}
	}
	out := make([]DirSummary, 0, len(order))
	for _, k := range order {
		out = append(out, summarizeDir(rs, groups[k], k.dir, k.run, k.target))
	}
	return out
}

func summarizeDir(rs []result.Result, idx []int, dir, run, target string) DirSummary {
	first := &rs[idx[0]]
	s := DirSummary{RunID: run, Target: target, Test: first.Test.Name, Dir: dir, Group: first.Test.Group,
		Depth: max(1, first.Test.IODepth) * max(1, first.Test.NumJobs), BlockSize: first.Test.BlockSize}
	var bw []float64
	var latSum float64
	var latN uint64
	withHist := 0
	var maxNs float64
	for _, i := range idx {
		r := &rs[i]
		d := r.Dir(dir)
		maxNs = math.Max(maxNs, d.Lat.MaxNs)
		s.IOPSValues = append(s.IOPSValues, d.IOPS)
		s.P99Values = append(s.P99Values, d.Lat.P99Ns)
		s.Repeats = append(s.Repeats, r.Repeat)
		bw = append(bw, d.BWBytes)
		if d.Lat.N > 0 && d.Lat.MeanNs > 0 {
			latSum += d.Lat.MeanNs * float64(d.Lat.N)
			latN += d.Lat.N
		}
		if d.Hist.Count() > 0 {
			withHist++
			s.Hist.Merge(&d.Hist)
		}
	}
	s.MaxNs = maxNs
	s.IOPS, s.BWBytes = describeNonNegative(s.IOPSValues), describeNonNegative(bw)
	if latN > 0 {
		s.LatMeanNs = latSum / float64(latN)
	}
	switch {
	case withHist > 0:
		p := s.Hist.Percentiles([]float64{50, 90, 99, 99.9, 99.99})
		for j := range p {
			p[j] = result.ClipNs(p[j], maxNs)
		}
		s.P50Ns, s.P90Ns, s.P99Ns, s.P999Ns, s.P9999Ns, s.Samples = p[0], p[1], p[2], p[3], p[4], s.Hist.Count()
	case len(idx) == 1:
		l := first.Dir(dir).Lat
		s.P50Ns, s.P90Ns, s.P99Ns, s.P999Ns, s.P9999Ns, s.Samples = l.P50Ns, l.P90Ns, l.P99Ns, l.P999Ns, l.P9999Ns, l.N
	default:
		// Several results without histograms: their percentiles cannot
		// be merged, and averaging them would be wrong.
		s.NoPercentiles = true
	}
	if len(idx) >= 2 {
		if o := outlier(s.IOPSValues); o >= 0 {
			s.Unstable, s.Outlier = true, s.Repeats[o]
			s.Why = fmt.Sprintf("repeat %d is an outlier (%s against a mean of %s)", s.Repeats[o], units.IOPS(s.IOPSValues[o]), units.Figure(s.IOPS.Mean))
		} else if s.IOPS.CV > unstableCV {
			s.Unstable = true
			s.Why = fmt.Sprintf("IOPS vary by %.0f%% (CV) over %d repeats", s.IOPS.CV*100, len(idx))
		}
	}
	return s
}

// describeNonNegative is Describe for a quantity that cannot be negative
// (IOPS, bytes/s): when the t interval reaches below zero, which says the
// sample is too small to bound the mean from below, the interval stops at
// zero and Truncated says so.
func describeNonNegative(xs []float64) Summary {
	s := describe(xs)
	if s.CILow < 0 {
		s.CILow, s.Truncated = 0, true
	}
	return s
}
