package emulate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/units"
)

// Latency is the time each kind of IO takes at least on an emulated disk.
type Latency struct {
	Read  Dist `json:"read"`
	Write Dist `json:"write"`
	// Flush is a cache flush (fsync, fdatasync, a journal commit): the
	// loop device passes them down as one request each.
	Flush Dist `json:"flush"`
}

// MaxLatency bounds every configured and every drawn latency.
const MaxLatency = 10 * time.Second

// Dist is a latency distribution, one of:
//   - fixed: Median alone ("2ms");
//   - uniform: Median ± Jitter ("2ms±0.5ms", or "2ms+-0.5ms");
//   - log-normal: Median and the value Tail at percentile Pct
//     ("p50=1ms,p99=4ms"), drawn values capped at MaxLatency.
//
// The zero value adds no latency.
type Dist struct {
	Median time.Duration `json:"median_ns"`
	Jitter time.Duration `json:"jitter_ns,omitempty"`
	Pct    float64       `json:"pct,omitempty"`
	Tail   time.Duration `json:"tail_ns,omitempty"`
}

// Fixed is a distribution that always takes d.
func Fixed(d time.Duration) Dist { return Dist{Median: d} }

// Zero says whether the distribution adds nothing.
func (d Dist) Zero() bool { return d == Dist{} }

func (d Dist) lognormal() bool { return d.Pct > 0 }

// sigma is the log-normal's shape: ln(Tail/Median) over the standard
// normal's quantile at Pct.
func (d Dist) sigma() float64 {
	return math.Log(float64(d.Tail)/float64(d.Median)) / normQuantile(d.Pct/100)
}

func normQuantile(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

// Validate checks the distribution's figures.
func (d Dist) Validate() error {
	switch {
	case d.Median < 0 || d.Jitter < 0 || d.Tail < 0:
		return errors.New("negative")
	case d.Median > MaxLatency || d.Tail > MaxLatency:
		return fmt.Errorf("at most %v", MaxLatency)
	case d.Jitter > d.Median:
		return errors.New("the jitter is larger than the latency (it would go below 0)")
	case d.Median+d.Jitter > MaxLatency:
		return fmt.Errorf("latency plus jitter: at most %v", MaxLatency)
	case d.Jitter > 0 && d.lognormal():
		return errors.New("either a jitter or percentiles, not both")
	case d.lognormal() && (math.IsNaN(d.Pct) || d.Pct <= 50 || d.Pct >= 100):
		return fmt.Errorf("percentile p%g: between p50 and p100", d.Pct)
	case d.lognormal() && (d.Median <= 0 || d.Tail <= d.Median):
		return fmt.Errorf("p%g must be above p50 (and p50 above 0)", d.Pct)
	case !d.lognormal() && d.Tail != 0:
		return errors.New("a tail value needs its percentile")
	}
	return nil
}

// Sample draws one latency.
func (d Dist) Sample(r *rand.Rand) time.Duration {
	switch {
	case d.Jitter > 0:
		return d.Median - d.Jitter + time.Duration(r.Float64()*float64(2*d.Jitter))
	case d.lognormal():
		v := float64(d.Median) * math.Exp(d.sigma()*r.NormFloat64())
		return time.Duration(math.Min(v, float64(MaxLatency)))
	}
	return d.Median
}

// Quantile is the distribution's value at q (0 < q < 1).
func (d Dist) Quantile(q float64) time.Duration {
	switch {
	case d.Jitter > 0:
		return d.Median - d.Jitter + time.Duration(q*float64(2*d.Jitter))
	case d.lognormal():
		v := float64(d.Median) * math.Exp(d.sigma()*normQuantile(q))
		return time.Duration(math.Min(v, float64(MaxLatency)))
	}
	return d.Median
}

// Min is the least the distribution draws.
func (d Dist) Min() time.Duration {
	if d.lognormal() {
		return 0
	}
	return d.Median - d.Jitter
}

// String prints the distribution as ParseDist reads it.
func (d Dist) String() string {
	switch {
	case d.Jitter > 0:
		return d.Median.String() + "±" + d.Jitter.String()
	case d.lognormal():
		return fmt.Sprintf("p50=%v,p%s=%v", d.Median, strconv.FormatFloat(d.Pct, 'f', -1, 64), d.Tail)
	}
	return d.Median.String()
}

const distWant = "a latency such as 2ms, 2ms±0.5ms (or 2ms+-0.5ms), or p50=1ms,p99=4ms"

// ParseDist reads a latency distribution: "2ms" (fixed), "2ms±0.5ms" or
// "2ms+-0.5ms" (uniform between 1.5 and 2.5 ms), "p50=1ms,p99=4ms"
// (log-normal with that median and that 99th percentile). Durations take
// units.ParseDuration's spellings.
func ParseDist(s string) (Dist, error) {
	bad := func(why string) error {
		return &units.ValueError{Kind: "latency", Value: s, Why: why, Want: distWant}
	}
	t := strings.TrimSpace(s)
	if len(t) > 100 {
		return Dist{}, bad("too long")
	}
	dur := func(v string) (time.Duration, error) {
		d, err := units.ParseDuration(v)
		if err != nil {
			var ve *units.ValueError
			if errors.As(err, &ve) {
				return 0, bad(fmt.Sprintf("%q: %s", v, ve.Why))
			}
			return 0, bad(err.Error())
		}
		if d > MaxLatency {
			return 0, bad(fmt.Sprintf("%q: at most %v", v, MaxLatency))
		}
		return d, nil
	}
	var d Dist
	if strings.HasPrefix(t, "p") {
		seen := map[string]bool{}
		for _, part := range strings.Split(t, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
			if !ok || !strings.HasPrefix(k, "p") || seen[k] {
				return Dist{}, bad(fmt.Sprintf("%q: want pNN=DURATION, each percentile once", part))
			}
			seen[k] = true
			p, err := units.ParseNumber(k[1:], 0, 100)
			if err != nil {
				return Dist{}, bad(fmt.Sprintf("percentile %q", k))
			}
			x, err := dur(v)
			if err != nil {
				return Dist{}, err
			}
			switch {
			case p == 50:
				d.Median = x
			case d.Pct != 0:
				return Dist{}, bad("give p50 and one higher percentile")
			default:
				d.Pct, d.Tail = p, x
			}
		}
		if !seen["p50"] {
			return Dist{}, bad("p50 is missing")
		}
	} else {
		base, jit, ok := strings.Cut(t, "±")
		if !ok {
			base, jit, ok = strings.Cut(t, "+-")
		}
		var err error
		if d.Median, err = dur(base); err != nil {
			return Dist{}, err
		}
		if ok {
			if d.Jitter, err = dur(jit); err != nil {
				return Dist{}, err
			}
		}
	}
	if err := d.Validate(); err != nil {
		return Dist{}, bad(err.Error())
	}
	return d, nil
}
