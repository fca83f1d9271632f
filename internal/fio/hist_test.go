package fio

import (
	"sort"
	"strconv"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

func TestBucketGrid(t *testing.T) {
	tests := []struct {
		ns  uint64
		idx int
		mid uint64
	}{
		{0, 0, 0},
		{127, 127, 127},
		{128, 128, 129}, // first grouped bucket [128,130), midpoint 129
		{129, 128, 129},
		{130, 129, 131},
		{1 << 20, 960, 1056768 - 4096}, // 2^20: eb=14, idx=(15)*64+0; midpoint 2^20 + 2^13
		{1 << 40, result.HistBuckets - 1, 17112760320},
	}
	for _, tt := range tests {
		if got := result.BucketIndex(tt.ns); got != tt.idx {
			t.Errorf("result.BucketIndex(%d) = %d, want %d", tt.ns, got, tt.idx)
		}
		if tt.ns >= 1<<20 {
			// midpoints of wide buckets: check the value lies in its bucket
			if result.BucketIndex(result.BucketValue(tt.idx)) != tt.idx {
				t.Errorf("midpoint of %d not in its bucket", tt.idx)
			}
			continue
		}
		if got := result.BucketValue(tt.idx); got != tt.mid {
			t.Errorf("result.BucketValue(%d) = %d, want %d", tt.idx, got, tt.mid)
		}
	}
	if got := result.BucketValue(result.HistBuckets - 1); got != 17112760320 {
		t.Errorf("last bucket midpoint = %d, want 17112760320 (fio-brief §1.7)", got)
	}
	for i := 0; i < result.HistBuckets; i++ {
		if result.BucketIndex(result.BucketValue(i)) != i {
			t.Fatalf("midpoint of bucket %d maps to %d", i, result.BucketIndex(result.BucketValue(i)))
		}
	}
}

// Every percentile fio printed is recomputed from the json+ bins of the
// same latency object; fio's own numbers are the expected values.
func TestPercentilesMatchFio(t *testing.T) {
	files := []string{"randread_4k_qd8.jsonplus.json", "percentile_edgecase_N1000.jsonplus.json",
		"randrw_allpercentiles_unified_both.jsonplus.json", "hist.jsonplus.json"}
	checked := 0
	for _, f := range files {
		docs, _, err := Parse(readSample(t, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range docs[0].AllJobs() {
			dirs := []DirStats{j.Read, j.Write, j.Trim}
			if j.Mixed != nil {
				dirs = append(dirs, *j.Mixed)
			}
			for _, d := range dirs {
				for _, l := range []LatStats{d.SlatNs, d.ClatNs, d.LatNs} {
					if len(l.Bins) == 0 {
						continue
					}
					h, err := result.HistogramFromBins(l.Bins)
					if err != nil {
						t.Fatal(err)
					}
					if h.Count() != l.N {
						t.Errorf("%s: bins sum to %d, N = %d", f, h.Count(), l.N)
					}
					var ps []float64
					for k := range l.Percentile {
						p, _ := strconv.ParseFloat(k, 64)
						ps = append(ps, p)
					}
					sort.Float64s(ps)
					got := h.Percentiles(ps)
					for i, p := range ps {
						want := l.Percentile[strconv.FormatFloat(p, 'f', 6, 64)]
						if got[i] != want {
							t.Errorf("%s %s p%v = %v, fio says %v", f, j.JobName, p, got[i], want)
						}
						if one := h.Percentile(p); one != want {
							t.Errorf("%s Percentile(%v) = %v, fio says %v", f, p, one, want)
						}
					}
					checked++
				}
			}
		}
	}
	if checked < 8 {
		t.Errorf("checked %d latency objects, want at least 8", checked)
	}
}

func TestPercentileEdgeCase(t *testing.T) {
	docs, _, err := Parse(readSample(t, "percentile_edgecase_N1000.jsonplus.json"))
	if err != nil {
		t.Fatal(err)
	}
	l := docs[0].Jobs[0].Read.ClatNs
	if l.N != 1000 {
		t.Skipf("sample has N=%d", l.N)
	}
	h, _ := result.HistogramFromBins(l.Bins)
	// fio reports the 1000th sample's bucket because 99.9/100*1000 in
	// floating point is just above 999 (fio-brief §1.7).
	if got := h.Percentile(99.9); got != 399360 {
		t.Errorf("p99.9 = %v, want 399360", got)
	}
}

// Merging two runs' bins and reading p99 differs from averaging their
// p99s; the merged figure is from fio-brief §1.7.
func TestMergeIsNotAveraging(t *testing.T) {
	var merged result.Histogram
	var p99s []float64
	for _, f := range []string{"randread_4k_qd8.jsonplus.json", "hist.jsonplus.json"} {
		docs, _, err := Parse(readSample(t, f))
		if err != nil {
			t.Fatal(err)
		}
		l := docs[0].Jobs[0].Read.ClatNs
		h, _ := result.HistogramFromBins(l.Bins)
		merged.Merge(&h)
		p99s = append(p99s, l.Percentile["99.000000"])
	}
	if got := merged.Percentile(99); got != 667648 {
		t.Errorf("merged p99 = %v, want 667648", got)
	}
	if avg := (p99s[0] + p99s[1]) / 2; avg != 832512 {
		t.Errorf("average of p99s = %v, want 832512", avg)
	}
	if len(merged.Buckets()) == 0 {
		t.Error("merged histogram has no buckets")
	}
}

func TestEmptyHistogram(t *testing.T) {
	var h result.Histogram
	if h.Percentile(99) != 0 || h.Mean() != 0 {
		t.Error("empty histogram should report zeros")
	}
	h.Add(1000, 3)
	h.Add(3000, 1)
	if got := h.Mean(); got < 1490 || got > 1510 {
		t.Errorf("mean = %v, want about 1500", got)
	}
	if got := h.Percentile(50); got != float64(result.BucketValue(result.BucketIndex(1000))) {
		t.Errorf("p50 = %v", got)
	}
	if _, err := result.HistogramFromBins(map[string]uint64{"x": 1}); err == nil {
		t.Error("bad bin key accepted")
	}
}
