package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// crossSizes tells bandwidth caps from IOPS caps across block sizes: two
// capped curves of one direction at the same MB/s are one bandwidth cap;
// at the same IOPS, one IOPS cap. Each capped curve reads the others as
// crossOne does, in the model's order, but finds the next curve that
// changes its kind through indexes sorted by MB/s and by IOPS instead of
// reading every other curve: n log² n over one target's n capped curves,
// not n².
func crossSizes(m *Model) {
	// Only the capped curves of one run, target and direction are
	// compared: grouped first, so many runs stay linear.
	type scope struct{ run, target, dir string }
	capped := map[scope][]*Curve{}
	var order []scope
	for i := range m.Curves {
		c := &m.Curves[i]
		if !isCapped(c) {
			continue
		}
		sc := scope{c.Key.RunID, c.Key.Target, c.Key.Dir}
		if _, seen := capped[sc]; !seen {
			order = append(order, sc)
		}
		capped[sc] = append(capped[sc], c)
	}
	for _, sc := range order {
		cs := capped[sc]
		// Each curve's answer depends only on the others' keys, levels
		// and being capped, which crossing leaves alone: so the indexes
		// are built once and the curves changed in place.
		bw := newLevelIndex(cs, func(c *Curve) float64 { return c.LevelBW })
		iops := newLevelIndex(cs, func(c *Curve) float64 { return c.Level })
		for i, a := range cs {
			crossIndexed(a, i, cs, bw, iops)
		}
	}
}

// crossIndexed is crossOne for cs[at] against the rest of cs: from one
// curve that changes its kind to the next, in cs's order. A bandwidth
// cap turns to an IOPS cap at a curve of the same IOPS but not the same
// MB/s: the next of each is sought in turn until they meet, so curves
// that match in both (close block sizes) are passed over in a step.
func crossIndexed(a *Curve, at int, cs []*Curve, bw, iops *levelIndex) {
	bwLo, bwHi := bw.within(a.LevelBW)
	lvLo, lvHi := iops.near(a.Level, capTolerance)
	for p := -1; ; {
		var q int
		if a.Kind == result.CodeBandwidthCap {
			q = iops.next(lvLo, lvHi, p) // what could make it an IOPS cap
			for q >= 0 {
				o := bw.nextOutside(bwLo, bwHi, q-1)
				if o == q || o < 0 {
					break
				}
				q = iops.next(lvLo, lvHi, o-1)
			}
			if q >= 0 && bw.nextOutside(bwLo, bwHi, q-1) != q {
				q = -1
			}
		} else {
			q = bw.next(bwLo, bwHi, p) // what could make it a bandwidth cap
		}
		if q < 0 {
			return
		}
		p = q
		b := cs[q]
		if q == at || b.Key.BlockSize == a.Key.BlockSize {
			continue
		}
		sameBW := a.LevelBW > 0 && b.LevelBW > 0 && math.Min(a.LevelBW, b.LevelBW) >= (1-bwTolerance)*math.Max(a.LevelBW, b.LevelBW)
		switch {
		case sameBW && a.Kind != result.CodeBandwidthCap:
			a.Kind, a.Why = result.CodeBandwidthCap, a.Why+fmt.Sprintf("; %s moves the same %s MB/s: the cap is on bandwidth", b.Key, units.Figure(b.LevelBW/1e6))
		case !sameBW && sameLevel(a.Level, b.Level) && a.Kind != result.CodeIOPSCap:
			a.Kind, a.Why = result.CodeIOPSCap, a.Why+fmt.Sprintf("; %s runs at the same %s IOPS: the cap is on IOPS", b.Key, units.Figure(b.Level))
		}
	}
}

// levelIndex holds the positive levels of a list of curves in order of
// level, with a merge-sort tree over their places in the list: the first
// curve after a place whose level is within a range is found in
// O(log² n).
type levelIndex struct {
	vals []float64 // ascending
	tree [][]int   // tree[node]: the places under node, ascending
	n    int
	// none are the places of the curves with no positive level,
	// ascending.
	none []int
}

