package main

import (
	"context"
	"fmt"
	"time"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
)

// untilSteady runs the same 4k random-write test on one emulated disk,
// fixed for 60 s and with --until-steady (20 s minimum, 60 s maximum), in
// alternating pairs, and reports the wall-time ratio and the difference in
// reported IOPS. A write-cache disk, which is never steady, shows the
// other side: --until-steady then runs to the maximum (-cache-pairs).
func untilSteady(iops float64, pairs, cachePairs int) error {
	ctx := context.Background()
	randwrite := result.TestSpec{Name: "randwrite-4k-qd16", RW: "randwrite", BlockSize: 4096, IODepth: 16, NumJobs: 1,
		Direct: true, IOEngine: "libaio", RuntimeS: 60}
	seqwrite := result.TestSpec{Name: "write-1m-qd4", RW: "write", BlockSize: 1 << 20, IODepth: 4, NumJobs: 1,
		Direct: true, IOEngine: "libaio", RuntimeS: 60}
	disks := []struct {
		name  string
		spec  emulate.Spec
		test  result.TestSpec
		pairs int
	}{
		{fmt.Sprintf("static %.0f IOPS cap", iops), emulate.Spec{Name: "bench-steady", Limits: emulate.Limits{ReadIOPS: iops, WriteIOPS: iops}}, randwrite, pairs},
		{"write cache 300 MB (80 -> 20 MB/s)", emulate.Spec{Name: "bench-cache", Limits: emulate.Limits{ReadBPS: 20e6, WriteBPS: 20e6},
			Cache: emulate.CacheReadWrite, CacheBPS: 80e6, CacheIOPS: 2000, CacheBytes: 300e6}, seqwrite, cachePairs},
	}
	for _, dk := range disks {
		if dk.pairs < 1 {
			continue
		}
		spec := dk.spec
		spec.SizeBytes = 1 << 30
		d, err := emulate.Create(ctx, spec)
		if err != nil {
			return err
		}
		err = steadyPairs(ctx, d, dk.name, dk.test, dk.pairs)
		if derr := d.ForceDestroy(context.WithoutCancel(ctx)); err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func steadyPairs(ctx context.Context, d *emulate.Disk, name string, test result.TestSpec, pairs int) error {
	run := func(steady bool) (wall, iops, measured float64, err error) {
		cfg := runner.Config{Suite: result.Suite{Name: "bench", Tests: []result.TestSpec{test}}, Dir: d.Mount, Emulated: d.Name,
			CommandPrefix: d.CommandPrefix(), NoPrecondition: true, SizeBytes: 256 << 20}
		if steady {
			cfg.MaxRuntimeS = 60
			cfg.Stop = func(result.TestSpec) runner.StopRule {
				steady := analysis.SteadyStop(20)
				return func(st runner.Status) (bool, string) { return steady(st.Elapsed, st.IOPS) }
			}
		}
		var res result.Result
		t0 := time.Now()
		err = runner.Run(ctx, cfg, func(r result.Result) error { res = r; return nil }, nil)
		wall = time.Since(t0).Seconds()
		if err != nil {
			return
		}
		_, _, measured, _ = analysis.UntilSteady([]result.Result{res})
		return wall, res.Write.IOPS, measured, nil
	}
	if pairs < 1 {
		return nil
	}
	fmt.Printf("--until-steady (min 20 s, max 60 s) against fixed 60 s, %s, %s:\n", name, test.Summary())
	var ratios, diffs []float64
	for p := 0; p < pairs; p++ {
		var fw, fi, sw, si, sm float64
		var err error
		// Alternate the order so that drift spreads over both.
		if p%2 == 0 {
			if fw, fi, _, err = run(false); err == nil {
				sw, si, sm, err = run(true)
			}
		} else {
			if sw, si, sm, err = run(true); err == nil {
				fw, fi, _, err = run(false)
			}
		}
		if err != nil {
			return err
		}
		ratios = append(ratios, sw/fw)
		diffs = append(diffs, si/fi-1)
		fmt.Printf("  pair %d: fixed %.1f s wall, %.0f IOPS; until-steady %.1f s wall (%.0f s measured), %.0f IOPS\n", p+1, fw, fi, sw, sm, si)
	}
	fmt.Printf("  median wall-time ratio until-steady/fixed %.2f; median IOPS difference %+.1f%%\n", median(ratios), median(diffs)*100)
	return nil
}
