package watch

import (
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// TestStallAtTheWorkloadsEnd: a writer at 20 MB/s stops early in an
// interval; the host shows a little iowait in it (its last IO, or another
// disk's), then the device is quiet with nothing waiting. That is the
// workload ending: the stall it opened is withdrawn, not reported. The
// same interval followed by the rate coming back is a stall, and so is a
// stall the device's own queue shows.
func TestStallAtTheWorkloadsEnd(t *testing.T) {
	busy := result.DeviceSample{WriteBWBytes: 20e6, WriteIOPS: 305, UtilPct: 0, QueueSize: 0.1}
	tail := result.DeviceSample{WriteBWBytes: 0.26e6, WriteIOPS: 4}
	quiet := result.DeviceSample{WriteBWBytes: 0.02e6, WriteIOPS: 2}
	queued := result.DeviceSample{WriteBWBytes: 0.26e6, WriteIOPS: 4, QueueSize: 4, InFlight: 4}
	// run feeds 20 busy intervals, then last with the host's iowait for
	// each, and counts the stalls kept and withdrawn.
	run := func(last []result.DeviceSample, iowait []float64) (kept, withdrawn int) {
		tr := newTracker("loop0", false, DefaultThresholds())
		var fs []finding
		for i := 0; i < 20; i++ {
			fs = append(fs, tr.step(float64(i+1), 1, busy, Host{IowaitPct: 90}, ceilingView{})...)
		}
		for i, s := range last {
			fs = append(fs, tr.step(float64(21+i), 1, s, Host{IowaitPct: iowait[i]}, ceilingView{})...)
		}
		for _, f := range fs {
			switch {
			case f.Kind != result.KindStall:
			case f.Phase == "end":
				kept++
			case f.Phase == result.PhaseWithdrawn:
				withdrawn++
			}
		}
		return kept, withdrawn
	}
	for _, c := range []struct {
		name            string
		last            []result.DeviceSample
		iowait          []float64
		kept, withdrawn int
	}{
		{"ends quiet", []result.DeviceSample{tail, quiet, quiet}, []float64{5, 0, 0}, 0, 1},
		{"comes back", []result.DeviceSample{tail, busy, busy}, []float64{5, 90, 90}, 1, 0},
		{"the device's own queue", []result.DeviceSample{queued, quiet, quiet}, []float64{5, 0, 0}, 1, 0},
		{"two intervals", []result.DeviceSample{tail, tail, quiet}, []float64{5, 5, 0}, 1, 0},
	} {
		kept, withdrawn := run(c.last, c.iowait)
		if kept != c.kept || withdrawn != c.withdrawn {
			t.Errorf("%s: %d stalls kept, %d withdrawn; want %d and %d", c.name, kept, withdrawn, c.kept, c.withdrawn)
		}
	}
}
