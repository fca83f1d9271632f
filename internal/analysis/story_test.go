package analysis

import (
	"fmt"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

func kindsOf(fs []result.Finding) (stalls, cliffs int) {
	for _, f := range fs {
		switch f.Kind {
		case KindStall:
			stalls++
		case KindCliff:
			cliffs++
		}
	}
	return
}

func points(s series, iv float64) []Point {
	out := make([]Point, len(s))
	for i, v := range s {
		out[i] = Point{T: float64(i+1) * iv, IOPS: v, BWBytes: v * 4096}
	}
	return out
}

// One story per event: a gp2 volume whose writes fall tenfold when its
// burst credits run out (3,000 to 300 IOPS, exactly 10 to 1) has one
// cliff, and its lower plateau is no stall, even where its noise dips
// under a tenth of the burst rate.
func TestCliffPlateauIsNoStall(t *testing.T) {
	for _, c := range []struct {
		name string
		s    series
		iv   float64
	}{
		{"gp2 1 s", cat(flat(20, 3000), flat(40, 300)).noisy(0.05, 7), 1},
		{"gp2 250 ms", cat(flat(80, 3000), flat(160, 300)).noisy(0.08, 9), 0.25},
		{"ten to one, slightly under", cat(flat(20, 3000), flat(40, 290)).noisy(0.03, 3), 1},
	} {
		fs := seriesFindings(points(c.s, c.iv), c.iv, true)
		stalls, cliffs := kindsOf(fs)
		if stalls != 0 || cliffs != 1 {
			t.Errorf("%s: %d stalls and %d cliffs, want 0 and 1: %v", c.name, stalls, cliffs, fs)
		}
	}
}

// A collapse far below the plateau it came from is still a stall, and a
// collapse that recovers is one; neither hides a cliff.
func TestStallsBesideACliff(t *testing.T) {
	s := cat(flat(20, 3000), flat(20, 300), flat(5, 0), flat(20, 300)).noisy(0.03, 5)
	fs := seriesFindings(points(s, 1), 1, true)
	if stalls, cliffs := kindsOf(fs); stalls != 1 || cliffs != 1 {
		t.Errorf("%d stalls and %d cliffs, want 1 and 1: %v", stalls, cliffs, fs)
	}
	s = cat(flat(30, 3000), flat(5, 0), flat(30, 3000)).noisy(0.03, 6)
	fs = seriesFindings(points(s, 1), 1, true)
	if stalls, cliffs := kindsOf(fs); stalls != 1 || cliffs != 0 {
		t.Errorf("recovering collapse: %d stalls and %d cliffs, want 1 and 0: %v", stalls, cliffs, fs)
	}
}

// A sweep whose plateau fio's CPU sets is CPU-bound, not an IOPS cap,
// and its limit findings say the same: both are read off one model.
func TestSweepRegimeFollowsTheModel(t *testing.T) {
	var rs []*result.Result
	for _, q := range []struct {
		qd   int
		iops float64
		cpu  float64
	}{{1, 14000, 30}, {2, 27000, 55}, {4, 55000, 80}, {8, 68000, 97}, {16, 70000, 99}} {
		r := &result.Result{RunID: "r", Status: "ok", Test: result.TestSpec{Name: fmt.Sprint("qd", q.qd), RW: "randread", BlockSize: 4096, IODepth: q.qd, NumJobs: 1, Direct: true},
			Read: &result.DirResult{IOPS: q.iops, BWBytes: q.iops * 4096, RuntimeMs: 10000, Lat: result.Latency{N: 1000, MeanNs: float64(q.qd) / q.iops * 1e9}},
			Fio:  &result.FioInfo{Jobs: 1, CPUPct: q.cpu, UsrCPUPct: q.cpu / 2, SysCPUPct: q.cpu / 2}}
		rs = append(rs, r)
	}
	sw, ok := AnalyzeSweep("randread-4k", rs, nil)
	if !ok || sw.Regime != regimeCPU || sw.code() != result.CodeSweepCPU {
		t.Errorf("regime %q (%v), want CPU-bound", sw.Regime, ok)
	}
	for _, r := range rs[3:] {
		if fs := LimitFindings(r, rs); len(fs) != 1 || fs[0].Code != result.CodeCPU {
			t.Errorf("%s: %+v, want cpu as the sweep says", r.Test.Name, fs)
		}
	}
}
