package analysis

import (
	"math"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestDescribe(t *testing.T) {
	// Expected values worked out by hand: t(0.975, 2) = 4.302653,
	// t(0.975, 4) = 2.776445.
	for _, c := range []struct {
		xs                        []float64
		mean, sd, lo, hi, cv, min float64
		max                       float64
	}{
		{[]float64{10, 12, 14}, 12, 2, 12 - 4.968275, 12 + 4.968275, 2.0 / 12, 10, 14},
		{[]float64{100, 102, 98, 101, 99}, 100, 1.581139, 100 - 1.963243, 100 + 1.963243, 0.01581139, 98, 102},
		{[]float64{7}, 7, 0, 7, 7, 0, 7, 7},
	} {
		s := describe(c.xs)
		if s.N != len(c.xs) || !near(s.Mean, c.mean, 1e-9) || !near(s.SD, c.sd, 1e-6) || !near(s.CILow, c.lo, 1e-5) ||
			!near(s.CIHigh, c.hi, 1e-5) || !near(s.CV, c.cv, 1e-6) || s.Min != c.min || s.Max != c.max {
			t.Errorf("Describe(%v) = %+v", c.xs, s)
		}
	}
	if s := describe(nil); s.N != 0 || s.Mean != 0 {
		t.Errorf("Describe(nil) = %+v", s)
	}
}

func TestWelchT(t *testing.T) {
	// By hand: means 3 and 6, variances 2.5 and 10, se = sqrt(2.5);
	// df = 6.25/1.0625; p from integrating Student's t density.
	tt, df, p := WelchT([]float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 10})
	if !near(tt, -1.8973666, 1e-6) || !near(df, 5.8823529, 1e-6) || !near(p, 0.107531, 1e-5) {
		t.Errorf("WelchT = %v %v %v", tt, df, p)
	}
	if _, _, p := WelchT([]float64{1}, []float64{1, 2}); !math.IsNaN(p) {
		t.Errorf("one-value sample: p = %v, want NaN", p)
	}
}

func TestOutlier(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want int
	}{
		{[]float64{1000, 1010, 990, 1005, 600}, 4},
		{[]float64{1000, 1010, 990}, -1},
		{[]float64{1000, 1400, 600}, -1}, // spread, not one outlier
		{[]float64{1000, 1000}, -1},
	} {
		if got := outlier(c.xs); got != c.want {
			t.Errorf("Outlier(%v) = %d, want %d", c.xs, got, c.want)
		}
	}
}

func repeatResult(rep int, iops float64, hist result.Histogram) result.Result {
	return result.Result{RunID: "r1", Test: result.TestSpec{Name: "randread"}, Repeat: rep, Status: "ok",
		Read: &result.DirResult{IOPS: iops, BWBytes: iops * 4096, Lat: result.Latency{N: 100, MeanNs: 1e6}, Hist: hist}}
}

func TestRepeatsMergeHistograms(t *testing.T) {
	// Run 1: 99 IOs at 1 ms, 1 at 100 ms. Run 2: 100 at 2 ms. Their p99s
	// are 1 ms and 2 ms, whose average (1.5 ms) is not a percentile of
	// anything; the merged p99 (200 IOs, the 198th) is 2 ms.
	h1, h2 := result.Histogram{}, result.Histogram{}
	h1.Add(1e6, 99)
	h1.Add(100e6, 1)
	h2.Add(2e6, 100)
	rs := []result.Result{repeatResult(1, 1000, h1), repeatResult(2, 1100, h2), repeatResult(3, 1050, result.Histogram{})}
	got := Repeats(rs)
	if len(got) != 1 || len(got[0].Dirs) != 1 {
		t.Fatalf("Repeats = %+v", got)
	}
	d := got[0].Dirs[0]
	if d.IOPS.N != 3 || !near(d.IOPS.Mean, 1050, 1e-9) || !near(d.IOPS.SD, 50, 1e-9) {
		t.Errorf("IOPS summary %+v", d.IOPS)
	}
	want := float64(result.BucketValue(result.BucketIndex(2e6)))
	if d.P99Ns != want {
		t.Errorf("merged p99 = %v, want %v", d.P99Ns, want)
	}
	if d.Unstable {
		t.Errorf("CV 4.8%% flagged unstable: %s", d.Why)
	}
}

func TestRepeatsInstability(t *testing.T) {
	for _, c := range []struct {
		iops    []float64
		outlier int
	}{
		{[]float64{1000, 1010, 995, 1005, 500}, 5},
		{[]float64{1000, 1300, 800}, 0},
	} {
		var rs []result.Result
		for i, v := range c.iops {
			rs = append(rs, repeatResult(i+1, v, result.Histogram{}))
		}
		Annotate(rs)
		last := rs[len(rs)-1]
		var f *result.Finding
		for i := range last.Findings {
			if last.Findings[i].Kind == kindUnstable {
				f = &last.Findings[i]
			}
		}
		if f == nil {
			t.Fatalf("%v: no instability finding on the last repeat: %+v", c.iops, last.Findings)
		}
		if int(f.Evidence["outlier_repeat"]) != c.outlier {
			t.Errorf("%v: outlier %v, want %d (%s)", c.iops, f.Evidence["outlier_repeat"], c.outlier, f.Summary)
		}
	}
}
