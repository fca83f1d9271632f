package result

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// The grid is fio's: every bucket's midpoint maps back to its bucket, and
// the last midpoint is the one fio-brief §1.7 gives.
func TestBucketGrid(t *testing.T) {
	for i := 0; i < HistBuckets; i++ {
		if BucketIndex(BucketValue(i)) != i {
			t.Fatalf("midpoint of bucket %d maps to %d", i, BucketIndex(BucketValue(i)))
		}
	}
	for _, c := range []struct {
		ns       uint64
		idx      int
		midpoint uint64
	}{{0, 0, 0}, {127, 127, 127}, {128, 128, 129}, {129, 128, 129}, {130, 129, 131}} {
		if got := BucketIndex(c.ns); got != c.idx {
			t.Errorf("BucketIndex(%d) = %d, want %d", c.ns, got, c.idx)
		}
		if got := BucketValue(c.idx); got != c.midpoint {
			t.Errorf("BucketValue(%d) = %d, want %d", c.idx, got, c.midpoint)
		}
	}
	if got := BucketValue(HistBuckets - 1); got != 17112760320 {
		t.Errorf("last midpoint = %d, want 17112760320", got)
	}
}

// The sparse histogram gives what a plain array of counts gives, for
// adds and merges in any order.
func TestSparseMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var dense [HistBuckets]uint64
	var total uint64
	var a, b Histogram
	for i := 0; i < 5000; i++ {
		ns := uint64(rng.ExpFloat64() * 2e6)
		n := uint64(rng.IntN(3) + 1)
		dense[BucketIndex(ns)] += n
		total += n
		if i%2 == 0 {
			a.Add(ns, n)
		} else {
			b.Add(ns, n)
		}
	}
	var m Histogram
	m.Merge(&a)
	m.Merge(&b)
	if m.Count() != total {
		t.Fatalf("count %d, want %d", m.Count(), total)
	}
	for i, c := range dense {
		if m.Bucket(i) != c {
			t.Fatalf("bucket %d: %d, want %d", i, m.Bucket(i), c)
		}
	}
	// Percentile by walking the dense array, as fio does.
	for _, p := range []float64{1, 50, 90, 99, 99.9, 99.99, 100} {
		var cum uint64
		want := 0.0
		for i, c := range dense {
			cum += c
			if c != 0 && float64(cum) >= p/100*float64(total) {
				want = float64(BucketValue(i))
				break
			}
		}
		if got := m.Percentile(p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	// Merging into a histogram does not change the one merged in.
	before := a.Count()
	a.Merge(&b)
	if b.Count() == 0 || a.Count() != before+b.Count() {
		t.Errorf("merge: a %d b %d", a.Count(), b.Count())
	}
}

func TestHistogramJSON(t *testing.T) {
	h := HistogramOf(map[uint64]uint64{1000: 3, 995328: 10, 129: 1})
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	// 1000 ns lands in the bucket whose midpoint is 1004. Byte-wise key
	// order, as encoding/json writes a map: the form v1
	// records always had.
	if want := `{"1004":3,"129":1,"995328":10}`; string(b) != want {
		t.Errorf("json %s, want %s", b, want)
	}
	var back Histogram
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Count() != 14 || back.Percentile(99) != 995328 {
		t.Errorf("round trip: n=%d p99=%v", back.Count(), back.Percentile(99))
	}
	var empty Histogram
	if b, _ := json.Marshal(empty); string(b) != "{}" {
		t.Errorf("empty = %s", b)
	}
	if err := json.Unmarshal([]byte("null"), &back); err != nil || back.Count() != 0 {
		t.Errorf("null: %v, n=%d", err, back.Count())
	}
}

// Keys off the grid land in their bucket; hostile keys and counts are
// refused or saturate, never wrap or panic.
func TestHistogramHostile(t *testing.T) {
	for _, in := range []string{`{"x":1}`, `{"-5":1}`, `{"NaN":1}`, `{"1e400":1}`, `{"1":-1}`, `{"1":1.5}`, `[1]`} {
		var h Histogram
		if err := json.Unmarshal([]byte(in), &h); err == nil {
			t.Errorf("%s accepted: n=%d", in, h.Count())
		}
	}
	var h Histogram
	if err := json.Unmarshal([]byte(`{"1000.0":2,"1001":3,"99999999999999999999":1}`), &h); err != nil {
		t.Fatal(err)
	}
	if h.Count() != 6 || h.Bucket(BucketIndex(1000)) != 5 || h.Bucket(HistBuckets-1) != 1 {
		t.Errorf("off-grid keys: n=%d", h.Count())
	}
	big := HistogramOf(map[uint64]uint64{1: math.MaxUint64})
	big.Merge(&big)
	big.Add(1, 5)
	if big.Count() != math.MaxUint64 || big.Percentile(50) != 1 {
		t.Errorf("saturation: n=%d p50=%v", big.Count(), big.Percentile(50))
	}
}
