package analysis

import "github.com/iolens/iolens/internal/result"

// The tests read one result's limit and one sweep through these; the
// run's model reads them all at once.

// LimitFindings names, for each direction of r, the limit that binds it,
// read off the disk model fitted over r and others (the run's other
// results on the same target, or those known so far when results are
// analysed as they come): one test alone cannot tell a cap from latency,
// the curve over the depths can.
func LimitFindings(r *result.Result, others []*result.Result) []result.Finding {
	var peers []dirFacts
	for _, o := range others {
		if o == r || targetKey(o) != targetKey(r) && (o.Suite != "fio" || r.Suite != "fio") || o.Test.IOEngine == "null" {
			continue // (a null-engine test measured no disk)
		}
		peers = append(peers, allFacts(o)...)
	}
	fs, _ := limitFindings(r, peers)
	return fs
}

// AnalyzeSweep reads a sweep from its results (any order, repeats
// included). others are results of the same run outside the sweep; a
// test of the same direction with larger blocks tells an IOPS cap from a
// bandwidth cap when the sweep itself uses one block size. It returns
// false with fewer than three depths.
func AnalyzeSweep(name string, members, others []*result.Result) (Sweep, bool) {
	return analyzeSweep(name, members, others, nil)
}
