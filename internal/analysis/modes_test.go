package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// draw fills a histogram with n latencies from f, seeded: the same
// histogram every run.
func draw(n int, f func(r *rand.Rand) float64) *result.Histogram {
	r := rand.New(rand.NewPCG(1, 2))
	var h result.Histogram
	for i := 0; i < n; i++ {
		h.Add(uint64(math.Max(f(r), 1)), 1)
	}
	return &h
}

// lognormal draws around median with the given p99.
func lognormal(median, p99 float64) func(*rand.Rand) float64 {
	sigma := math.Log(p99/median) / 2.3263
	return func(r *rand.Rand) float64 { return median * math.Exp(sigma*r.NormFloat64()) }
}

// mix draws from a with probability pa, else from b.
func mix(pa float64, a, b func(*rand.Rand) float64) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 {
		if r.Float64() < pa {
			return a(r)
		}
		return b(r)
	}
}

// Two populations are found with their shares and levels (the issue's
// cache: 70% at about 1.2 ms, 30% at about 8 ms; and others); one
// population, however long its tail, gives none, and so do a minor
// population under 5%, levels under 2.5 times apart and too few IOs.
func TestLatencyModes(t *testing.T) {
	for _, c := range []struct {
		name          string
		h             *result.Histogram
		share, lo, hi float64 // 0: no modes
	}{
		{"cache 70/30 at 1.2 and 8 ms", draw(20000, mix(0.7, lognormal(1.2e6, 1.6e6), lognormal(8e6, 11e6))), 0.7, 1.2e6, 8e6},
		{"cache 90/10 at 0.2 and 5 ms", draw(5000, mix(0.9, lognormal(0.2e6, 0.3e6), lognormal(5e6, 9e6))), 0.9, 0.2e6, 5e6},
		{"fixed hit and miss (the emulator's)", draw(3000, mix(0.5, func(*rand.Rand) float64 { return 300e3 }, func(*rand.Rand) float64 { return 4e6 })), 0.5, 300e3, 4e6},
		{"a slow majority", draw(8000, mix(0.2, lognormal(100e3, 150e3), lognormal(2e6, 3e6))), 0.2, 100e3, 2e6},
		{"log-normal p50 1 ms, p99 4 ms", draw(50000, lognormal(1e6, 4e6)), 0, 0, 0},
		{"log-normal p50 1 ms, p99 30 ms", draw(50000, lognormal(1e6, 30e6)), 0, 0, 0},
		{"uniform 2 ms ± 0.5 ms", draw(20000, func(r *rand.Rand) float64 { return 1.5e6 + r.Float64()*1e6 }), 0, 0, 0},
		{"exponential service times", draw(20000, func(r *rand.Rand) float64 { return 50e3 + r.ExpFloat64()*1e6 }), 0, 0, 0},
		{"3% misses: a tail", draw(20000, mix(0.97, lognormal(1e6, 1.3e6), lognormal(8e6, 10e6))), 0, 0, 0},
		{"two levels 2 times apart", draw(20000, mix(0.5, lognormal(1e6, 1.1e6), lognormal(2e6, 2.2e6))), 0, 0, 0},
		{"too few IOs", draw(300, mix(0.5, lognormal(1e6, 1.1e6), lognormal(8e6, 9e6))), 0, 0, 0},
	} {
		m := LatencyModes(c.h)
		if c.share == 0 {
			if m != nil {
				t.Errorf("%s: %+v, want one population", c.name, m)
			}
			continue
		}
		if len(m) != 2 || math.Abs(m[0].Share-c.share) > 0.02 || math.Abs(m[0].Share+m[1].Share-1) > 1e-9 ||
			math.Abs(m[0].LatNs/c.lo-1) > 0.05 || math.Abs(m[1].LatNs/c.hi-1) > 0.05 {
			t.Errorf("%s: %+v, want %.0f%% at %.3g ns and the rest at %.3g ns", c.name, m, c.share*100, c.lo, c.hi)
		}
	}
	if LatencyModes(nil) != nil || LatencyModes(&result.Histogram{}) != nil {
		t.Error("modes of nothing")
	}
}
