package fio

import (
	"fmt"
	"math"
	"math/bits"
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

// Histogram is a fio latency histogram on fio's fixed bucket grid, in
// nanoseconds. The zero value is empty and ready to use.
type Histogram struct {
	counts [HistBuckets]uint64
	n      uint64
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

// Add counts n samples of latency ns.
func (h *Histogram) Add(ns uint64, n uint64) {
	h.counts[BucketIndex(ns)] += n
	h.n += n
}

// AddBucket counts n samples in bucket idx.
func (h *Histogram) AddBucket(idx int, n uint64) {
	h.counts[idx] += n
	h.n += n
}

// Merge adds every sample of o to h. Merging is exact: both share the grid.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// Count is the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Bucket returns the count in bucket idx.
func (h *Histogram) Bucket(idx int) uint64 { return h.counts[idx] }

// Percentile returns the p-th percentile (0 < p <= 100) in ns, as fio
// computes it: the midpoint of the first bucket whose cumulative count
// reaches p/100*N. The threshold is computed in float64, which matches
// fio's reported values on every sample we hold (see fio-brief §1.7).
func (h *Histogram) Percentile(p float64) float64 {
	if h.n == 0 {
		return 0
	}
	thr := p / 100 * float64(h.n)
	var cum uint64
	for i, c := range h.counts {
		cum += c
		if c != 0 && float64(cum) >= thr {
			return float64(BucketValue(i))
		}
	}
	return float64(BucketValue(HistBuckets - 1))
}

// Percentiles returns several percentiles in one pass; ps must be sorted
// ascending.
func (h *Histogram) Percentiles(ps []float64) []float64 {
	out := make([]float64, len(ps))
	if h.n == 0 {
		return out
	}
	var cum uint64
	j := 0
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		cum += c
		for j < len(ps) && float64(cum) >= ps[j]/100*float64(h.n) {
			out[j] = float64(BucketValue(i))
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
	for i, c := range h.counts {
		if c != 0 {
			s += float64(c) * float64(BucketValue(i))
		}
	}
	return s / float64(h.n)
}

// HistogramFromBins reads fio's json+ "bins" object (bucket midpoint in ns
// as a decimal string -> count).
func HistogramFromBins(bins map[string]uint64) (*Histogram, error) {
	h := &Histogram{}
	for k, c := range bins {
		v, err := strconv.ParseUint(k, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(k, 64)
			if ferr != nil || f < 0 || math.IsInf(f, 0) {
				return nil, fmt.Errorf("histogram bin %q: not a latency in ns", k)
			}
			v = uint64(f)
		}
		h.Add(v, c)
	}
	return h, nil
}

// Bins writes h back in fio's json+ form, for storage in a result.
func (h *Histogram) Bins() map[string]uint64 {
	out := make(map[string]uint64)
	for i, c := range h.counts {
		if c != 0 {
			out[strconv.FormatUint(BucketValue(i), 10)] = c
		}
	}
	return out
}

// Buckets lists the non-empty buckets in ascending order of latency.
func (h *Histogram) Buckets() []BucketCount {
	var out []BucketCount
	for i, c := range h.counts {
		if c != 0 {
			out = append(out, BucketCount{Ns: BucketValue(i), Count: c})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Ns < out[b].Ns })
	return out
}

// BucketCount is one non-empty bucket: its midpoint and its count.
type BucketCount struct {
	Ns    uint64
	Count uint64
}
