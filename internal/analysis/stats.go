package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/iolens/iolens/internal/result"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Summary describes a sample of repeated measurements.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	// SD is the sample standard deviation (n-1).
	SD float64 `json:"sd"`
	// CILow and CIHigh bound the 95% confidence interval of the mean,
	// from Student's t distribution with n-1 degrees of freedom; both
	// equal Mean when N < 2.
	CILow  float64 `json:"ci95_low"`
	CIHigh float64 `json:"ci95_high"`
	// CV is SD / Mean (0 when the mean is 0).
	CV  float64 `json:"cv"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Describe summarises xs. An empty xs gives the zero Summary.
func Describe(xs []float64) Summary {
	s := Summary{N: len(xs)}
	if s.N == 0 {
		return s
	}
	s.Min, s.Max = xs[0], xs[0]
	for _, x := range xs {
		s.Min, s.Max = math.Min(s.Min, x), math.Max(s.Max, x)
	}
	s.Mean = stat.Mean(xs, nil)
	s.CILow, s.CIHigh = s.Mean, s.Mean
	if s.N < 2 {
		return s
	}
	s.SD = stat.StdDev(xs, nil)
	if s.Mean != 0 {
		s.CV = s.SD / math.Abs(s.Mean)
	}
	tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(s.N - 1)}.Quantile(0.975)
	h := tq * s.SD / math.Sqrt(float64(s.N))
	s.CILow, s.CIHigh = s.Mean-h, s.Mean+h
	return s
}

// WelchT is Welch's unequal-variance t-test of the means of a and b. It
// returns the t statistic, the Welch-Satterthwaite degrees of freedom and
// the two-sided p-value. With fewer than two values in either sample, or
// no variance at all, p is NaN.
func WelchT(a, b []float64) (t, df, p float64) {
	if len(a) < 2 || len(b) < 2 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	ma, va := stat.MeanVariance(a, nil)
	mb, vb := stat.MeanVariance(b, nil)
	na, nb := float64(len(a)), float64(len(b))
	sa, sb := va/na, vb/nb
	se := math.Sqrt(sa + sb)
	if se == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	t = (ma - mb) / se
	df = (sa + sb) * (sa + sb) / (sa*sa/(na-1) + sb*sb/(nb-1))
	p = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	return t, df, p
}

// Instability thresholds for repeated runs.
const (
	// UnstableCV flags a test whose repeats vary by more than 10%.
	UnstableCV = 0.10
	// OutlierRel and OutlierSDs define an outlier run: more than 15% and
	// more than 3 standard deviations away from the mean of the others.
	OutlierRel = 0.15
	OutlierSDs = 3.0
)

// Outlier returns the index of the one value in xs that is far from the
// others, or -1. It needs at least three values.
func Outlier(xs []float64) int {
	if len(xs) < 3 {
		return -1
	}
	found := -1
	for i, x := range xs {
		others := make([]float64, 0, len(xs)-1)
		others = append(others, xs[:i]...)
		others = append(others, xs[i+1:]...)
		m, sd := stat.MeanStdDev(others, nil)
		if m == 0 {
			continue
		}
		if d := math.Abs(x - m); d > OutlierRel*math.Abs(m) && d > OutlierSDs*sd {
			if found >= 0 {
				return -1 // two far values: spread, not one outlier
			}
			found = i
		}
	}
	return found
}

// DirRepeats is one direction of a test over its repeats.
type DirRepeats struct {
	Dir     string  `json:"dir"`
	IOPS    Summary `json:"iops"`
	BWBytes Summary `json:"bw_bytes"`
	// LatMeanNs is the IO-weighted mean latency over all repeats.
	LatMeanNs float64 `json:"lat_mean_ns"`
	// Percentiles of the merged histograms of every repeat (never an
	// average of percentiles); zero when the results carry no histogram.
	P50Ns  float64 `json:"p50_ns"`
	P99Ns  float64 `json:"p99_ns"`
	P999Ns float64 `json:"p99_9_ns"`
	// Unstable is set when the IOPS vary by more than UnstableCV or one
	// run is an outlier; Why says which.
	Unstable bool   `json:"unstable"`
	Why      string `json:"why,omitempty"`
	Outlier  int    `json:"outlier_repeat,omitempty"` // 1-based repeat, 0 if none
}

// TestRepeats gathers the repeats of one test.
type TestRepeats struct {
	RunID string       `json:"run_id"`
	Test  string       `json:"test"`
	Dirs  []DirRepeats `json:"dirs"`
	// Repeats lists the repeat numbers included, in order.
	Repeats []int `json:"repeats"`
}

// Repeats summarises every test that ran more than once (same run, target
// and test name), in the order the tests first appear. Failed runs are
// left out.
func Repeats(rs []result.Result) []TestRepeats {
	type key struct{ run, target, test string }
	var order []key
	groups := map[key][]*result.Result{}
	for i := range rs {
		r := &rs[i]
		if r.Status != "ok" {
			continue
		}
		k := key{r.RunID, r.Target.Kind + ":" + r.Target.Path, r.Test.Name}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []TestRepeats
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		sort.SliceStable(g, func(i, j int) bool { return g[i].Repeat < g[j].Repeat })
		tr := TestRepeats{RunID: k.run, Test: k.test}
		for _, r := range g {
			tr.Repeats = append(tr.Repeats, r.Repeat)
		}
		for _, dir := range []string{"read", "write", "sync"} {
			if dr, ok := dirRepeats(g, dir); ok {
				tr.Dirs = append(tr.Dirs, dr)
			}
		}
		out = append(out, tr)
	}
	return out
}

func pickDir(r *result.Result, dir string) *result.DirResult {
	switch dir {
	case "read":
		return r.Read
	case "write":
		return r.Write
	case "sync":
		return r.Sync
	}
	return nil
}

func dirRepeats(g []*result.Result, dir string) (DirRepeats, bool) {
	var iops, bw []float64
	var latSum float64
	var latN uint64
	var merged result.Histogram
	var reps []int
	for _, r := range g {
		d := pickDir(r, dir)
		if d == nil {
			continue
		}
		iops = append(iops, d.IOPS)
		bw = append(bw, d.BWBytes)
		reps = append(reps, r.Repeat)
		latSum += d.Lat.MeanNs * float64(d.Lat.N)
		latN += d.Lat.N
		merged.Merge(&d.Hist)
	}
	if len(iops) < 2 {
		return DirRepeats{}, false
	}
	dr := DirRepeats{Dir: dir, IOPS: Describe(iops), BWBytes: Describe(bw)}
	if latN > 0 {
		dr.LatMeanNs = latSum / float64(latN)
	}
	if merged.Count() > 0 {
		p := merged.Percentiles([]float64{50, 99, 99.9})
		dr.P50Ns, dr.P99Ns, dr.P999Ns = p[0], p[1], p[2]
	}
	if o := Outlier(iops); o >= 0 {
		dr.Unstable, dr.Outlier = true, reps[o]
		dr.Why = fmt.Sprintf("repeat %d is an outlier (%.0f IOPS against a mean of %.0f)", reps[o], iops[o], dr.IOPS.Mean)
	} else if dr.IOPS.CV > UnstableCV {
		dr.Unstable = true
		dr.Why = fmt.Sprintf("IOPS vary by %.0f%% (CV) over %d repeats", dr.IOPS.CV*100, len(iops))
	}
	return dr, true
}

// unstableFindings turns the unstable directions of tr into findings.
func unstableFindings(tr TestRepeats) []result.Finding {
	var out []result.Finding
	for _, d := range tr.Dirs {
		if !d.Unstable {
			continue
		}
		out = append(out, result.Finding{Kind: KindUnstable, Code: result.CodeUnstable, Severity: SevWarn, Dir: d.Dir,
			Summary: fmt.Sprintf("%s is unstable over %d repeats: %s; mean %.0f IOPS, 95%% CI %.0f..%.0f; run more repeats or find the noise",
				d.Dir, d.IOPS.N, d.Why, d.IOPS.Mean, d.IOPS.CILow, d.IOPS.CIHigh),
			Evidence: map[string]float64{"iops_mean": d.IOPS.Mean, "iops_sd": d.IOPS.SD, "iops_cv": d.IOPS.CV,
				"iops_min": d.IOPS.Min, "iops_max": d.IOPS.Max, "outlier_repeat": float64(d.Outlier), "repeats": float64(d.IOPS.N)}})
	}
	return out
}
