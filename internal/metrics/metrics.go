package metrics

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Metric names. Latencies are in seconds and throughput in bytes per
// second, as Prometheus expects.
const (
	NameIOPS        = "iolens_test_io_operations_per_second"
	NameThroughput  = "iolens_test_throughput_bytes_per_second"
	NameLatency     = "iolens_test_latency_seconds"
	NameQuantile    = "iolens_test_latency_quantile_seconds"
	NameDuration    = "iolens_test_duration_seconds"
	NameEnd         = "iolens_test_end_timestamp_seconds"
	NameFailed      = "iolens_test_failed"
	NameFindings    = "iolens_test_findings"
	NameRunInfo     = "iolens_run_info"
	NameLiveIOPS    = "iolens_live_io_operations_per_second"
	NameLiveBW      = "iolens_live_throughput_bytes_per_second"
	NameRunning     = "iolens_test_running"
	NameTestsPlaned = "iolens_run_tests"
	NameTestsDone   = "iolens_run_tests_completed"
)

// LatencyBuckets are the upper bounds, in seconds, of the exported latency
// histograms: 10 µs to 10 s, about three per decade, enough to tell a
// local NVMe (tens of µs) from a network disk (ms) from a stall (s).
var LatencyBuckets = []float64{
	10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6,
	1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3,
	100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10,
}

// quantiles exported as gauges: fio's own percentiles, exact on its grid.
var quantiles = []struct {
	q   string
	get func(l result.Latency) float64
}{
	{"50", func(l result.Latency) float64 { return l.P50Ns }},
	{"90", func(l result.Latency) float64 { return l.P90Ns }},
	{"99", func(l result.Latency) float64 { return l.P99Ns }},
	{"99.9", func(l result.Latency) float64 { return l.P999Ns }},
	{"99.99", func(l result.Latency) float64 { return l.P9999Ns }},
}

// testLabels identify one result. device joins node-exporter's node_disk_*
// series, which carry the same device name.
var testLabels = []string{"run_id", "test", "repeat", "device"}

// Collector exposes results (and, during a run, live figures) as
// Prometheus metrics. It is safe for concurrent use: the runner adds while
// the HTTP handler collects.
type Collector struct {
	mu      sync.Mutex
	results []result.Result
	runs    map[string]*runState
	order   []string
}

type runState struct {
	suite  string
	labels map[string]string
	total  int
	done   int
	live   *liveTest
}

type liveTest struct {
	test, repeat string
	iops, bw     float64
}

// NewCollector returns an empty collector.
func NewCollector() *Collector { return &Collector{runs: map[string]*runState{}} }

// Add records finished results.
func (c *Collector) Add(rs ...result.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range rs {
		c.results = append(c.results, r)
		st := c.run(r.RunID)
		st.suite = r.Suite
		for k, v := range r.Target.Labels {
			st.labels[k] = v
		}
	}
}

func (c *Collector) run(id string) *runState {
	st, ok := c.runs[id]
	if !ok {
		st = &runState{labels: map[string]string{}}
		c.runs[id] = st
		c.order = append(c.order, id)
	}
	return st
}

// StartRun announces a run before its first result.
func (c *Collector) StartRun(runID, suite string, labels map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.run(runID)
	st.suite = suite
	for k, v := range labels {
		st.labels[k] = v
	}
}

// Event follows the runner's progress: live figures on status events, the
// finished result on test-end events.
func (c *Collector) Event(runID string, ev runner.Event) {
	if ev.Kind == runner.EventTestEnd && ev.Result != nil {
		c.Add(*ev.Result)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.run(runID)
	if ev.Total > 0 {
		st.total = ev.Total
	}
	switch ev.Kind {
	case runner.EventTestStart:
		st.live = &liveTest{test: ev.Test.Name, repeat: strconv.Itoa(ev.Repeat)}
	case runner.EventStatus:
		if st.live == nil {
			st.live = &liveTest{test: ev.Test.Name, repeat: strconv.Itoa(ev.Repeat)}
		}
		st.live.iops, st.live.bw = ev.IOPS, ev.BWBytes
	case runner.EventTestEnd:
		st.done++
		st.live = nil
	}
}

var (
	descIOPS       = prometheus.NewDesc(NameIOPS, "IO operations per second over the whole test (fio), per direction.", append(testLabels, "direction"), nil)
	descThroughput = prometheus.NewDesc(NameThroughput, "Bytes per second over the whole test (fio), per direction.", append(testLabels, "direction"), nil)
	descLatency    = prometheus.NewDesc(NameLatency, "IO latency distribution from fio's histogram (submission to completion; fsync time for direction=sync).", append(testLabels, "direction"), nil)
	descQuantile   = prometheus.NewDesc(NameQuantile, "IO latency percentile as fio reports it, from its histogram.", append(testLabels, "direction", "percentile"), nil)
	descDuration   = prometheus.NewDesc(NameDuration, "Wall time of the test.", testLabels, nil)
	descEnd        = prometheus.NewDesc(NameEnd, "When the test ended, as a Unix time.", testLabels, nil)
	descFailed     = prometheus.NewDesc(NameFailed, "1 when the test failed, else 0.", testLabels, nil)
	descFindings   = prometheus.NewDesc(NameFindings, "Number of findings about the test, by kind and severity.", append(testLabels, "kind", "severity"), nil)
	descLiveIOPS   = prometheus.NewDesc(NameLiveIOPS, "IO operations per second over the last second of the running test.", []string{"run_id", "test", "repeat"}, nil)
	descLiveBW     = prometheus.NewDesc(NameLiveBW, "Bytes per second over the last second of the running test.", []string{"run_id", "test", "repeat"}, nil)
	descRunning    = prometheus.NewDesc(NameRunning, "1 while the test runs.", []string{"run_id", "test", "repeat"}, nil)
	descTests      = prometheus.NewDesc(NameTestsPlaned, "Tests in the run, repeats included.", []string{"run_id"}, nil)
	descDone       = prometheus.NewDesc(NameTestsDone, "Tests of the run that have finished.", []string{"run_id"}, nil)
)

// Describe sends no descriptors: the run-info metric's labels depend on the
// runs' own labels, so the collector is unchecked.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect emits the current metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.collectInfo(ch)
	for _, id := range c.order {
		st := c.runs[id]
		if st.total > 0 {
			ch <- prometheus.MustNewConstMetric(descTests, prometheus.GaugeValue, float64(st.total), id)
			ch <- prometheus.MustNewConstMetric(descDone, prometheus.GaugeValue, float64(st.done), id)
		}
		if st.live != nil {
			l := st.live
			ch <- prometheus.MustNewConstMetric(descRunning, prometheus.GaugeValue, 1, id, l.test, l.repeat)
			ch <- prometheus.MustNewConstMetric(descLiveIOPS, prometheus.GaugeValue, l.iops, id, l.test, l.repeat)
			ch <- prometheus.MustNewConstMetric(descLiveBW, prometheus.GaugeValue, l.bw, id, l.test, l.repeat)
		}
	}
	for i := range c.results {
		collectResult(ch, &c.results[i])
	}
}

