package result

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
)

// fio's latency histogram grid (stat.h): 29 groups of 64 buckets. Values
// below 128 ns are exact; above, each power of two is split into 64
// buckets, a relative error of at most 0.78%. The grid never changes, which
// is what makes merging exact.
const (
	platBits = 6
	platVal  = 1 << platBits
	// HistBuckets is the number of buckets in a fio latency histogram.
	HistBuckets = 29 * platVal
)

// Histogram is a latency histogram on fio's fixed bucket grid, in
// nanoseconds. Only non-empty buckets are held, so its size follows what
// was measured (or what a file holds), never a count read from input. The
// zero value is empty and ready to use.
//
// Its JSON form is fio's json+ "bins" object: bucket midpoint in ns, as a
// decimal string, to count. It is decoded once, when a record is read.
type Histogram struct {
	b []bucket // ascending idx, count > 0
	n uint64
}

type bucket struct {
	idx   int
	count uint64
}

// BucketIndex maps a latency in ns to its bucket (fio's plat_val_to_idx).
func BucketIndex(ns uint64) int {
	msb := 0
	if ns != 0 {
		msb = 63 - bits.LeadingZeros64(ns)
	}
	if msb <= platBits {
		return int(ns)
	}
	eb := msb - platBits
	idx := (eb+1)<<platBits + int((ns>>uint(eb))&(platVal-1))
	if idx > HistBuckets-1 {
		idx = HistBuckets - 1
	}
	return idx
}

// BucketValue is the midpoint of bucket idx in ns (fio's plat_idx_to_val).
// It is the key fio writes in json+ "bins" and the value of every
// percentile fio reports.
func BucketValue(idx int) uint64 {
	if idx < platVal<<1 {
		return uint64(idx)
	}
	eb := (idx >> platBits) - 1
	return uint64(1)<<uint(eb+platBits) + (2*uint64(idx%platVal)+1)<<uint(eb-1)
}

// satAdd adds without wrapping: a count that would overflow stays at the
// largest value (hostile files can hold any counts).
func satAdd(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

// Add counts n samples of latency ns.
func (h *Histogram) Add(ns uint64, n uint64) { h.AddBucket(BucketIndex(ns), n) }

// AddBucket counts n samples in bucket idx (0 <= idx < HistBuckets).
func (h *Histogram) AddBucket(idx int, n uint64) {
	if n == 0 || idx < 0 || idx >= HistBuckets {
		return
	}
	i, found := slices.BinarySearchFunc(h.b, idx, func(b bucket, idx int) int { return b.idx - idx })
	if found {
		h.b[i].count = satAdd(h.b[i].count, n)
	} else {
		h.b = slices.Insert(h.b, i, bucket{idx, n})
	}
	h.n = satAdd(h.n, n)
}

// Merge adds every sample of o to h. Merging is exact: both share the grid.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.n == 0 {
		return
	}
	if h.n == 0 {
		h.b, h.n = slices.Clone(o.b), o.n
		return
	}
	out := make([]bucket, 0, max(len(h.b), len(o.b)))
	i, j := 0, 0
	for i < len(h.b) || j < len(o.b) {
		switch {
		case j == len(o.b) || i < len(h.b) && h.b[i].idx < o.b[j].idx:
			out = append(out, h.b[i])
			i++
		case i == len(h.b) || o.b[j].idx < h.b[i].idx:
			out = append(out, o.b[j])
			j++
		default:
			out = append(out, bucket{h.b[i].idx, satAdd(h.b[i].count, o.b[j].count)})
			i++
			j++
		}
	}
	h.b, h.n = out, satAdd(h.n, o.n)
}

// Clone returns an independent copy.
func (h *Histogram) Clone() Histogram { return Histogram{b: slices.Clone(h.b), n: h.n} }

// Count is the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Bucket returns the count in bucket idx.
func (h *Histogram) Bucket(idx int) uint64 {
	i, found := slices.BinarySearchFunc(h.b, idx, func(b bucket, idx int) int { return b.idx - idx })
	if !found {
		return 0
	}
	return h.b[i].count
}

// Percentile returns the p-th percentile (0 < p <= 100) in ns, as fio
// computes it: the midpoint of the first bucket whose cumulative count
// reaches p/100*N. The threshold is computed in float64, which matches
// fio's reported values on every sample we hold (see fio-brief §1.7).
func (h *Histogram) Percentile(p float64) float64 { return h.Percentiles([]float64{p})[0] }

// Percentiles returns several percentiles in one pass; ps must be sorted
// ascending.
func (h *Histogram) Percentiles(ps []float64) []float64 {
	out := make([]float64, len(ps))
	if h.n == 0 {
		return out
	}
	var cum uint64
	j := 0
	for _, b := range h.b {
		cum = satAdd(cum, b.count)
		for j < len(ps) && float64(cum) >= ps[j]/100*float64(h.n) {
			out[j] = float64(BucketValue(b.idx))
			j++
		}
		if j == len(ps) {
			break
		}
	}
	for ; j < len(ps); j++ {
		out[j] = float64(BucketValue(HistBuckets - 1))
	}
	return out
}

// Mean estimates the mean from bucket midpoints. Prefer fio's exact mean
// where it exists; this is for merged or re-binned histograms.
func (h *Histogram) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	var s float64
	for _, b := range h.b {
		s += float64(b.count) * float64(BucketValue(b.idx))
	}
	return s / float64(h.n)
}

// BucketCount is one non-empty bucket: its midpoint and its count.
type BucketCount struct {
	Ns    uint64
	Count uint64
}

// Buckets lists the non-empty buckets in ascending order of latency.
func (h *Histogram) Buckets() []BucketCount {
	out := make([]BucketCount, len(h.b))
	for i, b := range h.b {
		out[i] = BucketCount{Ns: BucketValue(b.idx), Count: b.count}
	}
	return out
}

// HistogramFromBins reads fio's json+ "bins" object (bucket midpoint in ns
// as a decimal string -> count). Keys that are not on the grid count in
// the bucket that holds them.
func HistogramFromBins(bins map[string]uint64) (Histogram, error) {
	var h Histogram
	for k, c := range bins {
		v, err := strconv.ParseUint(k, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(k, 64)
			if ferr != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
				return Histogram{}, fmt.Errorf("histogram bin %q: not a latency in ns", k)
			}
			v = uint64(min(f, math.MaxUint64))
		}
		h.Add(v, c)
	}
	return h, nil
}

// MarshalJSON writes the bins object. Keys are in the order encoding/json
// gives a map's (byte-wise), so records encode as they always have.
func (h Histogram) MarshalJSON() ([]byte, error) {
	keys := make([]string, len(h.b))
	counts := make(map[string]uint64, len(h.b))
	for i, b := range h.b {
		keys[i] = strconv.FormatUint(BucketValue(b.idx), 10)
		counts[keys[i]] = b.count
	}
	sort.Strings(keys)
	out := make([]byte, 0, 2+len(h.b)*20)
	out = append(out, '{')
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, k)
		out = append(out, ':')
		out = strconv.AppendUint(out, counts[k], 10)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads the bins object; null is an empty histogram.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	var bins map[string]uint64
	if err := json.Unmarshal(data, &bins); err != nil {
		return fmt.Errorf("histogram: %w", err)
	}
	v, err := HistogramFromBins(bins)
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// HistogramOf builds a histogram from latencies in ns and their counts.
func HistogramOf(counts map[uint64]uint64) Histogram {
	var h Histogram
	for ns, n := range counts {
		h.Add(ns, n)
	}
	return h
}
