package metrics

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Metric names. Latencies are in seconds and throughput in bytes per
// second, as Prometheus expects.
const (
	// Per test and direction, over the results summarised
	// (analysis.Summarize): the repeats of a run.
	nameIOPS           = "iolens_test_io_operations_per_second"
	nameThroughput     = "iolens_test_throughput_bytes_per_second"
	nameLatency        = "iolens_test_latency_seconds"
	nameLatencySummary = "iolens_test_fio_latency_seconds"
	nameResults        = "iolens_test_results"
	nameUnstable       = "iolens_test_unstable"
	// Per test.
	nameFailed   = "iolens_test_failed"
	nameFindings = "iolens_test_findings"
	nameEnd      = "iolens_test_end_timestamp_seconds"
	nameRunning  = "iolens_test_running"
	// Per run.
	nameRunInfo      = "iolens_run_info"
	nameRunStart     = "iolens_run_start_timestamp_seconds"
	nameRunEnd       = "iolens_run_end_timestamp_seconds"
	nameTestsPlanned = "iolens_run_tests"
	nameTestsDone    = "iolens_run_tests_completed"
	nameTestsFailed  = "iolens_run_tests_failed"
	nameRunIOs       = "iolens_run_io_operations_total"
	nameRunBytes     = "iolens_run_bytes_total"
)

// latencyBuckets are the upper bounds, in seconds, of the exported latency
// histograms: 10 µs to 10 s, about three per decade, enough to tell a
// local NVMe (tens of µs) from a network disk (ms) from a stall (s).
var latencyBuckets = []float64{
	10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6,
	1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3,
	100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10,
}

// quantiles of the latency summary: fio's own percentiles, read from the
// merged histogram of the results (exact on fio's bins, which are finer
// than LatencyBuckets).
var quantiles = []struct {
	q   float64
	get func(s *analysis.DirSummary) float64
}{
	{0.5, func(s *analysis.DirSummary) float64 { return s.P50Ns }},
	{0.9, func(s *analysis.DirSummary) float64 { return s.P90Ns }},
	{0.99, func(s *analysis.DirSummary) float64 { return s.P99Ns }},
	{0.999, func(s *analysis.DirSummary) float64 { return s.P999Ns }},
	{0.9999, func(s *analysis.DirSummary) float64 { return s.P9999Ns }},
}

// keyLabels names the labels that tell one exporter's series apart
// besides test and direction (run_id and device in history, device on the
// live endpoint, size and node in a push), and reads them from a result.
type keyLabels struct {
	names []string
	of    func(r *result.Result) []string
}

// testDescs are the per-test descriptors for one set of key labels.
type testDescs struct {
	iops, tput, lat, sum, n, unstable *prometheus.Desc
	failed, findings, end             *prometheus.Desc
}

func newTestDescs(key []string) *testDescs {
	with := func(extra ...string) []string { return append(append([]string{}, key...), extra...) }
	dir := with("test", "direction")
	test := with("test")
	return &testDescs{
		iops: prometheus.NewDesc(nameIOPS, "IO operations per second of the test (fio), per direction: the mean over its results (repeats).", dir, nil),
		tput: prometheus.NewDesc(nameThroughput, "Bytes per second of the test (fio), per direction: the mean over its results (repeats).", dir, nil),
		lat: prometheus.NewDesc(nameLatency, "IO latency distribution from fio's histograms, merged over the test's results "+
			"(submission to completion; fsync time for direction=sync).", dir, nil),
		sum: prometheus.NewDesc(nameLatencySummary, "IO latency quantiles read from fio's histograms merged over the test's results "+
			"(exact on fio's bins); absent when several results have no histogram, as percentiles are never averaged.", dir, nil),
		n:        prometheus.NewDesc(nameResults, "Results (repeats) the test's figures summarise.", dir, nil),
		unstable: prometheus.NewDesc(nameUnstable, "1 when the test's IOPS vary by more than 10% (CV) over its repeats or one repeat is an outlier.", dir, nil),
		failed:   prometheus.NewDesc(nameFailed, "Results (repeats) of the test that failed.", test, nil),
		findings: prometheus.NewDesc(nameFindings, "Findings about the test over its results, by kind and severity.", with("test", "kind", "severity"), nil),
		end:      prometheus.NewDesc(nameEnd, "When the test's last result ended, as a Unix time.", test, nil),
	}
}

