package etcdmetrics

import (
	"fmt"
	"math"
	"strings"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Verdicts, from best to worst (see Worse).
const (
	VerdictPass = "pass"
	// VerdictNoData: no observations to judge (an idle member, or a
	// window with no writes).
	VerdictNoData = "no-data"
	// VerdictWarn: under the limit but within 15% of it, as the fio etcd
	// test warns.
	VerdictWarn = "warn"
	// VerdictUndecided: the p99 lies in a bucket that straddles the limit,
	// so the histogram cannot say which side it is on.
	VerdictUndecided = "undecided"
	// VerdictError: the member could not be scraped.
	VerdictError = "error"
	VerdictFail  = "fail"
)

var verdictRank = map[string]int{VerdictPass: 0, VerdictNoData: 1, VerdictWarn: 2, VerdictUndecided: 3, VerdictError: 4, VerdictFail: 5}

// Worse is the worse of two verdicts. An error ranks below fail: one
// member known to fail is the stronger statement, and above undecided:
// a member not seen cannot be called fine.
func Worse(a, b string) string {
	if verdictRank[b] > verdictRank[a] {
		return b
	}
	return a
}

// Severity maps a verdict to a finding severity, as analyze's --fail-on
// reads them.
func Severity(verdict string) string {
	switch verdict {
	case VerdictPass:
		return analysis.SevInfo
	case VerdictFail, VerdictError:
		return analysis.SevFail
	}
	return analysis.SevWarn
}

// Limit is one of etcd's latency guidelines for a histogram.
type Limit struct {
	// Check names it in JSON ("wal_fsync") and Name in text ("WAL fsync").
	Check, Name string
	// Dir is the finding's direction: "sync" for the WAL's fdatasync, as
	// the fio etcd test's finding, "commit" for the backend.
	Dir    string
	Metric string
	// Unit counts the observations ("fsyncs").
	Unit string
	// LimitS: the p99 must be below it; WarnS: from here on, warn.
	LimitS, WarnS float64
}

// BackendCommitLimitS is etcd's guidance for the backend: commit p99
// below 25 ms.
const BackendCommitLimitS = 0.025

// WALFsyncLimit is the limit the fio etcd test applies (analysis'
// EtcdVerdict): fdatasync p99 below 10 ms, warn from 8.5 ms.
func WALFsyncLimit() Limit {
	return Limit{Check: "wal_fsync", Name: "WAL fsync", Dir: "sync", Metric: WALFsyncMetric, Unit: "fsyncs",
		LimitS: analysis.EtcdLimitNs / 1e9, WarnS: analysis.EtcdWarnNs / 1e9}
}

// BackendCommitLimit is the backend commit guidance, warning within 15%
// of it as the WAL check does.
func BackendCommitLimit() Limit {
	return Limit{Check: "backend_commit", Name: "backend commit", Dir: "commit", Metric: BackendCommitMetric, Unit: "commits",
		LimitS: BackendCommitLimitS, WarnS: BackendCommitLimitS * analysis.EtcdWarnNs / analysis.EtcdLimitNs}
}

// Judgement is a histogram judged against a Limit.
type Judgement struct {
	Check  string `json:"check"`
	Metric string `json:"metric"`
	// Count is the number of observations judged; MeanNs their mean.
	Count  float64  `json:"count"`
	MeanNs *float64 `json:"mean_ns"`
	// P99Ns is histogram_quantile(0.99)'s estimate; the true p99 lies in
	// (P99LowerNs, P99UpperNs]. P99UpperNs is null when the p99 is above
	// the largest finite bucket. All null without observations.
	P99Ns      *float64 `json:"p99_ns"`
	P99LowerNs *float64 `json:"p99_lower_ns"`
	P99UpperNs *float64 `json:"p99_upper_ns"`
	LimitNs    float64  `json:"limit_ns"`
	WarnNs     float64  `json:"warn_ns"`
	Verdict    string   `json:"verdict"`
	Reason     string   `json:"reason"`
	// Buckets are the judged counts, cumulative, as the page gives them
	// ("le" as Prometheus writes it), so the figures can be checked.
	Buckets []BucketCount `json:"buckets"`

	limit  Limit
	est    Estimate
	detail string // Reason without the p99 and its bucket
}

// BucketCount is one bucket in JSON.
type BucketCount struct {
	Le    string  `json:"le"`
	Count float64 `json:"count"`
}

// band places a latency against the limit: 0 pass, 1 warn, 2 fail, with
// the fio test's comparisons (fail at or over the limit).
func (l Limit) band(v float64) int {
	switch {
	case v >= l.LimitS:
		return 2
	case v >= l.WarnS:
		return 1
	}
	return 0
}

// Judge estimates h's p99 and judges it. The p99 is somewhere in its
// bucket (lo, hi]: the verdict is decided only when the whole bucket is
// on one side of each threshold; when it straddles the limit, the answer
// is undecided, with the bounds, whatever the interpolated estimate says.
func Judge(h Histogram, l Limit) Judgement {
	j := Judgement{Check: l.Check, Metric: l.Metric, Count: h.Total(), LimitNs: l.LimitS * 1e9, WarnNs: l.WarnS * 1e9, limit: l}
	for _, b := range h.Buckets {
		j.Buckets = append(j.Buckets, BucketCount{Le: formatLe(b.UpperBound), Count: b.Count})
	}
	if j.Count == 0 {
		j.Verdict = VerdictNoData
		j.Reason = fmt.Sprintf("no %s to judge", l.Unit)
		return j
	}
	j.MeanNs = ns(h.Sum / j.Count)
	e := h.Quantile(0.99)
	j.est = e
	j.P99Ns, j.P99LowerNs = ns(e.Value), ns(e.Lower)
	if !math.IsInf(e.Upper, 1) {
		j.P99UpperNs = ns(e.Upper)
	}
	// Below a first bucket bound of 0 or less the lower edge is -Inf:
	// every such bucket passes, as its upper bound does.
	loBand := 0
	if !math.IsInf(e.Lower, -1) {
		loBand = l.band(math.Nextafter(e.Lower, math.Inf(1)))
	}
	hiBand := l.band(e.Upper)
	where := fmt.Sprintf("p99 ≈ %s (in the bucket %s)", units.Ms(e.Value, 3), bucketText(e))
	if math.IsInf(e.Upper, 1) {
		where = fmt.Sprintf("p99 above the largest bucket, %s", units.Ms(e.Lower, 4))
	}
	limit := units.Ms(l.LimitS, 4)
	var d string // what the bucket says about the limit
	sep := ": "
	switch {
	case loBand == hiBand && hiBand == 0:
		j.Verdict = VerdictPass
		d = fmt.Sprintf("below the %s limit", limit)
	case loBand == hiBand && hiBand == 1:
		j.Verdict = VerdictWarn
		d = fmt.Sprintf("below the %s limit, but within 15%% of it", limit)
	case loBand == 2:
		j.Verdict = VerdictFail
		d = fmt.Sprintf("over the %s limit", limit)
		if s, ok := h.ShareAbove(e.Lower); ok {
			d += fmt.Sprintf("; %s of %s took more than %s", units.Share(s), l.Unit, units.Ms(e.Lower, 4))
		}
	case hiBand < 2:
		// Between pass and warn: it may be within 15% of the limit.
		j.Verdict = VerdictWarn
		d = fmt.Sprintf("below the %s limit, perhaps within 15%% of it (the bucket straddles %s)", limit, units.Ms(l.WarnS, 4))
	default:
		j.Verdict = VerdictUndecided
		sep = ", and "
		d = fmt.Sprintf("the %s limit is inside that bucket: the histogram cannot tell which side the p99 is on", limit)
		lo, okLo := h.ShareAbove(e.Lower)
		hi, okHi := h.ShareAbove(e.Upper)
		switch {
		case okLo && okHi && e.Lower > 0 && math.IsInf(e.Upper, 1):
			// The +Inf bucket has no bound to quote.
			d += fmt.Sprintf(" (%s of %s took more than %s; the p99 is under the limit only if at most 1%% took %s or more)",
				units.Share(lo), l.Unit, units.Ms(e.Lower, 4), limit)
		case okLo && okHi && e.Lower > 0:
			d += fmt.Sprintf(" (%s of %s took more than %s and %s more than %s; the p99 is under the limit only if at most 1%% took %s or more)",
				units.Share(lo), l.Unit, units.Ms(e.Lower, 4), units.Share(hi), units.Ms(e.Upper, 4), limit)
		}
	}
	if j.Count < 100 {
		d += fmt.Sprintf("; only %s %s, so the p99 is about the slowest of them", units.Whole(j.Count), l.Unit)
	}
	j.detail = d
	j.Reason = where + sep + d
	return j
}

// Estimate is the p99 as read from the buckets.
func (j Judgement) Estimate() Estimate { return j.est }

// Finding states the judgement as a finding of kind etcd.
func (j Judgement) Finding(prefix string) result.Finding {
	code := map[string]string{VerdictPass: result.CodeEtcdPass, VerdictWarn: result.CodeEtcdWarn, VerdictFail: result.CodeEtcdFail,
		VerdictUndecided: result.CodeEtcdUndecided, VerdictNoData: result.CodeEtcdIdle}[j.Verdict]
	ev := map[string]float64{"count": j.Count, "limit_ns": j.LimitNs}
	for k, v := range map[string]*float64{"p99_ns": j.P99Ns, "p99_lower_ns": j.P99LowerNs, "p99_upper_ns": j.P99UpperNs, "mean_ns": j.MeanNs} {
		if v != nil {
			ev[k] = *v
		}
	}
	return result.Finding{Kind: result.KindEtcd, Code: code, Severity: Severity(j.Verdict), Dir: j.limit.Dir,
		Summary: fmt.Sprintf("%setcd %s: %s: %s", prefix, j.limit.Name, j.Verdict, j.Reason), Evidence: ev}
}

func ns(s float64) *float64 {
	v := s * 1e9
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func bucketText(e Estimate) string {
	lo := "0"
	if math.IsInf(e.Lower, -1) {
		lo = "-Inf"
	} else if e.Lower != 0 {
		lo = strings.TrimSuffix(units.Ms(e.Lower, 4), " ms")
	}
	return fmt.Sprintf("%s-%s", lo, units.Ms(e.Upper, 4))
}
