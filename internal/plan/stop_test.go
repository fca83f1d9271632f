package plan

import (
	"math"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
)

// feed runs a stop rule over 250 ms samples of rate(t) and returns when it
// stopped (-1: never).
func feed(stop runner.StopRule, maxS float64, rate func(t float64) float64) float64 {
	var ios float64
	for t := 0.25; t <= maxS+1e-9; t += 0.25 {
		r := rate(t)
		ios += r * 0.25
		if ok, _ := stop(runner.Status{Elapsed: t, Interval: 0.25, IOPS: r, MeanIOPS: ios / t}); ok {
			return t
		}
	}
	return -1
}

func TestConverged(t *testing.T) {
	// A throttle: a flat mean, with the 2-or-3-slices aliasing of 250 ms
	// windows on a 100 ms dispatch.
	alias := func(t float64) float64 { return 3000 * (1 + 0.2*math.Sin(t*7)) }
	if at := feed(Converged(3, 0.02), 15, alias); at < 3 || at > 6 {
		t.Errorf("a flat throttle stopped at %v s, want soon after 3 s", at)
	}
	// Still ramping up: never within 15 s.
	ramp := func(t float64) float64 { return 1000 + 200*t }
	if at := feed(Converged(3, 0.02), 15, ramp); at != -1 {
		t.Errorf("a ramp stopped at %v s", at)
	}
	// A step down early on (credits ran out): not while the halves of
	// the measurement disagree.
	step := func(t float64) float64 {
		if t > 2 {
			return 300
		}
		return 3000
	}
	if at := feed(Converged(3, 0.02), 8, step); at != -1 {
		t.Errorf("a cliff stopped the rate test at %v s", at)
	}
}

func hist(latNs map[uint64]uint64) *result.Histogram {
	h := result.HistogramOf(latNs)
	return &h
}

func TestQuantileSide(t *testing.T) {
	for _, c := range []struct {
		name           string
		h              *result.Histogram
		above, decided bool
	}{
		{"300 fast syncs: p99 certainly below", hist(map[uint64]uint64{1e6: 300}), false, true},
		{"100 fast syncs: too few to say", hist(map[uint64]uint64{1e6: 100}), false, false},
		{"5% slow: certainly above", hist(map[uint64]uint64{1e6: 950, 20e6: 50}), true, true},
		{"1% slow of 1000: undecided", hist(map[uint64]uint64{1e6: 990, 20e6: 10}), false, false},
		{"0.2% slow of 5000: below", hist(map[uint64]uint64{1e6: 4990, 20e6: 10}), false, true},
	} {
		above, decided := quantileSide(c.h, 10e6)
		if above != c.above || decided != c.decided {
			t.Errorf("%s: above %v decided %v, want %v %v", c.name, above, decided, c.above, c.decided)
		}
	}
}

func TestCliffSeen(t *testing.T) {
	stop := CliffSeen()
	at := feed(stop, 60, func(t float64) float64 {
		if t > 20 {
			return 300
		}
		return 3000
	})
	// The detector needs 10 s of the lower plateau, then 3 s more.
	if at < 30 || at > 36 {
		t.Errorf("stopped at %v s, want about 33 s", at)
	}
	if at := feed(CliffSeen(), 40, func(float64) float64 { return 3000 }); at != -1 {
		t.Errorf("a flat write stopped at %v", at)
	}
}

func TestParseReasonsAreSaid(t *testing.T) {
	ok, why := Converged(0, 0.02)(runner.Status{Elapsed: 3, MeanIOPS: 1, IOPS: 1})
	if ok || why != "" {
		t.Errorf("one sample: %v %q", ok, why)
	}
	stop := Converged(1, 0.5)
	var last string
	for i := 1; i <= 20; i++ {
		if ok, why := stop(runner.Status{Elapsed: float64(i) * 0.25, MeanIOPS: 100, IOPS: 100}); ok {
			last = why
			break
		}
	}
	if !strings.Contains(last, "known to 50%") {
		t.Errorf("reason %q", last)
	}
}

// Every test the plan may run passes the runner's checks, so a target is
// sized and vetted for all of them before the first IO.
func TestSpecsPassTheRunnersChecks(t *testing.T) {
	for _, s := range Specs() {
		if err := runner.CheckSpec(s); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
}
