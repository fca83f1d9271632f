package etcdmetrics

import (
	"errors"
	"math"
	"testing"
)

// hist builds a histogram from (bound, cumulative count) pairs; the +Inf
// bucket is added with the last count unless given.
func hist(pairs ...float64) Histogram {
	var h Histogram
	for i := 0; i+1 < len(pairs); i += 2 {
		h.Buckets = append(h.Buckets, Bucket{UpperBound: pairs[i], Count: pairs[i+1]})
	}
	if n := len(h.Buckets); n > 0 && !math.IsInf(h.Buckets[n-1].UpperBound, 1) {
		h.Buckets = append(h.Buckets, Bucket{UpperBound: math.Inf(1), Count: h.Buckets[n-1].Count})
	}
	return h
}

var inf = math.Inf(1)

// The expected values are worked out by hand with histogram_quantile's
// rule: rank = q x the +Inf count; the first bucket whose count reaches
// it; lower + (upper-lower) x (rank - count below) / (bucket's count).
func TestQuantileAsHistogramQuantile(t *testing.T) {
	tests := []struct {
		name         string
		h            Histogram
		q            float64
		value        float64
		lower, upper float64
	}{
		// rank 99: bucket (2,4] ms holds 50, 50 below: 2 + 2 x 49/50.
		{"interpolated", hist(0.001, 0, 0.002, 50, 0.004, 100), 0.99, 0.00396, 0.002, 0.004},
		// From 0 in the lowest bucket: 1 x 99/100.
		{"lowest bucket from 0", hist(0.001, 100), 0.99, 0.00099, 0, 0.001},
		// Rank 99 beyond every finite bucket: the largest finite bound.
		{"overflow bucket", hist(0.001, 10, 0.002, 10, inf, 100), 0.99, 0.002, 0.002, inf},
		// Rank exactly on a bucket's count stays in that bucket.
		{"rank on a bound", hist(0.001, 50, 0.002, 100), 0.5, 0.001, 0, 0.001},
		// etcd 3.4.23's page in testdata: 207 fsyncs, rank 204.93 in
		// (0.512, 1.024] s with 203 below and 2 in it.
		{"etcd page", hist(0.001, 144, 0.002, 167, 0.004, 185, 0.008, 195, 0.016, 199, 0.032, 203, 0.064, 203, 0.128, 203,
			0.256, 203, 0.512, 203, 1.024, 205, 2.048, 206, 4.096, 207, 8.192, 207), 0.99, 0.512 + 0.512*1.93/2, 0.512, 1.024},
		// A bound at or below 0 in the lowest bucket is returned as is.
		{"non-positive lowest bound", hist(-1, 5, 1, 10), 0.1, -1, math.Inf(-1), -1},
		// Empty buckets before the rank are skipped.
		{"empty buckets", hist(0.001, 0, 0.002, 0, 0.004, 0, 0.008, 0, 0.016, 1000), 0.99, 0.008 + 0.008*990/1000, 0.008, 0.016},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.h.Quantile(tc.q)
			if math.Abs(e.Value-tc.value) > 1e-12 || e.Lower != tc.lower || e.Upper != tc.upper {
				t.Errorf("Quantile(%v) = %v in (%v, %v], want %v in (%v, %v]", tc.q, e.Value, e.Lower, e.Upper, tc.value, tc.lower, tc.upper)
			}
		})
	}
	for _, h := range []Histogram{{}, hist(0.001, 0), {Buckets: []Bucket{{inf, 5}}}} {
		if e := h.Quantile(0.99); !math.IsNaN(e.Value) {
			t.Errorf("%+v: want NaN, got %v", h, e.Value)
		}
	}
}

func TestShareAbove(t *testing.T) {
	h := hist(0.008, 95, 0.016, 99, 0.032, 100)
	for _, c := range []struct {
		bound, share float64
		ok           bool
	}{{0.008, 0.05, true}, {0.016, 0.01, true}, {0.032, 0, true}, {0.010, 0, false}} {
		s, ok := h.ShareAbove(c.bound)
		if ok != c.ok || math.Abs(s-c.share) > 1e-12 {
			t.Errorf("ShareAbove(%v) = %v %v, want %v %v", c.bound, s, ok, c.share, c.ok)
		}
	}
}

func TestSub(t *testing.T) {
	a := hist(0.001, 10, 0.002, 20)
	a.Sum = 0.02
	b := hist(0.001, 15, 0.002, 40)
	b.Sum = 0.05
	d, err := b.Sub(a)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{5, 20, 20}
	for i, bk := range d.Buckets {
		if bk.Count != want[i] {
			t.Errorf("bucket %d: %v, want %v", i, bk.Count, want[i])
		}
	}
	if math.Abs(d.Sum-0.03) > 1e-12 {
		t.Errorf("sum %v, want 0.03", d.Sum)
	}
	// A restart: counts go down.
	if _, err := a.Sub(b); !errors.Is(err, ErrReset) {
		t.Errorf("counts down: %v, want ErrReset", err)
	}
	// Same counts, smaller sum: also a new process.
	c := b
	c.Sum = 0.01
	if _, err := c.Sub(b); !errors.Is(err, ErrReset) {
		t.Errorf("sum down: %v, want ErrReset", err)
	}
	if _, err := hist(0.001, 10, 0.004, 20).Sub(a); !errors.Is(err, ErrLayout) {
		t.Errorf("other bounds: %v, want ErrLayout", err)
	}
	if _, err := hist(0.001, 10).Sub(a); !errors.Is(err, ErrLayout) {
		t.Errorf("fewer buckets: %v, want ErrLayout", err)
	}
}
