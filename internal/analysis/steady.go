package analysis

import (
	"fmt"
	"math"

	"github.com/iolens/iolens/internal/result"
)

// SteadyConfig holds the SNIA PTS criteria. Zero values take the
// defaults.
type SteadyConfig struct {
	// Window is the measurement window in samples (default 20). PTS uses
	// five rounds of minute-long tests; 1 s samples are noisier and a
	// short window passes a slow ramp, so the window is longer in samples.
	Window int
	// Range: max-min within the window at most Range x its mean (0.20).
	Range float64
	// Slope: the excursion of the least-squares line across the window
	// at most Slope x its mean (0.10).
	Slope float64
}

func (c SteadyConfig) withDefaults() SteadyConfig {
	if c.Window < 3 {
		c.Window = 20
	}
	if c.Range <= 0 {
		c.Range = 0.20
	}
	if c.Slope <= 0 {
		c.Slope = 0.10
	}
	return c
}

// windowStats checks one window against the criteria.
func windowStats(w []float64) (mean, rangeFrac, slopeFrac float64) {
	n := float64(len(w))
	lo, hi := w[0], w[0]
	var sx, sy, sxy, sxx float64
	for i, y := range w {
		x := float64(i)
		lo, hi = math.Min(lo, y), math.Max(hi, y)
		sx += x
		sy += y
		sxy += x * y
		sxx += x * x
	}
	mean = sy / n
	if mean <= 0 {
		return mean, math.Inf(1), math.Inf(1)
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return mean, (hi - lo) / mean, math.Abs(slope) * (n - 1) / mean
}

// SteadyDetector is the online form of the criteria: Add takes one value
// per interval and reports whether the last Window values are steady. It
// is what SteadyStop uses for iolens run --until-steady.
type SteadyDetector struct {
	cfg  SteadyConfig
	ring []float64
	n    int
}

// newSteadyDetector returns a detector with cfg's defaults filled in.
func newSteadyDetector(cfg SteadyConfig) *SteadyDetector {
	cfg = cfg.withDefaults()
	return &SteadyDetector{cfg: cfg, ring: make([]float64, cfg.Window)}
}

// Add feeds one value and reports whether the window ending with it is
// steady.
func (d *SteadyDetector) Add(v float64) bool {
	d.ring[d.n%len(d.ring)] = v
	d.n++
	if d.n < len(d.ring) {
		return false
	}
	w := make([]float64, len(d.ring))
	for i := range w {
		w[i] = d.ring[(d.n+i)%len(d.ring)]
	}
	_, r, s := windowStats(w)
	return r <= d.cfg.Range && s <= d.cfg.Slope
}

// Steady states are one of these.
const (
	steadyYes   = "steady"
	steadyNever = "never steady"
	steadyShort = "not enough data"
)

// SteadyState is the verdict on one series.
type SteadyState struct {
	State string
	// FromS is the start of the first steady window (seconds, on the
	// series' axis), when State is SteadyYes.
	FromS float64
	// Mean, RangeFrac and SlopeFrac describe that window (or, when never
	// steady, the window closest to the criteria).
	Mean, RangeFrac, SlopeFrac float64
	Samples, Window            int
}

// String reads like "steady from t=12s".
func (s SteadyState) String() string {
	switch s.State {
	case steadyYes:
		return fmt.Sprintf("steady from t=%.0fs", s.FromS)
	case steadyShort:
		return fmt.Sprintf("not enough data for steady state: %d samples, the window needs %d", s.Samples, s.Window)
	}
	return steadyNever
}

// steady applies the criteria to vs, sampled every interval seconds, with
// vs[i] the window ending at (i+1) x interval. The steady point is the
// first window that meets both criteria and whose level the rest of the
// series keeps: the mean from there to the end is within half the range
// limit of the window's mean, and the line fitted from there to the end
// meets the slope limit. A burst that later falls off a cliff, or a slow
// ramp, was not the steady state.
func steady(vs []float64, interval float64, cfg SteadyConfig) SteadyState {
	cfg = cfg.withDefaults()
	if interval <= 0 {
		interval = 1
	}
	st := SteadyState{Samples: len(vs), Window: cfg.Window}
	if len(vs) < cfg.Window {
		st.State = steadyShort
		return st
	}
	// Suffix sums give the mean from any point to the end.
	suffix := make([]float64, len(vs)+1)
	for i := len(vs) - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + vs[i]
	}
	best := math.Inf(1)
	for i := 0; i+cfg.Window <= len(vs); i++ {
		m, r, s := windowStats(vs[i : i+cfg.Window])
		if score := math.Max(r/cfg.Range, s/cfg.Slope); score < best {
			best = score
			st.Mean, st.RangeFrac, st.SlopeFrac = m, r, s
		}
		if r > cfg.Range || s > cfg.Slope {
			continue
		}
		rest := suffix[i] / float64(len(vs)-i)
		if math.Abs(rest-m) > cfg.Range/2*m {
			continue
		}
		if _, _, rs := windowStats(vs[i:]); rs > cfg.Slope {
			continue
		}
		st.State, st.FromS = steadyYes, float64(i)*interval
		st.Mean, st.RangeFrac, st.SlopeFrac = m, r, s
		return st
	}
	st.State = steadyNever
	return st
}

// UntilSteady sums what --until-steady did over a run: how many
// time-based tests ended early at steady state, and the seconds they
// measured against the seconds they were allowed (the test's runtime,
// which is --max-runtime under --until-steady, less fio's startdelay and
// thinktime, which fio spends outside the runtime it measures).
func UntilSteady(rs []result.Result) (ended, tests int, measuredS, limitS float64) {
	for i := range rs {
		r := &rs[i]
		if r.Status != "ok" || r.Test.RuntimeS <= 0 {
			continue
		}
		think, delay := r.Test.Waits()
		allowed := r.Test.RuntimeS - (think + delay).Seconds()
		if allowed <= 0 {
			allowed = r.Test.RuntimeS // waits a run would have refused
		}
		tests++
		m := r.RuntimeS()
		measuredS += m
		limitS += allowed
		if m < allowed-1 {
			ended++
		}
	}
	return ended, tests, measuredS, limitS
}

// SteadyStop is the rule of iolens run --until-steady: fed each sample's
// rate with the measured time so far, it says stop once the series is
// steady by the SNIA PTS criteria and at least minS seconds are measured.
func SteadyStop(minS float64) func(elapsedS, v float64) (bool, string) {
	d := newSteadyDetector(SteadyConfig{})
	return func(elapsedS, v float64) (bool, string) {
		if d.Add(v) && elapsedS >= minS {
			return true, "steady state"
		}
		return false, ""
	}
}

// UntilSteadyNote says what --until-steady saved over a run, in one
// line; "" when no test was time-based.
func UntilSteadyNote(rs []result.Result) string {
	ended, n, got, limit := UntilSteady(rs)
	if n == 0 || limit <= 0 {
		return ""
	}
	saved := max(limit-got, 0)
	return fmt.Sprintf("until-steady: %d of %d tests ended at steady state; %.0f s measured instead of %.0f s (saved %.0f s, %.0f%%)",
		ended, n, got, limit, saved, saved/limit*100)
}
