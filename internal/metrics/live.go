package metrics

import (
	"sync"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/prometheus/client_golang/prometheus"
)

// Live exports the run in progress, for 'iolens run --metrics-addr'. No
// series carries the run id: one endpoint serves one run, and the next run
// updates the same series instead of making new ones (the saved history,
// 'iolens export prometheus', has run_id). It is safe for concurrent use:
// the runner reports while the HTTP handler collects.
type Live struct {
	mu      sync.Mutex
	suite   string
	labels  map[string]string
	start   time.Time
	total   int
	done    int
	running string
	// ios and bytes integrate fio's per-second status figures: counters
	// of the IO the run's tests did, so that rate() works at any scrape
	// interval.
	ios, bytes float64
	last       time.Duration
	results    []result.Result

	tests                                 *testDescs
	startD, planned, doneD, failedD, runD *prometheus.Desc
	iosD, bytesD                          *prometheus.Desc
}

// NewLive returns the exporter of a run of suite, with the user's labels,
// started at start.
func NewLive(suite string, labels map[string]string, start time.Time) *Live {
	l := &Live{suite: suite, labels: map[string]string{}, start: start, tests: newTestDescs([]string{"device"}),
		startD:  prometheus.NewDesc(nameRunStart, "When the run started, as a Unix time.", nil, nil),
		planned: prometheus.NewDesc(nameTestsPlanned, "Tests in the run, repeats included.", nil, nil),
		doneD:   prometheus.NewDesc(nameTestsDone, "Tests of the run that have finished.", nil, nil),
		failedD: prometheus.NewDesc(nameTestsFailed, "Tests of the run that failed.", nil, nil),
		runD:    prometheus.NewDesc(nameRunning, "1 while the test runs.", []string{"test"}, nil),
		iosD:    prometheus.NewDesc(nameRunIOs, "IO operations the run's tests completed, as fio reports them every second; rate() is the live IOPS.", nil, nil),
		bytesD:  prometheus.NewDesc(nameRunBytes, "Bytes the run's tests transferred, as fio reports them every second; rate() is the live throughput.", nil, nil),
	}
	for k, v := range labels {
		l.labels[k] = v
	}
	return l
}

// Add records finished results (with their findings).
func (l *Live) Add(rs ...result.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.results = append(l.results, rs...)
}

// Encode takes one finished result as a result sink's output does, after
// its expectation and analysis.
func (l *Live) Encode(r *result.Result) error {
	l.Add(*r)
	return nil
}

// Event follows the runner's progress: the planned count, the running
// test and its per-second figures. Finished results come through Add.
func (l *Live) Event(ev runner.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ev.Total > 0 {
		l.total = ev.Total
	}
	switch ev.Kind {
	case runner.EventTestStart:
		l.running, l.last = ev.Test.Name, ev.Elapsed
	case runner.EventStatus:
		if dt := (ev.Elapsed - l.last).Seconds(); dt > 0 {
			l.ios += max(0, ev.IOPS) * dt
			l.bytes += max(0, ev.BWBytes) * dt
		}
		l.last = ev.Elapsed
	case runner.EventTestEnd:
		l.done++
		l.running = ""
	}
}

// Describe sends no descriptors: iolens_run_info's labels are the run's
// own, so the collector is unchecked.
func (l *Live) Describe(chan<- *prometheus.Desc) {}

// Collect emits the current metrics.
func (l *Live) Collect(ch chan<- prometheus.Metric) {
	l.mu.Lock()
	defer l.mu.Unlock()
	runInfo(ch, nil, []runMeta{{suite: l.suite, labels: l.labels}})
	if !l.start.IsZero() {
		ch <- prometheus.MustNewConstMetric(l.startD, prometheus.GaugeValue, float64(l.start.UnixMilli())/1e3)
	}
	if l.total > 0 {
		ch <- prometheus.MustNewConstMetric(l.planned, prometheus.GaugeValue, float64(l.total))
	}
	failed := 0
	for i := range l.results {
		if l.results[i].Status != "ok" {
			failed++
		}
	}
	ch <- prometheus.MustNewConstMetric(l.doneD, prometheus.GaugeValue, float64(max(l.done, len(l.results))))
	ch <- prometheus.MustNewConstMetric(l.failedD, prometheus.GaugeValue, float64(failed))
	ch <- prometheus.MustNewConstMetric(l.iosD, prometheus.CounterValue, l.ios)
	ch <- prometheus.MustNewConstMetric(l.bytesD, prometheus.CounterValue, l.bytes)
	if l.running != "" {
		ch <- prometheus.MustNewConstMetric(l.runD, prometheus.GaugeValue, 1, l.running)
	}
	l.tests.collect(ch, l.results, keyLabels{names: []string{"device"},
		of: func(r *result.Result) []string { return []string{r.Target.Device} }})
}
