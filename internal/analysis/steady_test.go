package analysis

import (
	"testing"
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
	d := NewSteadyDetector(SteadyConfig{Window: 5})
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
	if d := NewSteadyDetector(SteadyConfig{Window: 5}); d.Add(1) || d.Add(1) {
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
