package emulate

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// closedLoop drives a device as fio does at queue depth qd: each of qd
// clients sends its next IO rt after the previous one was answered. It
// runs for d of virtual time and returns the IOs answered, their mean
// latency as the client sees it (answer - send + rt) and the count in each
// 250 ms window.
func closedLoop(dev *device, kinds []ioKind, size, qd int, rt, early, d time.Duration) (n int, mean time.Duration, windows []int) {
	t0 := time.Unix(1e9, 0)
	next := make([]time.Time, qd)
	for i := range next {
		next[i] = t0
	}
	var sum time.Duration
	windows = make([]int, int(d/(250*time.Millisecond)))
	for k := 0; ; k++ {
		c := 0
		for i := range next {
			if next[i].Before(next[c]) {
				c = i
			}
		}
		sent := next[c]
		if sent.Sub(t0) >= d {
			break
		}
		done := dev.schedule(kinds[k%len(kinds)], size, sent.Add(rt/2), early).Add(rt / 2)
		next[c] = done
		if done.Sub(t0) < d {
			n++
			sum += done.Sub(sent)
			windows[done.Sub(t0)/(250*time.Millisecond)]++
		}
	}
	return n, sum / time.Duration(max(n, 1)), windows
}

func cv(w []int) float64 {
	var s, ss float64
	for _, x := range w {
		s += float64(x)
	}
	m := s / float64(len(w))
	for _, x := range w {
		ss += (float64(x) - m) * (float64(x) - m)
	}
	return math.Sqrt(ss/float64(len(w)-1)) / m
}

func rng() *rand.Rand { return rand.New(rand.NewPCG(7, 8)) }

// TestDeviceChannels: 4 channels of 2 ms serve 500 IOPS at QD1, 2,000 at
// QD4 and QD16, where the latency is 4 times QD1's.
func TestDeviceChannels(t *testing.T) {
	lat := Latency{Read: Fixed(2 * ms)}
	const secs = 10
	for _, c := range []struct {
		qd   int
		iops float64
		lat  time.Duration
	}{{1, 500, 2 * ms}, {2, 1000, 2 * ms}, {4, 2000, 2 * ms}, {8, 2000, 4 * ms}, {16, 2000, 8 * ms}} {
		n, mean, w := closedLoop(newDevice(lat, Limits{}, 4, rng()), []ioKind{ioRead}, 4096, c.qd, 0, 0, secs*time.Second)
		if got := float64(n) / secs; math.Abs(got/c.iops-1) > 0.002 {
			t.Errorf("QD%d: %.1f IOPS, want %.0f", c.qd, got, c.iops)
		}
		if math.Abs(float64(mean)/float64(c.lat)-1) > 0.002 {
			t.Errorf("QD%d: mean latency %v, want %v", c.qd, mean, c.lat)
		}
		if c.qd >= 4 && cv(w) > 0.01 {
			t.Errorf("QD%d: a fixed latency gives an even rate, window CV %.4f", c.qd, cv(w))
		}
	}
}

// TestDeviceChannelsVary: with log-normal service times the saturated
// rate is channels / mean latency, and it varies from window to window as
// a renewal process does: CV about cv(service) / sqrt(IOs per window).
func TestDeviceChannelsVary(t *testing.T) {
	d := Dist{Median: 2 * ms, Pct: 99, Tail: 8 * ms}
	const secs = 60
	n, _, w := closedLoop(newDevice(Latency{Read: d}, Limits{}, 4, rng()), []ioKind{ioRead}, 4096, 32, 0, 0, secs*time.Second)
	want := 4 / d.Mean().Seconds()
	if got := float64(n) / secs; math.Abs(got/want-1) > 0.03 {
		t.Errorf("%.0f IOPS, want 4 / mean %v = %.0f", got, d.Mean(), want)
	}
	s := d.sigma()
	predicted := math.Sqrt(math.Exp(s*s)-1) / math.Sqrt(want/4)
	if got := cv(w); got < predicted/1.5 || got > predicted*1.5 {
		t.Errorf("window CV %.4f, predicted %.4f", got, predicted)
	}
}

