package analysis

import (
	"fmt"
	"testing"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/scaletest"
)

// manyResults makes n results of plain fio output, as one fio file with
// n jobs reads: random 4 KiB reads at six depths, a rate that flattens at
// 8,000 IOPS, each job named apart. shapes > 1 spreads them over that
// many block sizes (each its own curve and implicit sweep).
func manyResults(n, shapes int) []result.Result {
	rs := make([]result.Result, n)
	for i := range rs {
		qd := 1 << (i % 6)
		iops := min(2000*float64(qd), 8000)
		bs := int64(4096 * (1 + i%shapes))
		rs[i] = result.Result{Schema: result.Schema, RunID: "fio:many.txt", Suite: "fio", Index: i + 1, Repeat: 1, Status: "ok",
			Target: result.Target{Kind: "file", Path: "many.txt"},
			Test:   result.TestSpec{Name: fmt.Sprintf("job%d", i), RW: "randread", BlockSize: bs, IODepth: qd, NumJobs: 1, Direct: true},
			Read: &result.DirResult{IOPS: iops, BWBytes: iops * float64(bs), TotalIOs: int64(iops * 10), RuntimeMs: 10_000,
				Lat: result.Latency{N: uint64(iops * 10), MinNs: 100e3, MeanNs: float64(qd) / iops * 1e9, MaxNs: 5e6}}}
	}
	return rs
}

// manyShapes makes n results of plain fio output over n/6 IO shapes, each
// its own block size at six depths: every shape is its own curve and
// implicit sweep, closed at its deepest result.
func manyShapes(n int) []result.Result {
	rs := manyResults(n, 1)
	for i := range rs {
		bs := int64(4096 * (1 + i/6))
		rs[i].Test.BlockSize = bs
		rs[i].Read.BWBytes = rs[i].Read.IOPS * float64(bs)
	}
	return rs
}

// TestAnalysisLinear: the analysis of many results (the model refitted
// over a run, a replay of saved results) takes work in proportion to
// them: 10 times the results, not 100 times the work.
func TestAnalysisLinear(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shapes int
		n      int
		f      func([]result.Result)
	}{
		{"Revise", 1, 600, Revise},
		{"Annotate", 1, 600, Annotate},
		// Many distinct shapes: each sweep's close reads its own curve,
		// not every curve so far again.
		{"Annotate shapes", 0, 120, Annotate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := func(n int) []result.Result { return manyResults(n, tc.shapes) }
			if tc.shapes == 0 {
				in = manyShapes
			}
			scaletest.Linear(t, tc.name, tc.n, func(n int) { tc.f(in(n)) })
		})
	}
}

// TestSessionLinear: a run's results analysed as they come (a Kubernetes
// run over many nodes: six depths on each node's volume) take about 10
// times the work for 10 times the nodes.
func TestSessionLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("analyses thousands of results several times (seconds on a busy machine); skipped under -short")
	}
	nodes := func(n int) []result.Result {
		rs := manyResults(n, 1)
		for i := range rs {
			rs[i].Suite, rs[i].RunID = "basic", "run"
			rs[i].Target.Path = fmt.Sprintf("node-%d:/data", i/6)
			rs[i].Test.Name = fmt.Sprintf("randread-qd%d", rs[i].Test.IODepth)
		}
		return rs
	}
	scaletest.Linear(t, "Session", 120, func(n int) {
		s := NewPlanSession()
		rs := nodes(n)
		for i := range rs {
			s.Add(&rs[i])
		}
	})
}

// BenchmarkRevise reads the limits of 32 results (a run of a large
// suite) again, and of 10, 100 and 1,000 times as many.
func BenchmarkRevise(b *testing.B) {
	scaletest.Bench(b, 32, "result", func(n int) func() {
		return func() { Revise(manyResults(n, 1)) }
	})
}

// BenchmarkAnnotate replays 32 saved results, and 10, 100 and 1,000 times
// as many.
func BenchmarkAnnotate(b *testing.B) {
	scaletest.Bench(b, 32, "result", func(n int) func() {
		return func() { Annotate(manyResults(n, 1)) }
	})
}

// BenchmarkAnnotateShapes replays 32 saved results over distinct IO
// shapes (six depths each), and 10 and 100 times as many.
func BenchmarkAnnotateShapes(b *testing.B) {
	for _, n := range []int{36, 360, 3600} {
		b.Run(fmt.Sprintf("results=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Annotate(manyShapes(n))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/result")
		})
	}
}
