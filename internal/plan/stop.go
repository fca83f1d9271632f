package plan

import (
	"fmt"
	"math"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/units"
	"gonum.org/v1/gonum/stat/distuv"
)

// Converged ends a rate test once its figure is known to precision: at
// least minS measured, the running mean (all IOs over all the time so
// far) has moved by no more than half the precision over the last two
// seconds, and the two halves of the measurement agree within the
// precision (no trend: a disk still warming up or draining credits keeps
// going). Samples finer than a second alias with a throttle's dispatch
// slices, which is why the means, not the sample spread, decide.
func Converged(minS, precision float64) runner.StopRule {
	type point struct{ t, mean float64 }
	var hist []point
	var rates []float64
	return func(st runner.Status) (bool, string) {
		if st.MeanIOPS <= 0 {
			return false, ""
		}
		hist = append(hist, point{st.Elapsed, st.MeanIOPS})
		rates = append(rates, st.IOPS)
		if st.Elapsed < minS {
			return false, ""
		}
		moved := 0.0
		for i := len(hist) - 1; i >= 0 && hist[i].t >= st.Elapsed-2; i-- {
			moved = math.Max(moved, math.Abs(hist[i].mean-st.MeanIOPS)/st.MeanIOPS)
		}
		if hist[0].t > st.Elapsed-2 || moved > precision/2 {
			return false, ""
		}
		half := len(rates) / 2
		a, b := mean(rates[:half]), mean(rates[half:])
		if a <= 0 || math.Abs(a-b)/math.Max(a, b) > precision {
			return false, ""
		}
		return true, fmt.Sprintf("rate known to %.0f%% (running mean moved %.2f%% in 2 s, halves within %.1f%%)",
			precision*100, moved*100, math.Abs(a-b)/math.Max(a, b)*100)
	}
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// QuantileDecided ends a sync test once its p99 is on one side of limitNs
// at 95% confidence, from the order statistics of the sync latencies so
// far (fio's cumulative histogram), after at least minS seconds and minN
// syncs.
func QuantileDecided(limitNs, minS float64, minN uint64) runner.StopRule {
	return func(st runner.Status) (bool, string) {
		if st.Out == nil || st.Elapsed < minS {
			return false, ""
		}
		var h result.Histogram
		for _, j := range st.Out.AllJobs() {
			if b, err := result.HistogramFromBins(j.Sync.LatNs.Bins); err == nil {
				h.Merge(&b)
			}
		}
		if h.Count() < minN {
			return false, ""
		}
		above, ok := quantileSide(&h, limitNs)
		if !ok {
			return false, ""
		}
		side := "below"
		if above {
			side = "above"
		}
		return true, fmt.Sprintf("p99 %s %s at 95%% confidence after %d syncs", side, units.Latency(limitNs), h.Count())
	}
}

// quantileSide says whether the 99th percentile of h lies above limitNs,
// and whether that is known at 95% confidence: with k of n samples above
// the limit, the share of the distribution above it is bounded by the
// Clopper-Pearson interval of k/n; the p99 is below the limit when that
// share is certainly under 1%, above when certainly over.
func quantileSide(h *result.Histogram, limitNs float64) (above, decided bool) {
	n := h.Count()
	if n == 0 {
		return false, false
	}
	var k uint64
	for _, b := range h.Buckets() {
		if float64(b.Ns) > limitNs {
			k += b.Count
		}
	}
	q := 1 - quantileP
	alpha := 1 - confidence
	upper := 1.0
	if k < n {
		upper = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha)
	}
	lower := 0.0
	if k > 0 {
		lower = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha)
	}
	switch {
	case upper < q:
		return false, true
	case lower > q:
		return true, true
	}
	return float64(k)/float64(n) > q, false
}

// CliffSeen ends a sustained write once a cliff has shown and its lower
// plateau has lasted a few seconds more, so both rates are measured.
func CliffSeen() runner.StopRule {
	var cd *analysis.CliffDetector
	seenAt := -1.0
	return func(st runner.Status) (bool, string) {
		if cd == nil {
			cd = analysis.NewCliffDetector(analysis.CliffConfig{Unit: analysis.UnitIOPS, Interval: st.Interval})
		}
		t := st.Elapsed
		if st.Interval > 0 {
			t = math.Round(t/st.Interval) * st.Interval // fio's status times jitter by a few ms
		}
		if seenAt < 0 && len(cd.Add(t, st.IOPS, nil)) > 0 {
			seenAt = st.Elapsed
		}
		if seenAt >= 0 && st.Elapsed >= seenAt+3 {
			return true, "a cliff showed and its lower plateau was measured"
		}
		return false, ""
	}
}
