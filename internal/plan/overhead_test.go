package plan

import (
	"math"
	"testing"
)

// TestOverhead: fio's start and stop around a step are learnt as the mean
// of what the steps took beyond their measurement, never less than the
// budget's own allowance, and a step that says nothing (no measurement,
// or less wall time than it measured) is left out.
func TestOverhead(t *testing.T) {
	var o overhead
	if got := o.seconds(); got != overheadS {
		t.Errorf("nothing seen: %.1f s, want the allowance %d s", got, overheadS)
	}
	o.observe(5, 4) // 1 s: below the allowance
	if got := o.seconds(); got != overheadS {
		t.Errorf("1 s seen: %.1f s, want the allowance %d s", got, overheadS)
	}
	o.observe(8, 4) // 4 s on a loaded host
	o.observe(7.5, 3)
	if got, want := o.seconds(), (1.0+4+4.5)/3; got != want {
		t.Errorf("1, 4 and 4.5 s seen: %.3f s, want their mean %.3f", got, want)
	}
	o.observe(3, 4)
	o.observe(10, 0)
	o.observe(-1, 2)
	if got, want := o.seconds(), (1.0+4+4.5)/3; got != want {
		t.Errorf("after steps that say nothing: %.3f s, want %.3f", got, want)
	}
}

// TestCoreMax: the core steps' lengths at a budget, each step running to
// its longest (a rate that never converges, its runtime the whole
// seconds of its longest) with ov seconds of fio's start and stop around
// it. All six fit from about 70 s on where fio starts and stops in 2 s,
// and from 80 s where it takes 3.5 s, none eating what fsync needs at
// least; at the default budget the first steps may take their 15 s.
func TestCoreMax(t *testing.T) {
	n := len(coreSteps())
	for _, tc := range []struct {
		left, ov float64
		fit      int     // core steps measured
		first    float64 // the first one's longest
	}{
		{left: 63, ov: 2, fit: n, first: 5.5},    // a 70 s budget after the layout
		{left: 72, ov: 3.5, fit: n, first: 5.25}, // 80 s, a slow fio
		// Below the least budget the five after it keep their least,
		// and the first step has no room.
		{left: 44, ov: 2, fit: n - 1, first: -1},
		{left: 115, ov: 2, fit: n, first: 14.17}, // 3 minutes, after the layout and the burst check
		{left: 400, ov: 2, fit: n, first: rateMaxS},
	} {
		left, fit := tc.left, 0
		for i := 0; i < n; i++ {
			m := coreMax(left, tc.ov, i, n)
			if i == 0 && math.Abs(m-tc.first) > 0.01 {
				t.Errorf("left %.0f s, fio's start and stop %.1f s: the first step may take %.2f s, want %.2f", tc.left, tc.ov, m, tc.first)
			}
			if m < rateMinS {
				continue
			}
			fit++
			left -= math.Floor(m) + rampS + tc.ov
		}
		if fit != tc.fit {
			t.Errorf("left %.0f s, fio's start and stop %.1f s: %d core steps measured, want %d", tc.left, tc.ov, fit, tc.fit)
		}
		if left < 10+tc.ov-1e-9 {
			t.Errorf("left %.0f s, fio's start and stop %.1f s: %.1f s left for fsync, want at least %.1f", tc.left, tc.ov, left, 10+tc.ov)
		}
	}
}