// collect emits the per-test series of rs. Results are grouped by their
// key labels first, then summarised per test and direction by
// analysis.Summarize, the one summary of several results.
func (d *testDescs) collect(ch chan<- prometheus.Metric, rs []result.Result, key keyLabels) {
	type group struct {
		vals []string
		rs   []result.Result
	}
	var groups []*group
	byKey := map[string]*group{}
	for i := range rs {
		vals := key.of(&rs[i])
		k := strings.Join(vals, "\x00")
		g, ok := byKey[k]
		if !ok {
			g = &group{vals: vals}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.rs = append(g.rs, rs[i])
	}
	for _, g := range groups {
		d.collectGroup(ch, g.vals, g.rs)
	}
}

func (d *testDescs) collectGroup(ch chan<- prometheus.Metric, key []string, rs []result.Result) {
	lv := func(extra ...string) []string { return append(append([]string{}, key...), extra...) }
	for _, s := range analysis.Summarize(rs, analysis.SummarizeOptions{AcrossRuns: true}) {
		dl := lv(s.Test, s.Dir)
		ch <- prometheus.MustNewConstMetric(d.iops, prometheus.GaugeValue, s.IOPS.Mean, dl...)
		if s.Dir != "sync" {
			ch <- prometheus.MustNewConstMetric(d.tput, prometheus.GaugeValue, s.BWBytes.Mean, dl...)
		}
		ch <- prometheus.MustNewConstMetric(d.n, prometheus.GaugeValue, float64(s.N()), dl...)
		unstable := 0.0
		if s.Unstable {
			unstable = 1
		}
		ch <- prometheus.MustNewConstMetric(d.unstable, prometheus.GaugeValue, unstable, dl...)
		if s.Hist.Count() > 0 {
			count, sum, buckets := promBuckets(&s.Hist)
			ch <- prometheus.MustNewConstHistogram(d.lat, count, sum, buckets, dl...)
		}
		if !s.NoPercentiles && s.Samples > 0 {
			qs := make(map[float64]float64, len(quantiles))
			for _, q := range quantiles {
				qs[q.q] = q.get(&s) / 1e9
			}
			ch <- prometheus.MustNewConstSummary(d.sum, s.Samples, s.LatMeanNs/1e9*float64(s.Samples), qs, dl...)
		}
	}
	// Per test: failures, findings and the last end, over every result
	// (failed ones included), in the order tests first appear.
	type perTest struct {
		failed int
		end    float64
		counts map[[2]string]int
		kinds  [][2]string
	}
	var order []string
	tests := map[string]*perTest{}
	for i := range rs {
		r := &rs[i]
		pt, ok := tests[r.Test.Name]
		if !ok {
			pt = &perTest{counts: map[[2]string]int{}}
			tests[r.Test.Name] = pt
			order = append(order, r.Test.Name)
		}
		if r.Status != "ok" {
			pt.failed++
		}
		if !r.End.IsZero() {
			pt.end = max(pt.end, float64(r.End.UnixMilli())/1e3)
		}
		for _, f := range r.Findings {
			k := [2]string{f.Kind, f.Severity}
			if pt.counts[k] == 0 {
				pt.kinds = append(pt.kinds, k)
			}
			pt.counts[k]++
		}
	}
	for _, name := range order {
		pt := tests[name]
		ch <- prometheus.MustNewConstMetric(d.failed, prometheus.GaugeValue, float64(pt.failed), lv(name)...)
		if pt.end > 0 {
			ch <- prometheus.MustNewConstMetric(d.end, prometheus.GaugeValue, pt.end, lv(name)...)
		}
		for _, k := range pt.kinds {
			ch <- prometheus.MustNewConstMetric(d.findings, prometheus.GaugeValue, float64(pt.counts[k]), lv(name, k[0], k[1])...)
		}
	}
}

// runInfo emits iolens_run_info for runs whose label sets may differ:
// label names must be the same across a family, so every run carries the
// union of the label keys (user labels as label_<name>). key names the
// labels before suite (run_id in history, none on the live endpoint).
func runInfo(ch chan<- prometheus.Metric, key []string, runs []runMeta) {
	keys := map[string]string{} // sanitized -> original, first seen
	for _, r := range runs {
		for k := range r.labels {
			sk := "label_" + sanitizeLabelName(k)
			if _, ok := keys[sk]; !ok {
				keys[sk] = k
			}
		}
	}
	names := make([]string, 0, len(keys))
	for sk := range keys {
		names = append(names, sk)
	}
	sort.Strings(names)
	desc := prometheus.NewDesc(nameRunInfo, "Run metadata; value 1. User labels appear as label_<name>.",
		append(append(append([]string{}, key...), "suite"), names...), nil)
	for _, r := range runs {
		vals := append(append([]string{}, r.key...), r.suite)
		for _, sk := range names {
			vals = append(vals, r.labels[keys[sk]])
		}
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, vals...)
	}
}

