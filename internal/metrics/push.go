package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
)

// PushJob is the job label of what iolens pushes.
const PushJob = "iolens"

// PushGroup is one Pushgateway group: a push replaces everything the group
// held, so a group holds the latest figures of one thing measured (a
// storage class), never one run: a run id in a grouping key would leave
// every run's series on the gateway for good.
type PushGroup struct {
	// Grouping labels name the group, besides job.
	Grouping map[string]string
	// Key maps a metric label to the result label (Target.Labels) whose
	// value tells the group's series apart, e.g. node -> k8s.node.
	Key     map[string]string
	Results []result.Result
}

// PushError is a failed push to a Pushgateway.
type PushError struct {
	URL string
	Err error
}

func (e *PushError) Error() string { return fmt.Sprintf("pushing to %s: %v", e.URL, e.Err) }
func (e *PushError) Unwrap() error { return e.Err }

// Hint says what to do.
func (e *PushError) Hint() string {
	return "check the Pushgateway URL (http://host:9091); the results are saved all the same ('iolens history')"
}

// Push sends each group's results to the Pushgateway at url, replacing
// what the group held (HTTP PUT), with iolens_build_info. Series carry no
// run id; iolens_run_end_timestamp_seconds says when the figures were
// measured and the gateway's push_time_seconds when they arrived. Each
// group is tried; the errors are joined.
func Push(ctx context.Context, url string, b Build, groups []PushGroup) error {
	if url == "" {
		return &PushError{URL: url, Err: errors.New("no URL")}
	}
	var errs []error
	for _, g := range groups {
		p := push.New(url, PushJob).Client(&http.Client{Timeout: 30 * time.Second}).
			Collector(buildInfo(b)).Collector(newPushCollector(g))
		for _, k := range sortedKeys(g.Grouping) {
			p = p.Grouping(k, g.Grouping[k])
		}
		if err := p.PushContext(ctx); err != nil {
			errs = append(errs, &PushError{URL: url, Err: fmt.Errorf("group %v: %w", g.Grouping, err)})
		}
	}
	return errors.Join(errs...)
}

type pushCollector struct {
	g              PushGroup
	names          []string
	tests          *testDescs
	end, n, failed *prometheus.Desc
}

func newPushCollector(g PushGroup) *pushCollector {
	names := sortedKeys(g.Key)
	return &pushCollector{g: g, names: names, tests: newTestDescs(names),
		end:    prometheus.NewDesc(nameRunEnd, "When the last test of the pushed results ended, as a Unix time.", nil, nil),
		n:      prometheus.NewDesc(nameTestsPlanned, "Tests of the pushed results, repeats included.", nil, nil),
		failed: prometheus.NewDesc(nameTestsFailed, "Tests of the pushed results that failed, repeats included.", nil, nil),
	}
}

func (c *pushCollector) Describe(ch chan<- *prometheus.Desc) {
	prometheus.DescribeByCollect(c, ch)
}

func (c *pushCollector) Collect(ch chan<- prometheus.Metric) {
	var end float64
	failed := 0
	for i := range c.g.Results {
		r := &c.g.Results[i]
		if !r.End.IsZero() {
			end = max(end, float64(r.End.UnixMilli())/1e3)
		}
		if r.Status != "ok" {
			failed++
		}
	}
	if end > 0 {
		ch <- prometheus.MustNewConstMetric(c.end, prometheus.GaugeValue, end)
	}
	ch <- prometheus.MustNewConstMetric(c.n, prometheus.GaugeValue, float64(len(c.g.Results)))
	ch <- prometheus.MustNewConstMetric(c.failed, prometheus.GaugeValue, float64(failed))
	c.tests.collect(ch, c.g.Results, keyLabels{names: c.names, of: func(r *result.Result) []string {
		vals := make([]string, len(c.names))
		for i, n := range c.names {
			vals[i] = r.Target.Labels[c.g.Key[n]]
		}
		return vals
	}})
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// groupBy splits results into push groups by the value of one result
// label (e.g. the storage class), with key labels as in PushGroup.Key.
// Results without the label go to a group whose grouping value is none.
func groupBy(rs []result.Result, groupLabel, by string, key map[string]string) []PushGroup {
	var out []PushGroup
	idx := map[string]int{}
	for _, r := range rs {
		v := strings.TrimSpace(r.Target.Labels[by])
		if v == "" {
			v = "none"
		}
		i, ok := idx[v]
		if !ok {
			i = len(out)
			idx[v] = i
			out = append(out, PushGroup{Grouping: map[string]string{groupLabel: v}, Key: key})
		}
		out[i].Results = append(out[i].Results, r)
	}
	return out
}

// CheckPushURL refuses what cannot be a Pushgateway's URL, so that a
// command can say so before a long run rather than after it.
func CheckPushURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.RawQuery != "" {
		return fmt.Errorf("--push %q: want the Pushgateway's http(s)://host:port", s)
	}
	return nil
}
