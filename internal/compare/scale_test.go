package compare_test

import (
	"fmt"
	"testing"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/scaletest"
)

// manyResults is a run of n tests, each with a second-by-second series:
// random 4 KiB reads at six depths, flat at 8,000 IOPS past QD4; scale
// moves every rate (the other side of a comparison).
func manyResults(run string, n int, scale float64) []result.Result {
	rs := make([]result.Result, n)
	for i := range rs {
		qd := 1 << (i % 6)
		iops := scale * min(2000*float64(qd), 8000)
		series := make([]result.FioSample, 10)
		for s := range series {
			series[s] = result.FioSample{T: float64(s + 1), ReadIOPS: iops * (1 + 0.01*float64(s%3)), ReadBWBytes: iops * 4096}
		}
		rs[i] = result.Result{Schema: result.Schema, RunID: run, Suite: "basic", Index: i + 1, Repeat: 1, Status: "ok",
			Target:    result.Target{Kind: "dir", Path: "/mnt/" + run},
			Test:      result.TestSpec{Name: fmt.Sprintf("test-%d", i), RW: "randread", BlockSize: 4096, IODepth: qd, NumJobs: 1, Direct: true},
			FioSeries: series, SampleIntervalS: 1,
			Read: &result.DirResult{IOPS: iops, BWBytes: iops * 4096, TotalIOs: int64(iops * 10), RuntimeMs: 10_000,
				Lat: result.Latency{N: uint64(iops * 10), MinNs: 100e3, MeanNs: float64(qd) / iops * 1e9, MaxNs: 5e6, P50Ns: 1e6, P99Ns: 3e6, P999Ns: 4e6}}}
	}
	return rs
}

func compareMany(n int) compare.Comparison {
	return compareTold([]compare.Operand{{Name: "a", Results: manyResults("a", n, 1)}, {Name: "b", Results: manyResults("b", n, 0.9)}})
}

// TestCompareLinear: comparing runs of 10 times the tests takes about 10
// times the work.
func TestCompareLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("reads inputs of thousands of items several times to compare the work (seconds on a busy machine); skipped under -short")
	}
	if c := compareMany(6); len(c.Rows) != 6 {
		t.Fatalf("%d rows, want 6", len(c.Rows))
	}
	scaletest.Linear(t, "Compare", 500, func(n int) { compareMany(n) })
}

// BenchmarkCompare compares two runs of 32 tests each (a large suite),
// and of 10, 100 and 1,000 times as many.
func BenchmarkCompare(b *testing.B) {
	scaletest.Bench(b, 32, "test", func(n int) func() {
		return func() { compareMany(n) }
	})
}