type runMeta struct {
	key    []string
	suite  string
	labels map[string]string
}

// promBuckets re-bins a fio histogram into cumulative Prometheus buckets
// (upper bounds in seconds). A fio bucket is counted under the first bound
// at or above its midpoint; the sum is estimated from the midpoints.
func promBuckets(h *result.Histogram) (count uint64, sum float64, buckets map[float64]uint64) {
	per := make([]uint64, len(latencyBuckets))
	for _, b := range h.Buckets() {
		n := b.Count
		v := float64(b.Ns) / 1e9
		sum += v * float64(n)
		count += n
		if j := sort.SearchFloat64s(latencyBuckets, v); j < len(per) {
			per[j] += n
		}
	}
	buckets = make(map[float64]uint64, len(per))
	var cum uint64
	for j, b := range latencyBuckets {
		cum += per[j]
		buckets[b] = cum
	}
	return count, sum, buckets
}

// LabelClashError is two label keys that would be one Prometheus label:
// "a-b", "a_b" and "a.b" all become label_a_b, and a series cannot say
// which one it holds.
type LabelClashError struct {
	Keys [2]string
	Name string
}

func (e *LabelClashError) Error() string {
	return fmt.Sprintf("labels %q and %q would both be the Prometheus label %s", e.Keys[0], e.Keys[1], e.Name)
}

// Hint says what to do.
func (e *LabelClashError) Hint() string {
	return "Prometheus label names hold letters, digits and '_' only: give the results label keys that differ in those (export fewer runs at once, or label them anew with 'history import --label')"
}

