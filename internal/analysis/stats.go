package analysis

import (
	"fmt"
	"math"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
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
	// Truncated: the t interval reached below zero for a quantity that
	// cannot be negative, so CILow was set to 0 (too few values to bound
	// the mean from below).
	Truncated bool `json:"ci95_truncated,omitempty"`
	// CV is SD / Mean (0 when the mean is 0).
	CV  float64 `json:"cv"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// describe summarises xs. An empty xs gives the zero Summary.
func describe(xs []float64) Summary {
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
	// unstableCV flags a test whose repeats vary by more than 10%.
	unstableCV = 0.10
	// outlierRel and OutlierSDs define an outlier run: more than 15% and
	// more than 3 standard deviations away from the mean of the others.
	outlierRel = 0.15
	outlierSDs = 3.0
)

// outlier returns the index of the one value in xs that is far from the
// others, or -1. It needs at least three values.
func outlier(xs []float64) int {
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
		if d := math.Abs(x - m); d > outlierRel*math.Abs(m) && d > outlierSDs*sd {
			if found >= 0 {
				return -1 // two far values: spread, not one outlier
			}
			found = i
		}
	}
	return found
}

// DirRepeats is one direction of a test over its repeats.
type DirRepeats = DirSummary

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
	var out []TestRepeats
	at := map[[3]string]int{}
	for _, d := range Summarize(rs, SummarizeOptions{}) {
		if d.N() < 2 {
			continue
		}
		k := [3]string{d.RunID, d.Target, d.Test}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, TestRepeats{RunID: d.RunID, Test: d.Test, Repeats: d.Repeats})
		}
		out[i].Dirs = append(out[i].Dirs, d)
		if len(d.Repeats) > len(out[i].Repeats) {
			out[i].Repeats = d.Repeats
		}
	}
	return out
}

// unstableFindings turns the unstable directions of tr into findings.
func unstableFindings(tr TestRepeats) []result.Finding {
	var out []result.Finding
	for _, d := range tr.Dirs {
		if !d.Unstable {
			continue
		}
		out = append(out, result.Finding{Kind: kindUnstable, Code: result.CodeUnstable, Severity: SevWarn, Dir: d.Dir,
			Summary: fmt.Sprintf("%s is unstable over %d repeats: %s; mean %s, 95%% CI %s..%s; run more repeats or find the noise",
				d.Dir, d.IOPS.N, d.Why, units.IOPS(d.IOPS.Mean), units.Figure(d.IOPS.CILow), units.Figure(d.IOPS.CIHigh)),
			Evidence: map[string]float64{"iops_mean": d.IOPS.Mean, "iops_sd": d.IOPS.SD, "iops_cv": d.IOPS.CV,
				"iops_min": d.IOPS.Min, "iops_max": d.IOPS.Max, "outlier_repeat": float64(d.Outlier), "repeats": float64(d.IOPS.N)}})
	}
	return out
}
