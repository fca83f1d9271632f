package emulate

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

func TestParseDist(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Dist
	}{
		{"2ms", Dist{Median: 2 * ms}},
		{"0", Dist{}},
		{"500us", Dist{Median: 500 * time.Microsecond}},
		{"2ms±0.5ms", Dist{Median: 2 * ms, Jitter: 500 * time.Microsecond}},
		{"2ms+-0.5ms", Dist{Median: 2 * ms, Jitter: 500 * time.Microsecond}},
		{" 2ms ± 500us ", Dist{Median: 2 * ms, Jitter: 500 * time.Microsecond}},
		{"p50=1ms,p99=4ms", Dist{Median: ms, Pct: 99, Tail: 4 * ms}},
		{"p99=4ms, p50=1ms", Dist{Median: ms, Pct: 99, Tail: 4 * ms}},
		{"p50=1ms,p99.9=10ms", Dist{Median: ms, Pct: 99.9, Tail: 10 * ms}},
		{"p50=3ms", Dist{Median: 3 * ms}},
		{"hit=0.2ms,miss=8ms,hitratio=0.7", Dist{Hit: 200 * time.Microsecond, Miss: 8 * ms, HitRatio: 0.7}},
		{"miss=8ms, hitratio=70%, hit=200us", Dist{Hit: 200 * time.Microsecond, Miss: 8 * ms, HitRatio: 0.7}},
		{"hit=0,miss=1ms,hitratio=0.5", Dist{Miss: ms, HitRatio: 0.5}},
	} {
		got, err := ParseDist(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseDist(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		// String prints what ParseDist reads back.
		if back, err := ParseDist(got.String()); err != nil || back != got {
			t.Errorf("ParseDist(%q.String() = %q) = %+v, %v", c.in, got.String(), back, err)
		}
	}
	for _, bad := range []string{"", "-1ms", "NaN", "Inf", "2ms±3ms", "2ms±-1ms", "11s", "2furlongs", "p99=4ms",
		"p50=4ms,p99=1ms", "p50=1ms,p40=0.5ms", "p50=1ms,p100=2ms", "p50=1ms,p90=2ms,p99=4ms", "p50=1ms,p50=2ms",
		"pNaN=1ms,p50=1ms", "p50", "p50=0,p99=1ms", "9s±5s", strings.Repeat("1", 200) + "ms",
		"hit=1ms,miss=8ms", "hit=1ms,hitratio=0.5", "hit=8ms,miss=1ms,hitratio=0.5", "hit=1ms,miss=1ms,hitratio=0.5",
		"hit=1ms,miss=8ms,hitratio=1", "hit=1ms,miss=8ms,hitratio=0", "hit=1ms,miss=8ms,hitratio=100%", "hit=1ms,miss=8ms,hitratio=1.5",
		"hit=1ms,miss=8ms,hitratio=NaN", "hit=1ms,miss=11s,hitratio=0.5", "hit=-1ms,miss=8ms,hitratio=0.5", "hit=1ms,miss=8ms,hitratio=0.5,hit=2ms",
		"hit=1ms,miss=8ms,ratio=0.5", "hit=1ms,miss=8ms,hitratio=0.5,p50=1ms"} {
		if d, err := ParseDist(bad); err == nil {
			t.Errorf("ParseDist(%q) = %+v, accepted", bad, d)
		}
	}
}

// TestDistSamples: drawn latencies follow the distribution: the fixed
// value always; a uniform never outside its range; a log-normal with
// the configured median and tail percentile (within 3%, from 200,000
// draws).
func TestDistSamples(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	draw := func(d Dist) []time.Duration {
		out := make([]time.Duration, 200000)
		for i := range out {
			out[i] = d.Sample(r)
		}
		slices.Sort(out)
		return out
	}
	q := func(s []time.Duration, p float64) float64 { return float64(s[int(p*float64(len(s)-1))]) }
	s := draw(Fixed(2 * ms))
	if s[0] != 2*ms || s[len(s)-1] != 2*ms {
		t.Errorf("fixed: %v..%v", s[0], s[len(s)-1])
	}
	s = draw(Dist{Median: 2 * ms, Jitter: 500 * time.Microsecond})
	if s[0] < 1500*time.Microsecond || s[len(s)-1] > 2500*time.Microsecond || math.Abs(q(s, 0.5)/float64(2*ms)-1) > 0.01 {
		t.Errorf("uniform: min %v p50 %v max %v", s[0], time.Duration(q(s, 0.5)), s[len(s)-1])
	}
	d := Dist{Median: ms, Pct: 99, Tail: 4 * ms}
	s = draw(d)
	for _, c := range []struct{ p, want float64 }{{0.5, float64(ms)}, {0.99, float64(4 * ms)}} {
		if got := q(s, c.p); math.Abs(got/c.want-1) > 0.03 {
			t.Errorf("log-normal p%g = %v, want %v", c.p*100, time.Duration(got), time.Duration(c.want))
		}
		if got := float64(d.Quantile(c.p)); math.Abs(got/c.want-1) > 1e-9 {
			t.Errorf("Quantile(%g) = %v, want %v", c.p, time.Duration(got), time.Duration(c.want))
		}
	}
	if s[len(s)-1] > MaxLatency || s[0] <= 0 {
		t.Errorf("log-normal drew %v..%v", s[0], s[len(s)-1])
	}
	// Bimodal: the hit share within 1% (3.5 sigma at 200,000 draws);
	// nothing but the two values.
	b := Dist{Hit: 200 * time.Microsecond, Miss: 8 * ms, HitRatio: 0.7}
	s = draw(b)
	hits := 0
	for _, v := range s {
		switch v {
		case b.Hit:
			hits++
		case b.Miss:
		default:
			t.Fatalf("bimodal drew %v", v)
		}
	}
	if got := float64(hits) / float64(len(s)); math.Abs(got-0.7) > 0.01 {
		t.Errorf("bimodal hit share %.4f, want 0.7", got)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, b.Hit}, {0.7, b.Hit}, {0.71, b.Miss}, {0.99, b.Miss}} {
		if got := b.Quantile(c.q); got != c.want {
			t.Errorf("bimodal Quantile(%g) = %v, want %v", c.q, got, c.want)
		}
	}
}

