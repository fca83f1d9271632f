package watch

import (
	"testing"
	"time"

	"github.com/iolens/iolens/internal/bench"
)

// TestCliffsIOPS: a credit cliff recorded on an emulated disk (1500 IOPS
// of 4 KiB writes, then 300). A journal commit's larger writes at t=17
// make the throughput plateau look like a ramp, so only the IOPS series
// shows the cliff; on a clean series both do, and it is logged once.
func TestCliffsIOPS(t *testing.T) {
	iops := []float64{3, 602, 1500, 1280, 1495, 1554, 1503, 1500, 1500, 1500, 1497, 1266, 316, 284, 300, 316, 286, 300, 316, 300}
	mbs := []float64{0.012, 2.466, 6.144, 5.243, 6.123, 6.365, 6.480, 6.144, 6.144, 6.144, 6.132, 5.706, 1.294, 1.163, 1.229, 1.294, 1.683, 1.229, 1.294, 1.229}
	for _, tt := range []struct {
		name  string
		bytes func(i int) float64
	}{
		{"journal", func(i int) float64 { return mbs[i] * 1e6 }},
		{"clean", func(i int) float64 { return iops[i] * 4096 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dets := CliffDetectors(time.Second)("loop3")
			var got []bench.Finding
			for i := range iops {
				s := bench.DeviceSample{T: float64(i + 1), WriteIOPS: iops[i], WriteBWBytes: tt.bytes(i)}
				for _, d := range dets {
					got = append(got, d.Add(s.T, s.WriteBWBytes, &s)...)
				}
			}
			for _, d := range dets {
				got = append(got, d.Flush()...)
			}
			if len(got) != 1 {
				t.Fatalf("%d cliffs, want 1: %+v", len(got), got)
			}
			// The burst ended at t=11.8 by the emulator's event log.
			if at := *got[0].StartS; at < 11 || at > 12.5 {
				t.Errorf("cliff at t=%.2f, want about 11.8: %s", at, got[0].Summary)
			}
		})
	}
}
