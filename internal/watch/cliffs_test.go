package watch

import (
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// TestCliffsIOPS: credit cliffs recorded on emulated disks (1500 IOPS of
// 4 KiB writes, then 300; the event log puts the burst's end at 11.7 to
// 11.8 s). Each is logged once.
func TestCliffsIOPS(t *testing.T) {
	fourK := func(iops []float64) []float64 {
		out := make([]float64, len(iops))
		for i, v := range iops {
			out[i] = v * 4096
		}
		return out
	}
	mb := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = x * 1e6
		}
		return out
	}
	journal := []float64{3, 602, 1500, 1280, 1495, 1554, 1503, 1500, 1500, 1500, 1497, 1266, 316, 284, 300, 316, 286, 300, 316, 300}
	partial := []float64{0, 455, 1500, 1500, 1500, 1500, 1502, 1499, 1500, 1500, 1500, 1142, 300, 300, 299, 298, 299, 300, 300}
	for _, tt := range []struct {
		name        string
		iops, bytes []float64
	}{
		// A journal commit's larger writes at t=17 make the throughput
		// plateau look like a ramp: only the IOPS series shows the cliff.
		{"journal", journal, mb([]float64{0.012, 2.466, 6.144, 5.243, 6.123, 6.365, 6.480, 6.144, 6.144, 6.144, 6.132, 5.706, 1.294, 1.163, 1.229, 1.294, 1.683, 1.229, 1.294, 1.229})},
		// Both series show it.
		{"clean", journal, fourK(journal)},
		// fio started 0.3 s before the end of the second interval: that
		// partial interval is no part of the burst's plateau.
		{"partial start", partial, fourK(partial)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dets := CliffDetectors(time.Second)("loop3")
			var got []result.Finding
			for i := range tt.iops {
				s := result.DeviceSample{T: float64(i + 1), WriteIOPS: tt.iops[i], WriteBWBytes: tt.bytes[i]}
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
			if at := *got[0].StartS; at < 11 || at > 12.5 {
				t.Errorf("cliff at t=%.2f, want about 11.8: %s", at, got[0].Summary)
			}
		})
	}
}
