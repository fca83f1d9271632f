package etcdmetrics

import (
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

// Seed 004 measured the fdatasync p99 of fio's etcd job on a P30 in 31
// Azure regions (2021) and says to look at etcd's own metrics as well.
// The fio test's verdict on those figures, by hand: 19 regions pass
// (below 8.5 ms), 8 are within 15% of the 10 ms limit, 4 fail. Seen
// through etcd's histogram, the 15 p99s below 8 ms pass and the 16 from
// 8.01 to 15.18 ms all fall in the 8-16 ms bucket, which holds the limit:
// undecided, whatever side they are on.
func TestSeed004Regions(t *testing.T) {
	p99ms := []float64{5.59, 6.42, 6.75, 6.78, 7.00, 7.07, 7.25, 7.32, 7.41, 7.50, 7.55, 7.56, 7.63, 7.91, 7.95, 8.01,
		8.15, 8.40, 8.48, 8.78, 8.92, 9.21, 9.32, 9.34, 9.55, 9.80, 9.83, 10.49, 10.62, 11.45, 15.18}
	fioWant := map[string]int{result.CodeEtcdPass: 19, result.CodeEtcdWarn: 8, result.CodeEtcdFail: 4}
	etcdWant := map[string]int{VerdictPass: 15, VerdictUndecided: 16}
	fioGot, etcdGot := map[string]int{}, map[string]int{}
	for _, ms := range p99ms {
		r := &result.Result{Test: result.TestSpec{Fdatasync: 1}, Sync: &result.DirResult{Lat: result.Latency{N: 10029, P99Ns: ms * 1e6}}}
		f, ok := analysis.EtcdVerdict(r)
		if !ok {
			t.Fatal("no verdict")
		}
		fioGot[f.Code]++
		// 10029 fsyncs as in the seed's run: 9928 (99%) in the 1 ms
		// bucket, 101 at the region's p99, so rank 9928.71 lies in
		// the bucket that holds it.
		per := make([]float64, 14)
		per[0] = 9928
		for i, b := 0, 0.001; i < 14; i, b = i+1, b*2 {
			if ms/1e3 <= b {
				per[i] += 101
				break
			}
		}
		etcdGot[Judge(etcdHist(per...), WALFsyncLimit()).Verdict]++
	}
	// The seed's westus example: sync p99 10,945 µs, "higher than
	// acceptable".
	r := &result.Result{Test: result.TestSpec{Fdatasync: 1}, Sync: &result.DirResult{Lat: result.Latency{N: 10029, P99Ns: 10945e3}}}
	if f, _ := analysis.EtcdVerdict(r); f.Code != result.CodeEtcdFail {
		t.Errorf("westus: %s, want %s", f.Code, result.CodeEtcdFail)
	}
	for k, v := range fioWant {
		if fioGot[k] != v {
			t.Errorf("fio verdicts %v, want %v", fioGot, fioWant)
			break
		}
	}
	for k, v := range etcdWant {
		if etcdGot[k] != v {
			t.Errorf("etcd histogram verdicts %v, want %v", etcdGot, etcdWant)
			break
		}
	}
}