// TestDistMean: the mean that QD1 IOPS and channel rates follow, against
// the mean of draws.
func TestDistMean(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, d := range []Dist{Fixed(2 * ms), {Median: 2 * ms, Jitter: ms}, {Median: ms, Pct: 99, Tail: 4 * ms},
		{Hit: 200 * time.Microsecond, Miss: 8 * ms, HitRatio: 0.7}} {
		var sum float64
		const n = 400000
		for i := 0; i < n; i++ {
			sum += float64(d.Sample(r))
		}
		if got := sum / n; math.Abs(got/float64(d.Mean())-1) > 0.01 {
			t.Errorf("%s: mean of draws %v, Mean() %v", d, time.Duration(got), d.Mean())
		}
	}
}

func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"2ms", "2ms±0.5ms", "2ms+-0.5ms", "p50=1ms,p99=4ms", "p50=1ms,p99.9=10ms", "0", "NaN", "-1ms",
		"p50=1ms,p100=2ms", "2ms±3ms", "p50=9s,p99=10s", "9s±5s", "1e308ms", "p50=1ms,p50.000000000000001=2ms",
		"hit=0.2ms,miss=8ms,hitratio=0.7", "hit=0,miss=10s,hitratio=33.3333333%", "hit=1ms,miss=2ms,hitratio=0.000001"} {
		f.Add(s)
	}
	r := rand.New(rand.NewPCG(3, 4))
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDist(s)
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("%q parsed to an invalid %+v: %v", s, d, err)
		}
		back, err := ParseDist(d.String())
		if err != nil || back != d {
			t.Fatalf("%q: %+v prints %q, which reads back as %+v, %v", s, d, d.String(), back, err)
		}
		for i := 0; i < 20; i++ {
			if v := d.Sample(r); v < d.Min() || v > MaxLatency {
				t.Fatalf("%q drew %v, outside [%v, %v]", s, v, d.Min(), MaxLatency)
			}
		}
	})
}

// retry tries again while the error is worth it and the deadline is ahead,
// and stops at once on success, on an error not worth it, or when ctx ends.
func TestRetry(t *testing.T) {
	busy, other := errors.New("busy"), errors.New("other")
	isBusy := func(err error) bool { return err == busy }
	ctx := context.Background()
	far := time.Now().Add(time.Minute)
	n := 0
	if err := retry(ctx, far, func() error {
		if n++; n < 3 {
			return busy
		}
		return nil
	}, isBusy); err != nil || n != 3 {
		t.Errorf("busy twice, then done: %v after %d tries, want nil after 3", err, n)
	}
	n = 0
	if err := retry(ctx, far, func() error { n++; return other }, isBusy); err != other || n != 1 {
		t.Errorf("an error not worth retrying: %v after %d tries, want it after 1", err, n)
	}
	n = 0
	start := time.Now()
	if err := retry(ctx, time.Now().Add(time.Second), func() error { n++; return busy }, isBusy); err != busy || n < 2 || time.Since(start) > 10*time.Second {
		t.Errorf("busy until the deadline: %v after %d tries in %s, want busy after a few", err, n, time.Since(start))
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := retry(cctx, far, func() error { return busy }, isBusy); err != context.Canceled {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}
