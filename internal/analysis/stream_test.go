package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// series is a synthetic 1 s series: values[i] is the window ending at
// t=i+1.
type series []float64

func flat(n int, v float64) series {
	s := make(series, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// noisy multiplies each value by a normal factor with the given relative
// sd, from a fixed seed.
func (s series) noisy(rel float64, seed uint64) series {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make(series, len(s))
	for i, v := range s {
		out[i] = math.Max(0, v*(1+rel*r.NormFloat64()))
	}
	return out
}

func cat(parts ...series) series {
	var out series
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func ramp(n int, from, to float64) series {
	s := make(series, n)
	for i := range s {
		s[i] = from + (to-from)*float64(i)/float64(n-1)
	}
	return s
}

func runDetectors(s series, dev func(i int) *result.DeviceSample) (stalls, cliffs []result.Finding) {
	sd := newStallDetector(StallConfig{})
	cd := NewCliffDetector(CliffConfig{})
	for i, v := range s {
		var d *result.DeviceSample
		if dev != nil {
			d = dev(i)
		}
		t := float64(i + 1)
		stalls = append(stalls, sd.Add(t, v, d)...)
		cliffs = append(cliffs, cd.Add(t, v, d)...)
	}
	stalls = append(stalls, sd.Flush()...)
	cliffs = append(cliffs, cd.Flush()...)
	return stalls, cliffs
}

func TestStallDetectorPeriodicStalls(t *testing.T) {
	// 20 s at 100 MB/s then 5 s at zero, four times; the device holds a
	// queue and moves nothing during the stalls (seed 003's iostat).
	var s series
	for range 4 {
		s = cat(s, flat(20, 100e6).noisy(0.05, uint64(len(s))), flat(5, 0))
	}
	dev := func(i int) *result.DeviceSample {
		if s[i] == 0 {
			return &result.DeviceSample{QueueSize: 9, UtilPct: 99.9, InFlight: 9}
		}
		return &result.DeviceSample{WriteBWBytes: s[i], QueueSize: 2, UtilPct: 60}
	}
	stalls, cliffs := runDetectors(s, dev)
	if len(cliffs) != 0 {
		t.Errorf("cliffs on a stall pattern: %+v", cliffs)
	}
	if len(stalls) != 4 {
		t.Fatalf("got %d stalls, want 4: %+v", len(stalls), stalls)
	}
	for k, f := range stalls {
		wantStart := float64(20 + 25*k)
		if *f.StartS != wantStart || *f.DurationS != 5 {
			t.Errorf("stall %d: start %v dur %v, want %v and 5", k, *f.StartS, *f.DurationS, wantStart)
		}
		if f.Severity != SevWarn || f.Evidence["device_queue_mean"] != 9 {
			t.Errorf("stall %d: severity %s evidence %v", k, f.Severity, f.Evidence)
		}
	}
}

func TestStallDetectorGapsAreZero(t *testing.T) {
	sd := newStallDetector(StallConfig{Unit: UnitIOPS})
	var got []result.Finding
	for i := 1; i <= 10; i++ {
		got = append(got, sd.Add(float64(i), 1000, nil)...)
	}
	// fio writes no log row for windows without completions: t jumps
	// from 10 to 14, three empty windows.
	for i := 14; i <= 20; i++ {
		got = append(got, sd.Add(float64(i), 1000, nil)...)
	}
	got = append(got, sd.Flush()...)
	if len(got) != 1 || *got[0].StartS != 10 || *got[0].DurationS != 3 {
		t.Fatalf("got %+v, want one 3 s stall from t=10", got)
	}
}

func TestStallDetectorIdleApp(t *testing.T) {
	s := cat(flat(10, 50e6), flat(4, 0), flat(10, 50e6))
	idle := func(i int) *result.DeviceSample { return &result.DeviceSample{UtilPct: 1} }
	stalls, _ := runDetectors(s, idle)
	if len(stalls) != 1 || stalls[0].Severity != SevInfo {
		t.Fatalf("want one info-level stall for an idle device, got %+v", stalls)
	}
}

func TestCliffDetector(t *testing.T) {
	// 60 s at 125 MB/s (burst), then 25 MB/s for 120 s.
	s := cat(flat(60, 125e6), flat(120, 25e6)).noisy(0.04, 7)
	stalls, cliffs := runDetectors(s, nil)
	if len(stalls) != 0 {
		t.Errorf("stalls on a cliff: %+v", stalls)
	}
	if len(cliffs) != 1 {
		t.Fatalf("got %d cliffs, want 1: %+v", len(cliffs), cliffs)
	}
	c := cliffs[0]
	if *c.DurationS != 60 || math.Abs(c.Evidence["burst_rate"]/125e6-1) > 0.03 || math.Abs(c.Evidence["plateau_rate"]/25e6-1) > 0.05 {
		t.Errorf("cliff %+v: want a 60 s burst at 125 MB/s then 25 MB/s", c)
	}
}

func TestDetectorsQuietOnNoiseRampAndDip(t *testing.T) {
	for name, s := range map[string]series{
		"noise":      flat(3600, 80e6).noisy(0.08, 3),
		"flat":       flat(300, 80e6),
		"ramp down":  ramp(120, 100e6, 40e6).noisy(0.03, 4),
		"ramp up":    ramp(120, 20e6, 100e6).noisy(0.03, 5),
		"short dip":  cat(flat(30, 80e6), flat(6, 45e6), flat(30, 80e6)),
		"one-s zero": cat(flat(30, 80e6), flat(1, 0), flat(30, 80e6)),
	} {
		stalls, cliffs := runDetectors(s, nil)
		if len(stalls)+len(cliffs) != 0 {
			t.Errorf("%s: findings on a series without stall or cliff: %+v %+v", name, stalls, cliffs)
		}
	}
}

func TestStallDetectorThrottledAboveDevice(t *testing.T) {
	// A cgroup throttle holds bios before they reach the device: the
	// device shows nothing queued while fio has its whole queue waiting.
	s := cat(flat(10, 50e6), flat(4, 0), flat(10, 50e6))
	sd := newStallDetector(StallConfig{Loaded: true})
	var got []result.Finding
	for i, v := range s {
		got = append(got, sd.Add(float64(i+1), v, &result.DeviceSample{UtilPct: 0.5})...)
	}
	if len(got) != 1 || got[0].Severity != SevWarn || !strings.Contains(got[0].Summary, "throttle") {
		t.Fatalf("want a warn-level throttle stall, got %+v", got)
	}
}

func TestStallDetectorTrickleDominates(t *testing.T) {
	// A write cache: 5 s at 80 MB/s, then 15 s of a 1 MB/s trickle
	// through the throttle, three times. Stalls fill 75% of the time.
	var s series
	for range 3 {
		s = cat(s, flat(5, 80e6), flat(15, 1e6))
	}
	stalls, cliffs := runDetectors(s, nil)
	if len(stalls) != 3 || len(cliffs) != 0 {
		t.Fatalf("want 3 stalls and no cliff, got %+v %+v", stalls, cliffs)
	}
	for k, f := range stalls {
		if *f.StartS != float64(5+20*k) || *f.DurationS != 15 {
			t.Errorf("stall %d: %v s from %v", k, *f.DurationS, *f.StartS)
		}
	}
	// One spike (page cache) before the real rate: not a reason to call
	// the real rate a stall.
	stalls, cliffs = runDetectors(cat(flat(2, 2e9), flat(60, 100e6).noisy(0.05, 9)), nil)
	if len(stalls)+len(cliffs) != 0 {
		t.Errorf("findings after a spike: %+v %+v", stalls, cliffs)
	}
}

func TestCliffDetectorSurvivesADip(t *testing.T) {
	// Measured on an emulated gp2-style disk while other IO ran: a dip
	// and its catch-up just before the credits ran out.
	s := cat(flat(12, 6.1e6), series{5.4e6, 2.8e6, 6.6e6, 5.0e6}, flat(18, 1.2e6))
	_, cliffs := runDetectors(s, nil)
	if len(cliffs) != 1 || *cliffs[0].DurationS != 16 {
		t.Fatalf("want one cliff after a 16 s burst, got %+v", cliffs)
	}
}

func TestCliffDetectorSlowStart(t *testing.T) {
	// Measured under load on an emulated gp2-style disk: the first
	// seconds ran slow, then the burst rate, then the baseline. The burst
	// is counted from where its rate began.
	s := cat(series{4.0e6, 2.3e6, 2.1e6, 2.4e6}, flat(14, 6.1e6).noisy(0.03, 11), flat(17, 1.2e6))
	_, cliffs := runDetectors(s, nil)
	if len(cliffs) != 1 {
		t.Fatalf("want one cliff, got %+v", cliffs)
	}
	c := cliffs[0]
	if *c.StartS != 18 || *c.DurationS != 14 || math.Abs(c.Evidence["burst_rate"]/6.1e6-1) > 0.03 {
		t.Errorf("cliff at %v after %v s at %.0f B/s: want at 18 after 14 s at 6.1 MB/s", *c.StartS, *c.DurationS, c.Evidence["burst_rate"])
	}
}

func TestCliffDetectorLoadedMachine(t *testing.T) {
	// Measured on a loaded CI machine (emulated gp2-style disk, 1500
	// then 300 IOPS of 4 KiB): a slow start, dips, and a drop that falls
	// inside one second, which ran partly at each rate.
	s := series{5.6e6, 3.7e6, 3.2e6, 4.0e6, 5.7e6, 6.1e6, 6.1e6, 6.1e6, 6.1e6, 6.1e6, 6.2e6, 6.3e6, 5.9e6, 6.6e6, 3.6e6, 2.9e6, 5.3e6, 4.8e6, 3.0e6}
	s = cat(s, flat(15, 1.2e6))
	_, cliffs := runDetectors(s, nil)
	if len(cliffs) != 1 {
		t.Fatalf("want one cliff, got %+v", cliffs)
	}
	c := cliffs[0]
	if at := *c.StartS; at < 18 || at > 19 {
		t.Errorf("cliff placed at t=%.2f, want inside the second from 18 to 19", at)
	}
	if lo := c.Evidence["plateau_rate"]; math.Abs(lo/1.2e6-1) > 0.02 {
		t.Errorf("plateau %.0f B/s, want 1.2 MB/s (the straddling second left out)", lo)
	}
	t.Logf("%s", c.Summary)
}

func TestCliffDetectorSettlingBelow(t *testing.T) {
	// A cap lowered from 1000 to 250 IOPS: the first interval after it
	// ran below the new cap (the throttle's slice restarting), then the
	// new cap held.
	s := cat(flat(20, 1000).noisy(0.02, 3), series{186}, flat(14, 250).noisy(0.02, 4))
	cd := NewCliffDetector(CliffConfig{Unit: UnitIOPS})
	var cliffs []result.Finding
	for i, v := range s {
		cliffs = append(cliffs, cd.Add(float64(i+1), v, nil)...)
	}
	if len(cliffs) != 1 || *cliffs[0].StartS != 20 || math.Abs(cliffs[0].Evidence["plateau_rate"]/250-1) > 0.02 {
		t.Fatalf("want one cliff at t=20 to 250 IOPS, got %+v", cliffs)
	}
}

func TestCliffDetectorWarmUp(t *testing.T) {
	// Measured in CI: four slow seconds (other packages compiling), not
	// slow enough to count as a step up, then the burst and the cliff.
	s := series{5.4e6, 4.3e6, 4.8e6, 4.3e6, 6.4e6, 6.1e6, 6.2e6, 6.1e6, 6.1e6, 6.2e6, 6.3e6, 6.5e6, 6.0e6, 6.2e6, 6.0e6, 6.3e6, 1.7e6}
	s = cat(s, flat(18, 1.2e6))
	_, cliffs := runDetectors(s, nil)
	if len(cliffs) != 1 {
		t.Fatalf("want one cliff, got %+v", cliffs)
	}
	c := cliffs[0]
	if at := *c.StartS; at < 16 || at > 17 {
		t.Errorf("cliff placed at t=%.2f, want within the second from 16 to 17", at)
	}
	if hi := c.Evidence["burst_rate"]; math.Abs(hi/6.14e6-1) > 0.05 {
		t.Errorf("burst rate %.0f B/s, want about 6.14 MB/s (1500 IOPS of 4 KiB)", hi)
	}
	t.Logf("%s", c.Summary)
}

// A short burst at host speed, then a write cache's cycles: 10 s at its
// drain rate, 15 s stalled, four times. Each stall is judged against the
// level it falls from and returns to (the drain rate), not the burst's
// seconds: four stalls of 15 s, not one of 100 s.
func TestStallsAfterABurstCycle(t *testing.T) {
	s := flat(6, 3708e6)
	for range 4 {
		s = cat(s, flat(10, 150e6).noisy(0.03, uint64(len(s))), flat(15, 0.1e6))
	}
	s = cat(s, flat(10, 150e6))
	stalls, _ := runDetectors(s, nil)
	if len(stalls) != 4 {
		t.Fatalf("want 4 stalls, got %d: %+v", len(stalls), stalls)
	}
	for k, f := range stalls {
		if want := float64(16 + 25*k); math.Abs(*f.StartS-want) > 1 || math.Abs(*f.DurationS-15) > 1 {
			t.Errorf("stall %d: %v s from %v, want 15 s from %v", k, *f.DurationS, *f.StartS, want)
		}
		if ref := f.Evidence["reference"]; ref < 120e6 || ref > 180e6 {
			t.Errorf("stall %d judged against %.0f MB/s, want the 150 MB/s it fell from", k, ref/1e6)
		}
	}
	// The whole story of such a result: one burst, then one stall a cycle.
	pts := make([]Point, len(s))
	for i, v := range s {
		pts[i] = Point{T: float64(i + 1), BWBytes: v, IOPS: v / 4096}
	}
	var n int
	for _, f := range seriesFindings(pts, 1, true) {
		if f.Kind == KindStall {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d stalls in the result's findings, want 4", n)
	}
}

// A credit bucket running dry on a loaded machine: 3,000 IOPS for 6 s,
// two slow seconds at 40% of the baseline (one window at 20%), then the
// 365 IOPS baseline. Against the burst those seconds are under a tenth;
// against the plateau the rate returns to they are not: one cliff, no
// stall beside it.
func TestNoStallBesideACliffAboveItsPlateau(t *testing.T) {
	s := cat(flat(6, 3000*4096), []float64{0.3e6, 0.9e6}, flat(40, 365*4096).noisy(0.05, 7))
	pts := make([]Point, len(s))
	for i, v := range s {
		pts[i] = Point{T: float64(i + 1), BWBytes: v, IOPS: v / 4096}
	}
	var cliffs int
	for _, f := range seriesFindings(pts, 1, true) {
		switch f.Kind {
		case KindStall:
			t.Errorf("stall beside the cliff: %s", f.Summary)
		case KindCliff:
			cliffs++
		}
	}
	if cliffs != 1 {
		t.Errorf("%d cliffs, want 1", cliffs)
	}
}
