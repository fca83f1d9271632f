package plan_test

import (
	"math"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/emulate"
)

// A cache in front of a slow disk: 70% of reads hit in 1.2 ms, the rest
// miss and take 8 ms. The QD1 mean (about 3.2 ms) is neither; the model
// has both populations, with their shares and levels.
func TestDiagnoseHitMissLatency(t *testing.T) {
	hm := emulate.Dist{Hit: 1200 * time.Microsecond, Miss: 8 * time.Millisecond, HitRatio: 0.7}
	flat := emulate.Fixed(time.Millisecond)
	_, d := diagnoseOn(t, emulate.Spec{Name: "dg-hitmiss", RAM: true, Latency: &emulate.Latency{Read: hm, Write: flat, Flush: flat}}, 60*time.Second)
	r := d.Disk.Read
	if r == nil {
		t.Fatal("no read model")
	}
	// The emulated path adds time of its own to every IO (the latency
	// layer, on this host's CPU): the writes, a fixed 1 ms on the same
	// disk, measure it, and each population is its level plus that.
	base := 0.0
	if w := d.Disk.Write; w != nil && w.QD1LatencyNs > 1e6 {
		base = w.QD1LatencyNs - 1e6
	}
	m := r.QD1Modes
	if len(m) != 2 || math.Abs(m[0].Share-0.7) > 0.05 || !within(m[0].LatNs, 1.2e6+base, 0.15) || !within(m[1].LatNs, 8e6+base, 0.1) {
		t.Errorf("QD1 populations %+v (mean %.3g ms), want 70%% at 1.2 ms and 30%% at 8 ms, each plus the path's own %.2f ms", m, r.QD1LatencyNs/1e6, base/1e6)
	}
	t.Logf("the path's own time per IO (the fixed-latency writes' excess): %.2f ms", base/1e6)
	if w := d.Disk.Write; w != nil && w.QD1Modes != nil {
		t.Errorf("writes take a fixed 1 ms, yet two populations: %+v", w.QD1Modes)
	}
}

// One population with a tail (log-normal, p50 1 ms, p99 4 ms) is not two.
func TestDiagnoseOneLatencyPopulation(t *testing.T) {
	ln := emulate.Dist{Median: time.Millisecond, Pct: 99, Tail: 4 * time.Millisecond}
	_, d := diagnoseOn(t, emulate.Spec{Name: "dg-lognorm", RAM: true, Latency: &emulate.Latency{Read: ln, Write: ln, Flush: emulate.Fixed(time.Millisecond)}}, 60*time.Second)
	if r := d.Disk.Read; r == nil || r.QD1LatencyNs == 0 || r.QD1Modes != nil {
		t.Errorf("read %+v: want a QD1 figure and one population", r)
	}
	if w := d.Disk.Write; w != nil && w.QD1Modes != nil {
		t.Errorf("write populations %+v on a log-normal disk", w.QD1Modes)
	}
}
