package promhist

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/watch"
)

// feed gives a ceilings detector n intervals of 1 s from the rate
// functions and returns its ceilings.
func feed(n int, s func(i int) result.DeviceSample, iowait func(i int) float64) []Ceiling {
	return feedBeside(n, s, iowait, 0)
}

// feedBeside is feed on a host whose other disks are busy others % of
// each interval, summed.
func feedBeside(n int, s func(i int) result.DeviceSample, iowait func(i int) float64, others float64) []Ceiling {
	c := newCeilings("sdb", watch.DefaultThresholds())
	t0 := date("2026-03-01T14:00:00Z")
	for i := 1; i <= n; i++ {
		smp := s(i)
		sys := &result.SystemSample{IowaitPct: iowait(i)}
		c.add(t0.Add(time.Duration(i)*time.Second), 1, &smp, watch.StateBusy, sys, -1, others)
	}
	return c.flush()
}

func writes(bw, reqBytes float64) result.DeviceSample {
	return result.DeviceSample{WriteBWBytes: bw, WriteIOPS: bw / reqBytes, UtilPct: 40}
}

// TestCeilings: a flat rate with IO waiting is a ceiling at its mean,
// whatever the counting noise of whole requests; a flat rate with
// nothing waiting, a ramp, a wandering rate or a short plateau is not.
func TestCeilings(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	waiting := func(int) float64 { return 40 }
	idle := func(int) float64 { return 0 }
	// 20 MB/s in 1 MiB requests: 19 or 20 whole requests a second.
	quantized := func(i int) result.DeviceSample {
		n := math.Floor(20e6/(1<<20) + rnd.Float64())
		return writes(n*(1<<20), 1<<20)
	}
	cs := feed(60, quantized, waiting)
	if len(cs) != 1 || cs[0].Code != result.CodeBandwidthCap || cs[0].Dir != "write" || math.Abs(cs[0].BWBytes/20e6-1) > 0.02 {
		t.Fatalf("quantized 20 MB/s: %+v", cs)
	}
	// The same flat rate beside other disks busy 60% of the time: the
	// host's 40% iowait may all be theirs, and a rate of its own pace
	// is flat too. Beside disks busy 20%, 20 points are this one's.
	if cs = feedBeside(60, quantized, waiting, 60); len(cs) != 0 {
		t.Errorf("flat 20 MB/s, iowait 40%%, other disks busy 60%%: %+v, want no ceiling", cs)
	}
	if cs = feedBeside(60, quantized, waiting, 20); len(cs) != 1 || cs[0].Code != result.CodeBandwidthCap {
		t.Errorf("flat 20 MB/s, iowait 40%%, other disks busy 20%%: %+v, want the ceiling", cs)
	}
	// A node exporter that answers a scrape late: the interval before
	// the late sample counts 20% more than its time stamps say, the one
	// after 20% less. One plateau all the same.
	cs = feed(60, func(i int) result.DeviceSample {
		switch i % 7 {
		case 3:
			return writes(24e6, 65536)
		case 4:
			return writes(16e6, 65536)
		}
		return writes(20e6, 65536)
	}, waiting)
	if len(cs) != 1 || cs[0].NEpisodes != 1 || cs[0].HeldS != 60 || math.Abs(cs[0].BWBytes/20e6-1) > 0.001 {
		t.Fatalf("late scrapes: %+v", cs)
	}
	// Small requests: flat in IOPS and MB/s, and the request size says
	// which binds.
	cs = feed(60, func(int) result.DeviceSample { return writes(4e6, 4096) }, waiting)
	if len(cs) != 1 || cs[0].Code != result.CodeIOPSCap || math.Abs(cs[0].IOPS-4e6/4096) > 1 {
		t.Fatalf("4 KiB writes at a flat rate: %+v", cs)
	}
	for name, tc := range map[string]struct {
		s      func(int) result.DeviceSample
		iowait func(int) float64
		n      int
	}{
		"nothing waiting": {func(int) result.DeviceSample { return writes(20e6, 65536) }, idle, 60},
		"a ramp":          {func(i int) result.DeviceSample { return writes(20e6*(1+0.01*float64(i)), 65536) }, waiting, 60},
		"wandering":       {func(i int) result.DeviceSample { return writes(20e6*(1+0.1*math.Sin(float64(i))), 65536) }, waiting, 60},
		"too short":       {func(int) result.DeviceSample { return writes(20e6, 65536) }, waiting, 8},
		"idle":            {func(int) result.DeviceSample { return result.DeviceSample{} }, waiting, 60},
	} {
		if cs := feed(tc.n, tc.s, tc.iowait); len(cs) > 0 {
			t.Errorf("%s: %+v", name, cs)
		}
	}
	// Two plateaus at one level, a wandering dip between them: one
	// ceiling, held twice.
	cs = feed(90, func(i int) result.DeviceSample {
		if i > 30 && i <= 45 {
			return writes(5e6*(1+0.4*math.Sin(float64(i))), 65536)
		}
		return writes(20e6, 65536)
	}, waiting)
	if len(cs) != 1 || cs[0].NEpisodes != 2 || cs[0].HeldS != 75 {
		t.Fatalf("one level twice: %+v", cs)
	}
	// Reads and writes each capped: each its own; a total flat while
	// neither direction is: the total.
	cs = feed(60, func(int) result.DeviceSample {
		return result.DeviceSample{ReadBWBytes: 10e6, ReadIOPS: 160, WriteBWBytes: 20e6, WriteIOPS: 320}
	}, waiting)
	if len(cs) != 2 || cs[0].Dir == cs[1].Dir {
		t.Fatalf("two directions capped: %+v", cs)
	}
	cs = feed(60, func(i int) result.DeviceSample {
		r := 10e6 + 5e6*math.Sin(float64(i))
		return result.DeviceSample{ReadBWBytes: r, ReadIOPS: r / 65536, WriteBWBytes: 30e6 - r, WriteIOPS: (30e6 - r) / 65536}
	}, waiting)
	if len(cs) != 1 || cs[0].Dir != "total" || math.Abs(cs[0].BWBytes-30e6) > 1e4 {
		t.Fatalf("a shared cap: %+v", cs)
	}
}

// TestStore: the stored series stays within its bound however long the
// range, and keeps what went through it: the bytes, the time, the peak.
func TestStore(t *testing.T) {
	st := newStore(100)
	t0 := date("2026-03-01T14:00:00Z")
	var bytes, secs float64
	var peak uint64
	for i := 1; i <= 86400; i++ {
		s := result.DeviceSample{WriteBWBytes: float64(i % 1000), WriteIOPS: 1, WriteAwaitMs: float64(i % 7), InFlight: uint64(i % 97)}
		bytes += s.WriteBWBytes
		secs++
		peak = max(peak, s.InFlight)
		st.add(t0.Add(time.Duration(i)*time.Second), time.Second, s)
		if n := len(st.points()); n > 100 {
			t.Fatalf("%d points held after %d intervals", n, i)
		}
	}
	var b, d float64
	var p uint64
	for _, x := range st.points() {
		b += x.s.WriteBWBytes * x.dt
		d += x.dt
		p = max(p, x.s.InFlight)
	}
	if math.Abs(b-bytes) > 1e-6*bytes || d != secs || p != peak {
		t.Errorf("held %.0f bytes over %.0f s, peak %d; went through %.0f over %.0f, peak %d", b, d, p, bytes, secs, peak)
	}
	if last := st.points()[len(st.points())-1]; !last.end.Equal(t0.Add(86400 * time.Second)) {
		t.Errorf("the last point ends at %s", last.end)
	}
}
