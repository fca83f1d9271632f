package etcdmetrics

import (
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

// etcd's buckets (prometheus.ExponentialBuckets(0.001, 2, 14)) with the
// given counts per bucket, not cumulative: 1, 2, 4 ... 8192 ms, +Inf.
func etcdHist(perBucket ...float64) Histogram {
	var h Histogram
	bound, c := 0.001, 0.0
	for i := range 14 {
		if i < len(perBucket) {
			c += perBucket[i]
		}
		h.Buckets = append(h.Buckets, Bucket{UpperBound: bound, Count: c})
		bound *= 2
	}
	if len(perBucket) > 14 {
		c += perBucket[14]
	}
	h.Buckets = append(h.Buckets, Bucket{UpperBound: inf, Count: c})
	h.Sum = 0.001 * c
	return h
}

func TestJudge(t *testing.T) {
	wal, commit := WALFsyncLimit(), BackendCommitLimit()
	tests := []struct {
		name    string
		h       Histogram
		l       Limit
		verdict string
		reason  string
	}{
		// 1000 fsyncs, 995 at most 4 ms: the p99 is in (2, 4] ms.
		{"wal pass", etcdHist(900, 50, 45, 5), wal, VerdictPass, "in the bucket 2-4 ms"},
		// 985 at most 8 ms, 15 in (8, 16]: the p99 is in (8, 16], which
		// holds the 10 ms limit.
		{"wal undecided", etcdHist(900, 50, 25, 10, 15), wal, VerdictUndecided, "1.5% of fsyncs took more than 8 ms and 0.0% more than 16 ms"},
		// 980 at most 16 ms, 20 in (16, 32]: over the limit for sure.
		{"wal fail", etcdHist(900, 50, 20, 5, 5, 20), wal, VerdictFail, "2.0% of fsyncs took more than 16 ms"},
		// Everything above the largest bucket.
		{"wal overflow", etcdHist(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10), wal, VerdictFail, "above the largest bucket, 8192 ms"},
		{"wal idle", etcdHist(), wal, VerdictNoData, "no fsyncs"},
		{"few", etcdHist(5, 3), wal, VerdictPass, "only 8 fsyncs"},
		// The backend's 25 ms limit lies in (16, 32]; (8, 16] passes.
		{"commit pass", etcdHist(900, 50, 25, 10, 15), commit, VerdictPass, "below the 25 ms limit"},
		{"commit undecided", etcdHist(900, 50, 20, 5, 5, 20), commit, VerdictUndecided, "25 ms limit is inside that bucket"},
		{"commit fail", etcdHist(900, 50, 20, 5, 5, 0, 20), commit, VerdictFail, "over the 25 ms limit"},
		// Finer buckets than etcd's decide more: (8.6, 9.5] ms is a
		// warning, (8, 9] straddles 8.5 ms and may be one.
		{"warn", hist(0.0086, 980, 0.0095, 1000), wal, VerdictWarn, "within 15% of it"},
		{"maybe warn", hist(0.008, 980, 0.009, 1000), wal, VerdictWarn, "perhaps within 15%"},
		// A bucket ending on the limit straddles it (le is inclusive);
		// one starting on it is over.
		{"upper bound on the limit", hist(0.008, 980, 0.010, 1000), wal, VerdictUndecided, ""},
		{"lower bound on the limit", hist(0.010, 980, 0.020, 1000), wal, VerdictFail, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := Judge(tc.h, tc.l)
			if j.Verdict != tc.verdict || !strings.Contains(j.Reason, tc.reason) {
				t.Errorf("verdict %s (%s), want %s containing %q", j.Verdict, j.Reason, tc.verdict, tc.reason)
			}
			f := j.Finding("")
			if f.Kind != result.KindEtcd || f.Code == "" || f.Severity != Severity(tc.verdict) || f.Dir != tc.l.Dir {
				t.Errorf("finding %+v", f)
			}
		})
	}
}

// With buckets fine enough to decide, the verdict on the WAL is the fio
// etcd test's (analysis.EtcdVerdict) for the same p99.
func TestJudgeAgreesWithFioVerdict(t *testing.T) {
	codes := map[string]string{result.CodeEtcdPass: VerdictPass, result.CodeEtcdWarn: VerdictWarn, result.CodeEtcdFail: VerdictFail}
	for _, ms := range []float64{0.5, 5, 8.4, 8.5, 9.0, 9.9, 10, 12, 50} {
		lo, hi := ms/1e3, ms/1e3+1e-6
		// 989 fast fsyncs, 11 in (lo, hi]: the p99 (rank 990) is in it.
		h := hist(0.0001, 989, lo, 989, hi, 1000)
		if lo <= 0.0001 {
			h = hist(lo, 989, hi, 1000)
		}
		j := Judge(h, WALFsyncLimit())
		r := &result.Result{Test: result.TestSpec{Fdatasync: 1}, Sync: &result.DirResult{Lat: result.Latency{N: 1000, P99Ns: (lo + hi) / 2 * 1e9}}}
		f, ok := analysis.EtcdVerdict(r)
		if !ok {
			t.Fatal("no fio verdict")
		}
		if want := codes[f.Code]; j.Verdict != want {
			t.Errorf("p99 %v ms: %s (%s), fio test says %s", ms, j.Verdict, j.Reason, want)
		}
	}
}

func TestWorse(t *testing.T) {
	order := []string{VerdictPass, VerdictNoData, VerdictWarn, VerdictUndecided, VerdictError, VerdictFail}
	for i, a := range order {
		for j, b := range order {
			want := a
			if j > i {
				want = b
			}
			if got := Worse(a, b); got != want {
				t.Errorf("Worse(%s, %s) = %s, want %s", a, b, got, want)
			}
		}
	}
}