// TestDeviceThrottle: a device throttle paces to its cap to the IO, with
// the queue's wait in the latency (QD / cap), at every depth past the
// cap; IOs under the cap pass at once.
func TestDeviceThrottle(t *testing.T) {
	const secs = 10
	for _, qd := range []int{1, 8, 32} {
		dev := newDevice(Latency{Read: Fixed(ms), Write: Fixed(ms)}, Limits{TotalIOPS: 2500}, 0, rng())
		n, mean, w := closedLoop(dev, []ioKind{ioRead, ioWrite}, 4096, qd, 50*time.Microsecond, 0, secs*time.Second)
		iops := float64(n) / secs
		want := math.Min(2500, float64(qd)/(1.05e-3))
		if math.Abs(iops/want-1) > 0.01 {
			t.Errorf("QD%d: %.1f IOPS, want %.0f", qd, iops, want)
		}
		if qd == 32 {
			if got, want := mean.Seconds(), 32/2500.0; math.Abs(got/want-1) > 0.01 {
				t.Errorf("QD32: mean latency %.4f s, want QD/cap = %.4f", got, want)
			}
			if c := cv(w[1:]); c > 0.005 {
				t.Errorf("QD32: window CV %.4f, want flat", c)
			}
		}
	}
	// Per direction: reads and writes each get their cap; bytes count.
	dev := newDevice(Latency{}, Limits{ReadIOPS: 1000, WriteIOPS: 300}, 0, rng())
	n, _, _ := closedLoop(dev, []ioKind{ioRead}, 4096, 16, 0, 0, secs*time.Second)
	m, _, _ := closedLoop(dev, []ioKind{ioWrite}, 4096, 16, 0, 0, secs*time.Second)
	if math.Abs(float64(n)/secs/1000-1) > 0.01 || math.Abs(float64(m)/secs/300-1) > 0.01 {
		t.Errorf("per direction: %d reads, %d writes in %d s, want 1000 and 300 a second", n, m, secs)
	}
	dev = newDevice(Latency{}, Limits{TotalIOPS: 1e6, TotalBPS: 100e6}, 0, rng())
	n, _, _ = closedLoop(dev, []ioKind{ioWrite}, 1<<20, 8, 0, 0, secs*time.Second)
	if got := float64(n) * (1 << 20) / secs; math.Abs(got/100e6-1) > 0.01 {
		t.Errorf("bandwidth: %.4g B/s, want 100e6", got)
	}
	// A flush passes the throttle.
	dev = newDevice(Latency{Flush: Fixed(ms)}, Limits{TotalIOPS: 1}, 0, rng())
	t0 := time.Unix(1e9, 0)
	for i := 0; i < 3; i++ {
		if got := dev.schedule(ioFlush, 0, t0, 0); got != t0.Add(ms) {
			t.Errorf("flush %d answered at +%v", i, got.Sub(t0))
		}
	}
}

// TestDeviceEarly: an IO that waited for nothing answers early by the
// round trip's share; one that waited answers on time.
func TestDeviceEarly(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	const early = 30 * time.Microsecond
	dev := newDevice(Latency{Read: Fixed(2 * ms)}, Limits{}, 1, rng())
	if got := dev.schedule(ioRead, 4096, t0, early).Sub(t0); got != 2*ms-early {
		t.Errorf("first IO after %v, want %v", got, 2*ms-early)
	}
	if got := dev.schedule(ioRead, 4096, t0, early).Sub(t0); got != 4*ms-early {
		t.Errorf("second IO (waited for the channel) after %v, want %v", got, 4*ms-early)
	}
	dev = newDevice(Latency{Read: Fixed(10 * time.Microsecond)}, Limits{}, 0, rng())
	if got := dev.schedule(ioRead, 4096, t0, early).Sub(t0); got != 0 {
		t.Errorf("an early share above the latency: answered after %v, want at once", got)
	}
}

// TestDeviceQueueGrowth: with no channel limit, each IO served for its
// latency times (1 + g x the IOs already in the device), a closed loop at
// depth q holds q-1 others, so it gets q / (L (1 + g (q-1))) IOPS at that
// latency: rising ever more slowly, its latency growing in proportion.
func TestDeviceQueueGrowth(t *testing.T) {
	const secs, g = 20, 0.125
	L := 2 * ms
	for _, qd := range []int{1, 8, 32, 128} {
		dev := newDevice(Latency{Read: Fixed(L)}, Limits{}, 0, rng())
		dev.growth = g
		n, mean, _ := closedLoop(dev, []ioKind{ioRead}, 4096, qd, 0, 0, secs*time.Second)
		wantLat := float64(L) * (1 + g*float64(qd-1))
		want := float64(qd) / (wantLat / 1e9)
		if got := float64(n) / secs; math.Abs(got/want-1) > 0.01 {
			t.Errorf("QD%d: %.1f IOPS, want %.0f", qd, got, want)
		}
		if math.Abs(float64(mean)/wantLat-1) > 0.01 {
			t.Errorf("QD%d: mean latency %v, want %v", qd, mean, time.Duration(wantLat))
		}
	}
}
