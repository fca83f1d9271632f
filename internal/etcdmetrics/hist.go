package etcdmetrics

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"

	dto "github.com/prometheus/client_model/go"

	"github.com/iolens/iolens/internal/units"
)

// Bucket is one cumulative bucket of a classic Prometheus histogram: how
// many observations were at most UpperBound seconds (the "le" label).
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Histogram is a classic Prometheus histogram: buckets sorted by bound,
// the last one +Inf, counts cumulative and never decreasing.
type Histogram struct {
	Buckets []Bucket
	// Sum is the sum of all observations, in seconds.
	Sum float64
}

// Total is the number of observations: the +Inf bucket's count, which is
// what histogram_quantile ranks against (not _count).
func (h Histogram) Total() float64 {
	if len(h.Buckets) == 0 {
		return 0
	}
	return h.Buckets[len(h.Buckets)-1].Count
}

// MaxBuckets bounds the buckets one histogram may have. etcd's have 15;
// a histogram with thousands is not etcd's, and sorting and diffing it
// every second in watch would cost for nothing.
const MaxBuckets = 1024

// ErrInvalid marks a histogram that breaks the exposition format's rules.
var ErrInvalid = errors.New("invalid histogram")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// fromDTO checks a parsed histogram and puts it in order. Anything a
// scrape of a real client library cannot produce is refused rather than
// repaired: a decreasing cumulative count, a bucket given twice, a count
// that is negative or not finite.
func fromDTO(d *dto.Histogram) (Histogram, error) {
	if d == nil {
		return Histogram{}, invalid("no histogram")
	}
	if n := len(d.GetBucket()); n > MaxBuckets {
		return Histogram{}, invalid("%d buckets (at most %d)", n, MaxBuckets)
	}
	var h Histogram
	seen := map[float64]bool{}
	for _, b := range d.GetBucket() {
		ub := b.GetUpperBound()
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		switch {
		case math.IsNaN(ub):
			return Histogram{}, invalid("bucket bound NaN")
		case seen[ub]:
			return Histogram{}, invalid("bucket le=%q given twice", formatLe(ub))
		case math.IsNaN(c) || math.IsInf(c, 0) || c < 0:
			return Histogram{}, invalid("bucket le=%q count %v", formatLe(ub), c)
		case !math.IsInf(ub, 1) && !units.LatencySecondsFigure.Known(ub):
			// A bound of a histogram of durations: never negative.
			return Histogram{}, fmt.Errorf("%w: %w", ErrInvalid, units.LatencySecondsFigure.Check("a bucket's bound (le)", ub))
		}
		if err := units.CountFigure.Check(fmt.Sprintf("bucket le=%q count", formatLe(ub)), c); err != nil {
			return Histogram{}, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		seen[ub] = true
		h.Buckets = append(h.Buckets, Bucket{UpperBound: ub, Count: c})
	}
	sort.Slice(h.Buckets, func(i, j int) bool { return h.Buckets[i].UpperBound < h.Buckets[j].UpperBound })
	count := float64(d.GetSampleCount())
	if d.SampleCountFloat != nil {
		count = d.GetSampleCountFloat()
	}
	if math.IsNaN(count) || math.IsInf(count, 0) || count < 0 {
		return Histogram{}, invalid("_count %v", count)
	}
	if err := units.CountFigure.Check("_count", count); err != nil {
		return Histogram{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(h.Buckets) == 0 || !math.IsInf(h.Buckets[len(h.Buckets)-1].UpperBound, 1) {
		// The text format may leave +Inf out; its count is _count.
		h.Buckets = append(h.Buckets, Bucket{UpperBound: math.Inf(1), Count: count})
	}
	if len(h.Buckets) < 2 {
		return Histogram{}, invalid("no finite bucket")
	}
	for i := 1; i < len(h.Buckets); i++ {
		if h.Buckets[i].Count < h.Buckets[i-1].Count {
			return Histogram{}, invalid("cumulative count falls from %v (le=%q) to %v (le=%q)",
				h.Buckets[i-1].Count, formatLe(h.Buckets[i-1].UpperBound), h.Buckets[i].Count, formatLe(h.Buckets[i].UpperBound))
		}
	}
	h.Sum = d.GetSampleSum()
	if math.IsNaN(h.Sum) || math.IsInf(h.Sum, 0) {
		return Histogram{}, invalid("_sum %v", h.Sum)
	}
	// The sum of durations: never negative, and at most every observation
	// taking the longest latency there is.
	if err := (units.Quantity{Name: "a sum of latencies", Max: units.CountFigure.Max * units.LatencySecondsFigure.Max, Unit: "s"}).Check("_sum", h.Sum); err != nil {
		return Histogram{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return h, nil
}

// Estimate is a quantile read from a histogram.
type Estimate struct {
	// Value is histogram_quantile's figure in seconds: linear
	// interpolation inside the bucket, from 0 in the lowest, and the
	// largest finite bound when the quantile is in the +Inf bucket. NaN
	// without observations.
	Value float64
	// Lower and Upper bound the bucket the quantile lies in: the true
	// quantile is in (Lower, Upper]. Upper is +Inf in the overflow bucket.
	Lower, Upper float64
}

// Quantile estimates the q-quantile (0..1) the way Prometheus's
// histogram_quantile does for a classic histogram, so the figure matches
// a dashboard's, and says which bucket it lies in.
func (h Histogram) Quantile(q float64) Estimate {
	nan := Estimate{Value: math.NaN(), Lower: math.NaN(), Upper: math.NaN()}
	total := h.Total()
	if len(h.Buckets) < 2 || total == 0 || math.IsNaN(q) || q < 0 || q > 1 {
		return nan
	}
	rank := q * total
	// The first bucket whose cumulative count reaches the rank, among the
	// finite ones; none means the +Inf bucket.
	b := sort.Search(len(h.Buckets)-1, func(i int) bool { return h.Buckets[i].Count >= rank })
	if b == len(h.Buckets)-1 {
		lo := h.Buckets[b-1].UpperBound
		return Estimate{Value: lo, Lower: lo, Upper: math.Inf(1)}
	}
	end := h.Buckets[b].UpperBound
	if b == 0 && end <= 0 {
		return Estimate{Value: end, Lower: math.Inf(-1), Upper: end}
	}
	start, count := 0.0, h.Buckets[b].Count
	if b > 0 {
		start = h.Buckets[b-1].UpperBound
		count -= h.Buckets[b-1].Count
		rank -= h.Buckets[b-1].Count
	}
	return Estimate{Value: start + (end-start)*(rank/count), Lower: start, Upper: end}
}

// ShareAbove is the share (0..1) of observations above bound, exact when
// bound is one of the histogram's bucket bounds; ok is false otherwise or
// without observations.
func (h Histogram) ShareAbove(bound float64) (share float64, ok bool) {
	total := h.Total()
	if total == 0 {
		return 0, false
	}
	for _, b := range h.Buckets {
		if b.UpperBound == bound {
			return (total - b.Count) / total, true
		}
	}
	return 0, false
}

// ErrReset means a counter went down between two scrapes: the process
// restarted (or its histogram was reset) in between.
var ErrReset = errors.New("counters went down: the process restarted between the scrapes")

// ErrLayout means two scrapes' histograms have different buckets.
var ErrLayout = errors.New("the histogram's buckets changed between the scrapes")

// Sub is the histogram of the observations made after prev was taken:
// h minus prev, bucket by bucket. It returns ErrReset when any count or
// the sum went down, as Prometheus's rate() reads a reset.
func (h Histogram) Sub(prev Histogram) (Histogram, error) {
	if len(h.Buckets) != len(prev.Buckets) {
		return Histogram{}, ErrLayout
	}
	out := Histogram{Buckets: make([]Bucket, len(h.Buckets)), Sum: h.Sum - prev.Sum}
	for i, b := range h.Buckets {
		p := prev.Buckets[i]
		if b.UpperBound != p.UpperBound {
			return Histogram{}, ErrLayout
		}
		if b.Count < p.Count {
			return Histogram{}, ErrReset
		}
		out.Buckets[i] = Bucket{UpperBound: b.UpperBound, Count: b.Count - p.Count}
	}
	if out.Sum < 0 {
		// Durations are never negative: a smaller sum is a new process
		// (allowing for the float rounding of a long-running sum).
		if out.Sum < -1e-9*math.Max(1, prev.Sum) {
			return Histogram{}, ErrReset
		}
		out.Sum = 0
	}
	return out, nil
}

// formatLe writes a bound as the "le" label does.
func formatLe(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
