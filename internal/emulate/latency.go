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

// minHitRatio bounds a bimodal's hit ratio away from 0 and 1.
const minHitRatio = 1e-6

// Dist is a latency distribution, one of:
//   - fixed: Median alone ("2ms");
//   - uniform: Median ± Jitter ("2ms±0.5ms", or "2ms+-0.5ms");
//   - log-normal: Median and the value Tail at percentile Pct
//     ("p50=1ms,p99=4ms"), drawn values capped at MaxLatency;
//   - bimodal, a cache in front of slower media: Hit with probability
//     HitRatio, else Miss ("hit=0.2ms,miss=8ms,hitratio=0.7").
//
// The zero value adds no latency.
type Dist struct {
	Median time.Duration `json:"median_ns"`
	Jitter time.Duration `json:"jitter_ns,omitempty"`
	Pct    float64       `json:"pct,omitempty"`
	Tail   time.Duration `json:"tail_ns,omitempty"`
	// Hit and Miss are the two latencies of a bimodal distribution, and
	// HitRatio the share of IOs (above 0, below 1) that take Hit.
	Hit      time.Duration `json:"hit_ns,omitempty"`
	Miss     time.Duration `json:"miss_ns,omitempty"`
	HitRatio float64       `json:"hit_ratio,omitempty"`
}

// Fixed is a distribution that always takes d.
func Fixed(d time.Duration) Dist { return Dist{Median: d} }

// Zero says whether the distribution adds nothing.
func (d Dist) Zero() bool { return d == Dist{} }

func (d Dist) lognormal() bool { return d.Pct > 0 }

func (d Dist) bimodal() bool { return d.HitRatio != 0 || d.Hit != 0 || d.Miss != 0 }

// sigma is the log-normal's shape: ln(Tail/Median) over the standard
// normal's quantile at Pct.
func (d Dist) sigma() float64 {
	return math.Log(float64(d.Tail)/float64(d.Median)) / normQuantile(d.Pct/100)
}

func normQuantile(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

// Validate checks the distribution's figures.
func (d Dist) Validate() error {
	if d.bimodal() {
		switch {
		case d.Median != 0 || d.Jitter != 0 || d.Pct != 0 || d.Tail != 0:
			return errors.New("a hit/miss latency takes no other figures")
		case math.IsNaN(d.HitRatio) || d.HitRatio < minHitRatio || d.HitRatio > 1-minHitRatio:
			return fmt.Errorf("hit ratio %g: between 0.000001 and 0.999999 (all hits or all misses is a fixed latency)", d.HitRatio)
		case d.Hit < 0 || d.Miss > MaxLatency:
			return fmt.Errorf("hit and miss: 0 or more, at most %v", MaxLatency)
		case d.Hit >= d.Miss:
			return errors.New("a hit must be faster than a miss")
		}
		return nil
	}
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
	case d.bimodal():
		if r.Float64() < d.HitRatio {
			return d.Hit
		}
		return d.Miss
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
	case d.bimodal():
		if q <= d.HitRatio {
			return d.Hit
		}
		return d.Miss
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
	switch {
	case d.lognormal():
		return 0
	case d.bimodal():
		return d.Hit
	}
	return d.Median - d.Jitter
}

// Mean is the distribution's mean: what an IO takes on average, so QD1
// runs at about 1/Mean IOPS and N channels serve at most N/Mean. The
// log-normal's is exp(sigma^2/2) times its median (its cap at
// MaxLatency left out).
func (d Dist) Mean() time.Duration {
	switch {
	case d.bimodal():
		return time.Duration(d.HitRatio*float64(d.Hit) + (1-d.HitRatio)*float64(d.Miss))
	case d.lognormal():
		s := d.sigma()
		return time.Duration(math.Min(float64(d.Median)*math.Exp(s*s/2), float64(MaxLatency)))
	}
	return d.Median
}

// String prints the distribution as ParseDist reads it.
func (d Dist) String() string {
	switch {
	case d.Jitter > 0:
		return d.Median.String() + "±" + d.Jitter.String()
	case d.lognormal():
		return fmt.Sprintf("p50=%v,p%s=%v", d.Median, strconv.FormatFloat(d.Pct, 'f', -1, 64), d.Tail)
	case d.bimodal():
		return fmt.Sprintf("hit=%v,miss=%v,hitratio=%s", d.Hit, d.Miss, strconv.FormatFloat(d.HitRatio, 'f', -1, 64))
	}
	return d.Median.String()
}

const distWant = "a latency such as 2ms, 2ms±0.5ms (or 2ms+-0.5ms), p50=1ms,p99=4ms, or hit=0.2ms,miss=8ms,hitratio=0.7"

// ParseDist reads a latency distribution: "2ms" (fixed), "2ms±0.5ms" or
// "2ms+-0.5ms" (uniform between 1.5 and 2.5 ms), "p50=1ms,p99=4ms"
// (log-normal with that median and that 99th percentile),
// "hit=0.2ms,miss=8ms,hitratio=0.7" (0.2 ms for 70% of IOs, 8 ms for the
// rest; the ratio also as 70%). Durations take units.ParseDuration's
// spellings.
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
	if strings.HasPrefix(t, "hit") || strings.HasPrefix(t, "miss") {
		seen := map[string]bool{}
		for _, part := range strings.Split(t, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
			k = strings.TrimSpace(k)
			if !ok || seen[k] {
				return Dist{}, bad(fmt.Sprintf("%q: want hit=DURATION, miss=DURATION and hitratio=RATIO, each once", part))
			}
			seen[k] = true
			var err error
			switch k {
			case "hit":
				d.Hit, err = dur(v)
			case "miss":
				d.Miss, err = dur(v)
			case "hitratio":
				d.HitRatio, err = parseRatio(v)
				if err != nil {
					err = bad(fmt.Sprintf("hitratio %q: %v", v, err))
				}
			default:
				return Dist{}, bad(fmt.Sprintf("%q: the keys are hit, miss and hitratio", k))
			}
			if err != nil {
				return Dist{}, err
			}
		}
		if !seen["hit"] || !seen["miss"] || !seen["hitratio"] {
			return Dist{}, bad("give hit, miss and hitratio")
		}
	} else if strings.HasPrefix(t, "p") {
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

// parseRatio reads a share: "0.7" or "70%".
func parseRatio(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		v, err := units.ParseNumber(strings.TrimSpace(p), 0, 100)
		return v / 100, err
	}
	return units.ParseNumber(t, 0, 1)
}
