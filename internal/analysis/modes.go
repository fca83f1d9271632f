package analysis

import (
	"math"

	"github.com/iolens/iolens/internal/result"
)

// Mode is one population of a latency histogram: its share of the IOs and
// its level (the median of its IOs).
type Mode struct {
	Share float64 `json:"share"`
	LatNs float64 `json:"lat_ns"`
}

// What two populations need to be told apart from one distribution with
// a tail: enough IOs, a minor population of at least 5%, levels at least
// 2.5 times apart, and a dip between them to at most half the minor
// population's peak.
const (
	modesMinIOs   = 500
	modesMinShare = 0.05
	modesMinRatio = 2.5
	modesMaxDip   = 0.5
	// modesBinsPerOctave is the resolution the histogram is read at:
	// quarter octaves (19% wide), coarse enough that fio's own buckets
	// (1/64 of an octave) do not make peaks of noise.
	modesBinsPerOctave = 4
	// modesMinPeak is the least count, smoothed, of a population's
	// peak bin: fewer is noise.
	modesMinPeak = 20
)

// LatencyModes finds two latency populations in h, as a cache in front of
// slower media gives (its hits and its misses): the faster first. It
// returns nil when h holds one population, a tail included, or too few
// IOs to tell.
func LatencyModes(h *result.Histogram) []Mode {
	if h == nil || h.Count() < modesMinIOs {
		return nil
	}
	bs := h.Buckets()
	bin := func(ns uint64) int { return int(math.Floor(math.Log2(math.Max(float64(ns), 1)) * modesBinsPerOctave)) }
	lo, hi := bin(bs[0].Ns), bin(bs[len(bs)-1].Ns)
	c := make([]float64, hi-lo+3) // one empty bin each side
	for _, b := range bs {
		c[bin(b.Ns)-lo+1] += float64(b.Count)
	}
	s := make([]float64, len(c))
	for i := 1; i < len(c)-1; i++ {
		s[i] = (c[i-1] + 2*c[i] + c[i+1]) / 4
	}
	total := float64(h.Count())
	minSep := int(math.Ceil(math.Log2(modesMinRatio) * modesBinsPerOctave))
	// The split that leaves the deepest dip between two peaks, each with
	// its share.
	best, bestDip := -1, math.Inf(1)
	var left float64
	for k := 1; k < len(s)-2; k++ {
		left += c[k]
		if left/total < modesMinShare || 1-left/total < modesMinShare {
			continue
		}
		pl, pr := argmax(s[:k+1]), k+1+argmax(s[k+1:])
		if pr-pl < minSep || s[pl] < modesMinPeak || s[pr] < modesMinPeak {
			continue
		}
		v := pl + argmin(s[pl:pr+1])
		dip := s[v] / math.Min(s[pl], s[pr])
		if dip <= modesMaxDip && dip < bestDip && v == k {
			best, bestDip = k, dip
		}
	}
	if best < 0 {
		return nil
	}
	// The two populations split at the valley bin's upper edge (the
	// array's bin k is the histogram's lo+k-1): its IOs go left.
	split := uint64(math.Exp2(float64(lo+best) / modesBinsPerOctave))
	var a, b result.Histogram
	for _, x := range bs {
		if x.Ns < split {
			a.Add(x.Ns, x.Count)
		} else {
			b.Add(x.Ns, x.Count)
		}
	}
	fa := float64(a.Count()) / total
	if fa < modesMinShare || 1-fa < modesMinShare {
		return nil
	}
	la, lb := a.Percentile(50), b.Percentile(50)
	if lb < modesMinRatio*la {
		return nil
	}
	return []Mode{{Share: fa, LatNs: la}, {Share: 1 - fa, LatNs: lb}}
}

func argmax(x []float64) int {
	j := 0
	for i, v := range x {
		if v > x[j] {
			j = i
		}
	}
	return j
}

func argmin(x []float64) int {
	j := 0
	for i, v := range x {
		if v < x[j] {
			j = i
		}
	}
	return j
}
