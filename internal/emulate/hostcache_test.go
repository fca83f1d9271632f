package emulate

import (
	"testing"
	"time"

	"github.com/iolens/iolens/internal/limits"
)

// The emulator's readwrite cache and the limits verdict follow one
// arithmetic: seed 003's P20 behind a D8s_v3 never stalls, its P4 stalls
// when and for as long as limits.WriteBack says.
func TestCacheProfileAgreesWithLimits(t *testing.T) {
	iops, bps, bytes, err := HostCache("D8s_v3")
	if err != nil {
		t.Fatal(err)
	}
	// The defaults are the D8s_v3's cached limits and limits' backlog.
	if iops != DefaultCacheIOPS || bps != DefaultCacheBPS || bytes != DefaultCacheBytes {
		t.Errorf("D8s_v3 cache %g IOPS, %g B/s, %g B; defaults %d, %g, %d", iops, bps, bytes, DefaultCacheIOPS, DefaultCacheBPS, DefaultCacheBytes)
	}
	if _, _, _, err := HostCache("Standard_B2s"); err == nil {
		t.Error("a VM without host caching gave a cache")
	}
	const scale = 20
	for _, tc := range []struct {
		profile string
		stalls  bool
	}{{"azure:P20", false}, {"azure:P4", true}} {
		p, err := LookupProfile(tc.profile)
		if err != nil {
			t.Fatal(err)
		}
		s := Spec{Name: "c", Cache: CacheReadWrite, CacheIOPS: iops, CacheBPS: bps, CacheBytes: bytes, Scale: scale}
		p.Apply(&s)
		// The write-up predates credit bursting: drain at the baseline.
		s.StartEmpty = true
		cf, ok := CachePrediction(s, 1<<20)
		if !ok || cf.Grows != tc.stalls {
			t.Fatalf("%s: prediction %+v", tc.profile, cf)
		}
		// The same figures as the verdict on the catalog disk and VM.
		x, err := limits.MustDefault().ParseExpectation(tc.profile, "Standard_D8s_v3", nil, "readwrite")
		if err != nil {
			t.Fatal(err)
		}
		verdict, _ := x.HostCacheFill(1<<20, 0)
		if verdict.Grows != cf.Grows || !closeTo(verdict.FillSeconds/scale, cf.FillSeconds, 1e-9) || !closeTo(verdict.StallSeconds/scale, cf.StallSeconds, 1e-9) {
			t.Errorf("%s: verdict %+v, emulator's profile %+v (x%d)", tc.profile, verdict, cf, scale)
		}
		sim := newSim(s)
		if !tc.stalls {
			sim.run(60*time.Second, 0, 1e6, 1<<20)
			if st := sim.times(EventStallStart); len(st) != 0 {
				t.Errorf("%s stalls at %v", tc.profile, st)
			}
			continue
		}
		sim.run(time.Duration((cf.FillSeconds+cf.StallSeconds)*1.5*float64(time.Second)), 0, 1e6, 1<<20)
		st, en := sim.times(EventStallStart), sim.times(EventStallEnd)
		if len(st) == 0 || len(en) == 0 {
			t.Fatalf("%s: no stall (start %v, end %v)", tc.profile, st, en)
		}
		// A 100 ms tick, and StallIOPS of 1 MiB that the model lets in
		// while stalled.
		near(t, tc.profile+" fill", st[0], cf.FillSeconds, 0.2)
		trickle := cf.BacklogBytes / (cf.DrainBPS - StallIOPS*(1<<20))
		near(t, tc.profile+" stall", en[0]-st[0], trickle, 0.2+0.1*bps/cf.DrainBPS)
	}
}

func closeTo(a, b, rel float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= rel*max(1, a, b)
}