// CheckLabelKeys refuses label keys that would clash as Prometheus labels
// (SanitizeLabelName), over every set given.
func CheckLabelKeys(sets ...map[string]string) error {
	seen := map[string]string{}
	var keys []string
	for _, s := range sets {
		for k := range s {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		n := "label_" + sanitizeLabelName(k)
		if o, ok := seen[n]; ok && o != k {
			return &LabelClashError{Keys: [2]string{o, k}, Name: n}
		}
		seen[n] = k
	}
	return nil
}

// sanitizeLabelName makes a user label key a valid Prometheus label name
// ("storage-class" -> "storage_class"). Keys that differ only in what it
// replaces clash: CheckLabelKeys finds them.
func sanitizeLabelName(k string) string {
	var b strings.Builder
	for i, r := range k {
		ok := r == '_' || r < unicode.MaxASCII && (unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r))
		if ok {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// History exports saved runs, for node-exporter's textfile collector:
// every series carries run_id, so that runs stay apart over time. It is
// the one exporter with run_id; the live endpoint and a push leave it out,
// so that a new run does not make new series.
type History struct {
	rs                    []result.Result
	tests                 *testDescs
	start, end, n, failed *prometheus.Desc
}

// newHistory returns the exporter of rs.
func newHistory(rs []result.Result) *History {
	run := []string{"run_id"}
	return &History{rs: rs, tests: newTestDescs([]string{"run_id", "device"}),
		start:  prometheus.NewDesc(nameRunStart, "When the run's first test started, as a Unix time.", run, nil),
		end:    prometheus.NewDesc(nameRunEnd, "When the run's last test ended, as a Unix time.", run, nil),
		n:      prometheus.NewDesc(nameTestsPlanned, "Tests of the run, repeats included.", run, nil),
		failed: prometheus.NewDesc(nameTestsFailed, "Tests of the run that failed, repeats included.", run, nil),
	}
}

// Describe sends no descriptors: the run-info metric's labels depend on
// the runs' own labels, so the collector is unchecked.
func (h *History) Describe(chan<- *prometheus.Desc) {}

// Collect emits the runs' metrics.
func (h *History) Collect(ch chan<- prometheus.Metric) {
	type run struct {
		meta       runMeta
		start, end float64
		n, failed  int
	}
	var runs []*run
	byID := map[string]*run{}
	for i := range h.rs {
		r := &h.rs[i]
		st, ok := byID[r.RunID]
		if !ok {
			st = &run{meta: runMeta{key: []string{r.RunID}, labels: map[string]string{}}}
			byID[r.RunID] = st
			runs = append(runs, st)
		}
		st.meta.suite = r.Suite
		for k, v := range r.Target.Labels {
			st.meta.labels[k] = v
		}
		st.n++
		if r.Status != "ok" {
			st.failed++
		}
		if !r.Start.IsZero() {
			if s := float64(r.Start.UnixMilli()) / 1e3; st.start == 0 || s < st.start {
				st.start = s
			}
		}
		if !r.End.IsZero() {
			st.end = max(st.end, float64(r.End.UnixMilli())/1e3)
		}
	}
	metas := make([]runMeta, len(runs))
	for i, r := range runs {
		metas[i] = r.meta
		id := r.meta.key[0]
		ch <- prometheus.MustNewConstMetric(h.n, prometheus.GaugeValue, float64(r.n), id)
		ch <- prometheus.MustNewConstMetric(h.failed, prometheus.GaugeValue, float64(r.failed), id)
		if r.start > 0 {
			ch <- prometheus.MustNewConstMetric(h.start, prometheus.GaugeValue, r.start, id)
		}
		if r.end > 0 {
			ch <- prometheus.MustNewConstMetric(h.end, prometheus.GaugeValue, r.end, id)
		}
	}
	runInfo(ch, []string{"run_id"}, metas)
	h.tests.collect(ch, h.rs, keyLabels{names: []string{"run_id", "device"},
		of: func(r *result.Result) []string { return []string{r.RunID, r.Target.Device} }})
}

// WriteTextfile writes saved results in the Prometheus text format that
// node-exporter's textfile collector reads (no timestamps), with
// iolens_build_info of the exporting binary.
func WriteTextfile(w io.Writer, b Build, rs []result.Result) error {
	sets := make([]map[string]string, len(rs))
	for i := range rs {
		sets[i] = rs[i].Target.Labels
	}
	if err := CheckLabelKeys(sets...); err != nil {
		return err
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(buildInfo(b)); err != nil {
		return err
	}
	if err := reg.Register(newHistory(rs)); err != nil {
		return err
	}
	mfs, err := reg.Gather()
	if err != nil {
		return fmt.Errorf("gathering metrics: %w", err)
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}