// collectInfo emits one info metric per run. Label names must be the same
// across a family, so every run carries the union of the label keys.
func (c *Collector) collectInfo(ch chan<- prometheus.Metric) {
	keys := map[string]string{} // sanitized -> original, first seen
	for _, id := range c.order {
		for k := range c.runs[id].labels {
			sk := "label_" + SanitizeLabelName(k)
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
	desc := prometheus.NewDesc(NameRunInfo, "Run metadata; value 1. User labels appear as label_<name>.", append([]string{"run_id", "suite"}, names...), nil)
	for _, id := range c.order {
		st := c.runs[id]
		vals := []string{id, st.suite}
		for _, sk := range names {
			vals = append(vals, st.labels[keys[sk]])
		}
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, vals...)
	}
}

func collectResult(ch chan<- prometheus.Metric, r *result.Result) {
	lv := []string{r.RunID, r.Test.Name, strconv.Itoa(r.Repeat), r.Target.Device}
	failed := 0.0
	if r.Status != "ok" {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(descFailed, prometheus.GaugeValue, failed, lv...)
	if !r.End.IsZero() {
		ch <- prometheus.MustNewConstMetric(descEnd, prometheus.GaugeValue, float64(r.End.UnixMilli())/1e3, lv...)
		if !r.Start.IsZero() {
			ch <- prometheus.MustNewConstMetric(descDuration, prometheus.GaugeValue, r.End.Sub(r.Start).Seconds(), lv...)
		}
	}
	type fk struct{ kind, sev string }
	counts := map[fk]int{}
	var fks []fk
	for _, f := range r.Findings {
		k := fk{f.Kind, f.Severity}
		if counts[k] == 0 {
			fks = append(fks, k)
		}
		counts[k]++
	}
	for _, k := range fks {
		ch <- prometheus.MustNewConstMetric(descFindings, prometheus.GaugeValue, float64(counts[k]), append(lv, k.kind, k.sev)...)
	}
	for _, d := range []struct {
		name string
		d    *result.DirResult
	}{{"read", r.Read}, {"write", r.Write}, {"sync", r.Sync}} {
		if d.d == nil {
			continue
		}
		dl := append(append([]string{}, lv...), d.name)
		ch <- prometheus.MustNewConstMetric(descIOPS, prometheus.GaugeValue, d.d.IOPS, dl...)
		if d.name != "sync" {
			ch <- prometheus.MustNewConstMetric(descThroughput, prometheus.GaugeValue, d.d.BWBytes, dl...)
		}
		for _, q := range quantiles {
			ch <- prometheus.MustNewConstMetric(descQuantile, prometheus.GaugeValue, q.get(d.d.Lat)/1e9, append(dl, q.q)...)
		}
		if h := &d.d.Hist; h.Count() > 0 {
			count, sum, buckets := PromBuckets(h)
			ch <- prometheus.MustNewConstHistogram(descLatency, count, sum, buckets, dl...)
		}
	}
}

// PromBuckets re-bins a fio histogram into cumulative Prometheus buckets
// (upper bounds in seconds). A fio bucket is counted under the first bound
// at or above its midpoint; the sum is estimated from the midpoints.
func PromBuckets(h *result.Histogram) (count uint64, sum float64, buckets map[float64]uint64) {
	per := make([]uint64, len(LatencyBuckets))
	for _, b := range h.Buckets() {
		n := b.Count
		v := float64(b.Ns) / 1e9
		sum += v * float64(n)
		count += n
		if j := sort.SearchFloat64s(LatencyBuckets, v); j < len(per) {
			per[j] += n
		}
	}
	buckets = make(map[float64]uint64, len(per))
	var cum uint64
	for j, b := range LatencyBuckets {
		cum += per[j]
		buckets[b] = cum
	}
	return count, sum, buckets
}

// SanitizeLabelName makes a user label key a valid Prometheus label name
// ("storage-class" -> "storage_class").
func SanitizeLabelName(k string) string {
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

// WriteTextfile writes results in the Prometheus text format that
// node-exporter's textfile collector reads (no timestamps).
func WriteTextfile(w io.Writer, rs []result.Result) error {
	reg := prometheus.NewPedanticRegistry()
	c := NewCollector()
	c.Add(rs...)
	if err := reg.Register(c); err != nil {
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
