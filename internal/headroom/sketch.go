package headroom

import "math"

// sketch keeps a distribution in logarithmic bins 2% wide, so that a
// percentile of a month of per-step rates costs a fixed few kilobytes: a
// percentile read from it is within 1% of the exact one (and never above
// the exact maximum, which it keeps apart).
type sketch struct {
	bins  []uint32
	zeros uint64
	n     uint64
	max   float64
}

const (
	sketchMin   = 1e-3
	sketchGrow  = 1.02
	sketchBins  = 1600 // up to 1e-3 x 1.02^1600, about 6e10
	sketchFloor = sketchMin
)

var logGrow = math.Log(sketchGrow)

func (s *sketch) add(v float64) {
	if math.IsNaN(v) || v < 0 {
		return
	}
	s.n++
	if v > s.max {
		s.max = v
	}
	if v < sketchFloor {
		s.zeros++
		return
	}
	if s.bins == nil {
		s.bins = make([]uint32, sketchBins)
	}
	i := int(math.Log(v/sketchMin) / logGrow)
	i = min(max(i, 0), sketchBins-1)
	s.bins[i]++
}

// quantile is the q-quantile (0 < q <= 1): the geometric middle of the
// bin that holds the rank, at most the maximum; NaN with no values.
func (s *sketch) quantile(q float64) float64 {
	if s.n == 0 {
		return math.NaN()
	}
	rank := uint64(math.Ceil(q * float64(s.n)))
	rank = max(rank, 1)
	if rank <= s.zeros {
		return 0
	}
	seen := s.zeros
	for i, c := range s.bins {
		seen += uint64(c)
		if seen >= rank {
			return math.Min(s.max, sketchMin*math.Pow(sketchGrow, float64(i)+0.5))
		}
	}
	return s.max
}
