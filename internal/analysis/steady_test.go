package analysis

import (
	"math"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

func TestSteadyWindowCriteria(t *testing.T) {
	// Worked by hand for a 5-sample window.
	for _, c := range []struct {
		w                 []float64
		mean, rng, excurs float64
	}{
		{[]float64{100, 100, 100, 100, 100}, 100, 0, 0},
		// slope 5 per sample, excursion 4*5 = 20 over a mean of 110.
		{[]float64{100, 105, 110, 115, 120}, 110, 20.0 / 110, 20.0 / 110},
		// no trend: slope 0, range 20/100.
		{[]float64{90, 110, 100, 110, 90}, 100, 0.2, 0},
	} {
		m, r, s := windowStats(c.w)
		if !near(m, c.mean, 1e-9) || !near(r, c.rng, 1e-9) || !near(s, c.excurs, 1e-9) {
			t.Errorf("windowStats(%v) = %v %v %v", c.w, m, r, s)
		}
	}
}

func TestSteadyDetectorOnline(t *testing.T) {
	d := newSteadyDetector(SteadyConfig{Window: 5})
	in := []float64{10, 40, 70, 95, 100, 101, 99, 100, 102, 100}
	first := -1
	for i, v := range in {
		if d.Add(v) && first < 0 {
			first = i
		}
	}
	// Samples 3..7 (95 100 101 99 100): range 6/99, fitted slope 0.9 per
	// sample, excursion 3.6/99. The window before it holds the 70.
	if first != 7 {
		t.Errorf("steady at sample %d, want 7", first)
	}
	if d := newSteadyDetector(SteadyConfig{Window: 5}); d.Add(1) || d.Add(1) {
		t.Error("steady before a full window")
	}
}

// SteadyStop ends a flat series once its window is full and the minimum
// time has passed, and never a ramp.
func TestSteadyStop(t *testing.T) {
	stop := SteadyStop(25)
	for i := 1; i <= 40; i++ {
		ok, why := stop(float64(i), 1000)
		if want := i >= 25; ok != want {
			t.Fatalf("flat series at %d s: stop %v, want %v", i, ok, want)
		}
		if ok && why == "" {
			t.Error("no reason given")
		}
	}
	ramp := SteadyStop(0)
	for i := 1; i <= 60; i++ {
		if ok, _ := ramp(float64(i), float64(100*i)); ok {
			t.Fatalf("a ramp stopped at %d s", i)
		}
	}
}

// TestUntilSteadyWaits: fio spends startdelay and thinktime outside the
// runtime it measures, so a test with them that ran its course measures
// less than its runtime and did not end early; the seconds allowed are
// the runtime less those waits.
func TestUntilSteadyWaits(t *testing.T) {
	test := func(runtimeS, measuredS float64, opts ...result.Option) result.Result {
		return result.Result{Status: "ok", Test: result.TestSpec{Name: "t", RuntimeS: runtimeS, Options: opts},
			Read: &result.DirResult{IOPS: 1, RuntimeMs: int64(measuredS * 1000)}}
	}
	delay := result.Option{Key: "startdelay", Value: "5"}
	think := result.Option{Key: "thinktime", Value: "2s"}
	for _, c := range []struct {
		name                string
		r                   result.Result
		ended               int
		measuredS, allowedS float64
	}{
		{"ran its course", test(60, 59.6), 0, 59.6, 60},
		{"ended at steady state", test(60, 20), 1, 20, 60},
		{"startdelay 5 s, ran its course", test(60, 54.8, delay), 0, 54.8, 55},
		{"thinktime 2 s, ran its course", test(60, 57.5, think), 0, 57.5, 58},
		{"both, ran its course", test(60, 52.9, delay, think), 0, 52.9, 53},
		{"both, ended at steady state", test(60, 30, delay, think), 1, 30, 53},
	} {
		ended, n, m, allowed := UntilSteady([]result.Result{c.r})
		if ended != c.ended || n != 1 || math.Abs(m-c.measuredS) > 1e-9 || math.Abs(allowed-c.allowedS) > 1e-9 {
			t.Errorf("%s: ended %d of %d, %.1f s of %.1f s; want ended %d of 1, %.1f s of %.1f s", c.name, ended, n, m, allowed, c.ended, c.measuredS, c.allowedS)
		}
	}
}