func newLevelIndex(cs []*Curve, level func(*Curve) float64) *levelIndex {
	var at []int
	var none []int
	for i, c := range cs {
		if level(c) > 0 {
			at = append(at, i)
		} else {
			none = append(none, i)
		}
	}
	sort.SliceStable(at, func(i, j int) bool { return level(cs[at[i]]) < level(cs[at[j]]) })
	x := &levelIndex{n: len(at), vals: make([]float64, len(at)), none: none}
	for i, j := range at {
		x.vals[i] = level(cs[j])
	}
	if x.n > 0 {
		x.tree = make([][]int, 4*x.n)
		x.build(1, 0, x.n, at)
	}
	return x
}

func (x *levelIndex) build(node, lo, hi int, at []int) {
	if hi-lo == 1 {
		x.tree[node] = []int{at[lo]}
		return
	}
	mid := (lo + hi) / 2
	x.build(2*node, lo, mid, at)
	x.build(2*node+1, mid, hi, at)
	l, r := x.tree[2*node], x.tree[2*node+1]
	merged := make([]int, 0, len(l)+len(r))
	i, j := 0, 0
	for i < len(l) || j < len(r) {
		if j == len(r) || i < len(l) && l[i] < r[j] {
			merged = append(merged, l[i])
			i++
		} else {
			merged = append(merged, r[j])
			j++
		}
	}
	x.tree[node] = merged
}

// near is the range of the index's levels within tol of v, a little
// wider than the comparisons themselves (which the caller makes again)
// so that rounding never leaves a match out.
func (x *levelIndex) near(v, tol float64) (lo, hi int) {
	if v <= 0 {
		return 0, 0
	}
	loose := tol * (1 + 1e-9)
	lo = sort.Search(x.n, func(i int) bool { return x.vals[i] >= v*(1-loose) })
	hi = sort.Search(x.n, func(i int) bool { return x.vals[i]*(1-loose) > v })
	return lo, hi
}

// within is the range of the index's levels at the same MB/s as v, by
// crossOne's own comparison: exact, since rounding a product by a
// constant keeps the order.
func (x *levelIndex) within(v float64) (lo, hi int) {
	if v <= 0 {
		return 0, 0
	}
	same := func(y float64) bool { return math.Min(v, y) >= (1-bwTolerance)*math.Max(v, y) }
	lo = sort.Search(x.n, func(i int) bool { return x.vals[i] >= v || same(x.vals[i]) })
	hi = sort.Search(x.n, func(i int) bool { return x.vals[i] > v && !same(x.vals[i]) })
	return lo, hi
}

// nextOutside is the first place after p whose level is not in
// [lo, hi) (or is not positive), or -1.
func (x *levelIndex) nextOutside(lo, hi, p int) int {
	best := -1
	if i := sort.SearchInts(x.none, p+1); i < len(x.none) {
		best = x.none[i]
	}
	for _, q := range []int{x.next(0, lo, p), x.next(hi, x.n, p)} {
		if q >= 0 && (best < 0 || q < best) {
			best = q
		}
	}
	return best
}

// next is the first place after p of the levels in [lo, hi), or -1.
func (x *levelIndex) next(lo, hi, p int) int {
	if lo >= hi {
		return -1
	}
	return x.query(1, 0, x.n, lo, hi, p)
}

func (x *levelIndex) query(node, nlo, nhi, lo, hi, p int) int {
	if hi <= nlo || nhi <= lo {
		return -1
	}
	if lo <= nlo && nhi <= hi {
		t := x.tree[node]
		i := sort.SearchInts(t, p+1)
		if i < len(t) {
			return t[i]
		}
		return -1
	}
	mid := (nlo + nhi) / 2
	a := x.query(2*node, nlo, mid, lo, hi, p)
	b := x.query(2*node+1, mid, nhi, lo, hi, p)
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}
