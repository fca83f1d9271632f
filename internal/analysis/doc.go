// Package analysis draws conclusions from benchmark results: statistics
// over repeated runs, steady state, stalls, cliffs, writeback tails, QD
// sweep regimes and the etcd fdatasync verdict. Every function is pure:
// results in, findings (result.Finding) and figures out; no IO.
//
// Stall and cliff detection is streaming, so that a live sampler (iolens
// watch) can use the same code as the after-the-fact analysis. Feed one
// sample per interval, oldest first, and collect findings as they are
// confirmed:
//
//	sd := analysis.NewStallDetector(analysis.StallConfig{Unit: analysis.UnitBytes})
//	cd := analysis.NewCliffDetector(analysis.CliffConfig{Unit: analysis.UnitBytes})
//	for each sample {
//		found = append(found, sd.Add(t, bytesPerS, devSample)...)
//		found = append(found, cd.Add(t, bytesPerS, devSample)...)
//	}
//	found = append(found, sd.Flush()...)
//	found = append(found, cd.Flush()...)
//
// t is the end of the sample's window in seconds (fio's log convention), v
// the rate over that window, and dev the device sample of the same window
// (nil when there is none). A gap in t means windows without completions
// and counts as zero throughput. Memory is bounded whatever the length of
// the series: the detectors keep running sums, a fixed-size histogram for
// the reference level and a few recent samples.
//
// SteadyStop is the stop rule of iolens run --until-steady; Steady applies the same SNIA PTS criteria to a whole
// series. Describe, WelchT and Repeats are the statistics shared with
// history and compare.
package analysis
