package report

import (
	"bytes"
	"fmt"
	"github.com/iolens/iolens/internal/diagnosis"
	"io"
	"testing"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/scaletest"
)

// manyResults is what a fio text output of n jobs reads as: random 4 KiB
// reads at six depths, flat at 8,000 IOPS past QD4, each job named
// apart, all of one run.
func manyResults(n int) []result.Result {
	rs := make([]result.Result, n)
	for i := range rs {
		qd := 1 << (i % 6)
		iops := min(2000*float64(qd), 8000)
		rs[i] = result.Result{Schema: result.Schema, RunID: "fio:many.txt", Suite: "fio", Index: i + 1, Repeat: 1, Status: "ok",
			Target: result.Target{Kind: "file", Path: "many.txt"},
			Test:   result.TestSpec{Name: fmt.Sprintf("job%d", i), RW: "randread", BlockSize: 4096, IODepth: qd, NumJobs: 1, Direct: true},
			Read: &result.DirResult{IOPS: iops, BWBytes: iops * 4096, TotalIOs: int64(iops * 10), RuntimeMs: 10_000,
				Lat: result.Latency{N: uint64(iops * 10), MinNs: 100e3, MeanNs: float64(qd) / iops * 1e9, MaxNs: 5e6, P50Ns: 1e6, P99Ns: 3e6, P999Ns: 4e6}}}
	}
	return rs
}

// TestReportLinear: the text report (grouping by target, the diagnosis,
// a row per test) and reading results back take about 10 times the work
// for 10 times the results.
func TestReportLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("reads inputs of thousands of items several times to compare the work (seconds on a busy machine); skipped under -short")
	}
	scaletest.Linear(t, "text report", 1000, func(n int) {
		if err := Text(io.Discard, diagnosis.Replay(manyResults(n))); err != nil {
			t.Fatal(err)
		}
	})
	ins := map[int][]byte{}
	for _, n := range []int{300, 3000} {
		var b bytes.Buffer
		if err := NDJSON(&b, manyResults(n)); err != nil {
			t.Fatal(err)
		}
		ins[n] = b.Bytes()
	}
	scaletest.Linear(t, "read back", 300, func(n int) {
		rs, err := ReadResults(bytes.NewReader(ins[n]), "many")
		if err != nil || len(rs) != n {
			t.Fatalf("%d results, %v; want %d", len(rs), err, n)
		}
	})
}

// BenchmarkTextReport writes the text report of 32 results (a large
// suite's run), and of 10, 100 and 1,000 times as many.
func BenchmarkTextReport(b *testing.B) {
	scaletest.Bench(b, 32, "result", func(n int) func() {
		rs := manyResults(n)
		return func() {
			if err := Text(io.Discard, diagnosis.Replay(rs)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
