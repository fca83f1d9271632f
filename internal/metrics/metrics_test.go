package metrics

import (
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/watch"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var testBuild = Build{Version: "v1.2.3", Commit: "abc123"}

func sample() result.Result {
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	stall, dur := 10.0, 5.0
	return result.Result{
		Schema: result.SchemaV1, RunID: "run-1", Suite: "quick", Index: 1, Repeat: 1,
		Test:   result.TestSpec{Name: "randwrite-4k"},
		Target: result.Target{Device: "vdb", Labels: map[string]string{"storage-class": "premium", "zone": `a"b`}},
		Start:  start, End: start.Add(60 * time.Second), Status: "ok",
		Write: &result.DirResult{IOPS: 2300, BWBytes: 2300 * 4096,
			Lat: result.Latency{P50Ns: 1e6, P90Ns: 2e6, P99Ns: 4e6, P999Ns: 8e6, P9999Ns: 16e6, MeanNs: 2e6, N: 16},
			// Bucket midpoints: 30.3 µs, 995 µs, 3.04 s.
			Hist: result.HistogramOf(map[uint64]uint64{30336: 5, 995328: 10, 3036676096: 1})},
		Findings: []result.Finding{{Kind: "stall", Severity: "fail", StartS: &stall, DurationS: &dur}, {Kind: "stall", Severity: "fail"}},
	}
}

// repeat2 is sample's second repeat: 2500 IOPS, the same histogram.
func repeat2() result.Result {
	r := sample()
	r.Repeat, r.Index = 2, 2
	r.Start, r.End = r.Start.Add(time.Minute), r.End.Add(time.Minute)
	w := *r.Write
	w.IOPS, w.BWBytes = 2500, 2500*4096
	r.Write = &w
	r.Findings = nil
	return r
}

func parse(t *testing.T, r io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("output is not Prometheus text format: %v", err)
	}
	return mfs
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// lint runs promlint, and 'promtool check metrics' when it is installed,
// over an exporter's output.
func lint(t *testing.T, what string, text []byte) {
	t.Helper()
	problems, err := promlint.New(bytes.NewReader(text)).Lint()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, p := range problems {
		t.Errorf("%s: promlint: %s: %s", what, p.Metric, p.Text)
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Logf("%s: promtool not found (Debian package prometheus): only promlint ran", what)
		return
	}
	cmd := exec.Command(p, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("%s: promtool check metrics: %v\n%s", what, err, out)
		return
	}
	t.Logf("%s: promtool check metrics: ok %s", what, bytes.TrimSpace(out))
}

// checkBuildInfo: iolens_build_info{version, commit, goversion} 1.
func checkBuildInfo(t *testing.T, what string, mfs map[string]*dto.MetricFamily) {
	t.Helper()
	f := mfs[nameBuildInfo]
	if f == nil || len(f.Metric) != 1 {
		t.Fatalf("%s: no %s", what, nameBuildInfo)
	}
	l := labels(f.Metric[0])
	if l["version"] != testBuild.Version || l["commit"] != testBuild.Commit || l["goversion"] != runtime.Version() || f.Metric[0].GetGauge().GetValue() != 1 {
		t.Errorf("%s: %s %v = %v", what, nameBuildInfo, l, f.Metric[0].GetGauge().GetValue())
	}
}

// checkLabels: quantiles are summary quantiles, never a percentile label,
// and no label value has a space.
func checkLabels(t *testing.T, what string, mfs map[string]*dto.MetricFamily) {
	t.Helper()
	for name, f := range mfs {
		for _, m := range f.Metric {
			for k, v := range labels(m) {
				if k == "percentile" {
					t.Errorf("%s: %s has a percentile label; Prometheus' convention is quantile on a summary", what, name)
				}
				if k == "quantile" && f.GetType() != dto.MetricType_SUMMARY {
					t.Errorf("%s: %s has a quantile label but is a %s", what, name, f.GetType())
				}
				if strings.ContainsAny(v, " \t") && !strings.HasPrefix(k, "label_") {
					t.Errorf("%s: %s{%s=%q}: label values are single words", what, name, k, v)
				}
			}
		}
	}
}

func TestTextfile(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTextfile(&buf, testBuild, []result.Result{sample(), repeat2()}); err != nil {
		t.Fatal(err)
	}
	text := buf.Bytes()
	if bytes.Contains(text, []byte(" 171")) { // a Unix timestamp column would start so
		t.Errorf("textfile format has no timestamps:\n%s", text)
	}
	lint(t, "export prometheus", text)
	mfs := parse(t, &buf)
	checkBuildInfo(t, "textfile", mfs)
	checkLabels(t, "textfile", mfs)

	// Two repeats, one series: the mean of 2300 and 2500.
	iops := mfs[nameIOPS]
	if iops == nil || iops.GetType() != dto.MetricType_GAUGE || len(iops.Metric) != 1 {
		t.Fatalf("iops family: %v", iops)
	}
	m := iops.Metric[0]
	want := map[string]string{"run_id": "run-1", "device": "vdb", "test": "randwrite-4k", "direction": "write"}
	if got := labels(m); !equalMaps(got, want) {
		t.Errorf("iops labels %v, want %v", got, want)
	}
	if v := m.GetGauge().GetValue(); v != 2400 {
		t.Errorf("iops %v, want 2400", v)
	}
	if v := mfs[nameThroughput].Metric[0].GetGauge().GetValue(); v != 2400*4096 {
		t.Errorf("throughput %v", v)
	}
	if v := mfs[nameResults].Metric[0].GetGauge().GetValue(); v != 2 {
		t.Errorf("results %v, want 2", v)
	}
	// Quantiles from the merged histogram (32 IOs: 10 at 30.3 µs, 20 at
	// 995 µs, 2 at 3.04 s): the median and p90 are 995 µs, p99 3.04 s.
	s := mfs[nameLatencySummary]
	if s == nil || s.GetType() != dto.MetricType_SUMMARY {
		t.Fatalf("latency summary: %v", s)
	}
	sum := s.Metric[0].GetSummary()
	if sum.GetSampleCount() != 32 {
		t.Errorf("summary count %d, want 32", sum.GetSampleCount())
	}
	wantQ := map[float64]float64{0.5: 995328e-9, 0.9: 995328e-9, 0.99: 3036676096e-9}
	for _, q := range sum.GetQuantile() {
		if w, ok := wantQ[q.GetQuantile()]; ok && q.GetValue() != w {
			t.Errorf("quantile %g: %g s, want %g", q.GetQuantile(), q.GetValue(), w)
		}
		delete(wantQ, q.GetQuantile())
	}
	if len(wantQ) > 0 {
		t.Errorf("quantiles missing: %v", wantQ)
	}
	if !bytes.Contains(text, []byte(`quantile="0.99"`)) {
		t.Errorf("no quantile=\"0.99\" in\n%s", text)
	}

	h := mfs[nameLatency]
	if h == nil || h.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("latency family: %v", h)
	}
	hist := h.Metric[0].GetHistogram()
	if hist.GetSampleCount() != 32 {
		t.Errorf("count %d, want 32", hist.GetSampleCount())
	}
	// Cumulative counts, by hand: 10 samples at 30.3 µs are first counted
	// under 50 µs, the 20 at 995 µs under 1 ms, the 2 at 3.04 s under 5 s.
	wantB := map[float64]uint64{25e-6: 0, 50e-6: 10, 500e-6: 10, 1e-3: 30, 2.5: 30, 5: 32, 10: 32}
	for _, b := range hist.GetBucket() {
		if w, ok := wantB[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
			t.Errorf("bucket le=%g: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), w)
		}
	}
	if f := mfs[nameFindings].Metric[0]; f.GetGauge().GetValue() != 2 || labels(f)["kind"] != "stall" {
		t.Errorf("findings %v", f)
	}
	info := mfs[nameRunInfo].Metric[0]
	if l := labels(info); l["run_id"] != "run-1" || l["label_storage_class"] != "premium" || l["label_zone"] != `a"b` || l["suite"] != "quick" {
		t.Errorf("info labels %v", l)
	}
	if v := mfs[nameRunEnd].Metric[0].GetGauge().GetValue(); v != float64(repeat2().End.Unix()) {
		t.Errorf("run end %v", v)
	}
	if v := mfs[nameTestsPlanned].Metric[0].GetGauge().GetValue(); v != 2 {
		t.Errorf("tests %v", v)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Runs with different label keys still share one info family, and each
// run keeps its own series: history needs run_id.
func TestTextfileManyRuns(t *testing.T) {
	a, b := sample(), sample()
	b.RunID, b.Target.Labels = "run-2", map[string]string{"cluster": "west"}
	var buf bytes.Buffer
	if err := WriteTextfile(&buf, testBuild, []result.Result{a, b}); err != nil {
		t.Fatal(err)
	}
	mfs := parse(t, &buf)
	if n := len(mfs[nameRunInfo].Metric); n != 2 {
		t.Fatalf("%d info series", n)
	}
	for _, m := range mfs[nameRunInfo].Metric {
		if len(m.Label) != 5 { // run_id, suite, 3 label_*
			t.Errorf("info labels %v", labels(m))
		}
	}
	if n := len(mfs[nameIOPS].Metric); n != 2 {
		t.Errorf("%d iops series for two runs, want 2", n)
	}
}

// A failed repeat is counted, and left out of the figures.
func TestTextfileFailed(t *testing.T) {
	bad := repeat2()
	bad.Status, bad.Write = "failed", nil
	var buf bytes.Buffer
	if err := WriteTextfile(&buf, testBuild, []result.Result{sample(), bad}); err != nil {
		t.Fatal(err)
	}
	mfs := parse(t, &buf)
	if v := mfs[nameFailed].Metric[0].GetGauge().GetValue(); v != 1 {
		t.Errorf("failed %v, want 1", v)
	}
	if v := mfs[nameIOPS].Metric[0].GetGauge().GetValue(); v != 2300 {
		t.Errorf("iops %v, want the ok repeat's 2300", v)
	}
	if v := mfs[nameTestsFailed].Metric[0].GetGauge().GetValue(); v != 1 {
		t.Errorf("run failed %v", v)
	}
}

func TestSanitizeLabelName(t *testing.T) {
	for in, want := range map[string]string{"storage-class": "storage_class", "a.b/c": "a_b_c", "9x": "_x", "ok_1": "ok_1", "é": "_"} {
		if got := sanitizeLabelName(in); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}

func TestPromBucketsAgainstPercentile(t *testing.T) {
	h, err := result.HistogramFromBins(map[string]uint64{"995328": 3, "2023424": 1})
	if err != nil {
		t.Fatal(err)
	}
	n, sum, b := promBuckets(&h)
	if n != 4 || b[1e-3] != 3 || b[2.5e-3] != 4 {
		t.Errorf("n %d buckets %v", n, b)
	}
	if want := (3*995328.0 + 2023424) / 1e9; sum < want*0.999 || sum > want*1.001 {
		t.Errorf("sum %g want %g", sum, want)
	}
}

// scrape reads an endpoint's /metrics.
func scrape(t *testing.T, addr string) ([]byte, map[string]*dto.MetricFamily) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b, parse(t, bytes.NewReader(b))
}

// series is every series of an exposition as name{labels}, sorted.
func series(mfs map[string]*dto.MetricFamily) []string {
	var out []string
	for name, f := range mfs {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		for _, m := range f.Metric {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			out = append(out, name+"{"+strings.Join(ls, ",")+"}")
		}
	}
	sort.Strings(out)
	return out
}

// liveRun runs one repeat of randwrite-4k through a Live exporter served
// on loopback, and returns the exporter and its server.
func liveRun(t *testing.T) (*Live, *Server) {
	t.Helper()
	l := NewLive("quick", map[string]string{"storage-class": "premium"}, time.Unix(1714564800, 0))
	reg := NewRegistry(testBuild)
	reg.MustRegister(l)
	srv, err := Serve("127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	spec := result.TestSpec{Name: "randwrite-4k"}
	l.Event(runner.Event{Kind: runner.EventTestStart, Index: 1, Total: 3, Repeat: 1, Test: spec, Elapsed: 10 * time.Second})
	// fio's per-second figures: 1000, 1000 and 500 IOPS of 4 KiB.
	for i, iops := range []float64{1000, 1000, 500} {
		l.Event(runner.Event{Kind: runner.EventStatus, Index: 1, Total: 3, Repeat: 1, Test: spec,
			Elapsed: time.Duration(11+i) * time.Second, IOPS: iops, BWBytes: iops * 4096})
	}
	return l, srv
}

// The live endpoint: counters of the run's IO, the running test, then the
// finished test's figures; no series carries run_id, and a second run
// makes no new series.
func TestLive(t *testing.T) {
	l, srv := liveRun(t)
	text, mfs := scrape(t, srv.Addr())
	lint(t, "run --metrics-addr (running)", text)
	checkBuildInfo(t, "live", mfs)
	ios := mfs[nameRunIOs]
	if ios == nil || ios.GetType() != dto.MetricType_COUNTER {
		t.Fatalf("%s: %v", nameRunIOs, ios)
	}
	// 1000 + 1000 + 500 IOs over three seconds.
	if v := ios.Metric[0].GetCounter().GetValue(); v != 2500 {
		t.Errorf("run IOs %v, want 2500", v)
	}
	if v := mfs[nameRunBytes].Metric[0].GetCounter().GetValue(); v != 2500*4096 {
		t.Errorf("run bytes %v", v)
	}
	if f := mfs[nameRunning]; f == nil || labels(f.Metric[0])["test"] != "randwrite-4k" {
		t.Errorf("running: %v", f)
	}
	if v := mfs[nameTestsPlanned].Metric[0].GetGauge().GetValue(); v != 3 {
		t.Errorf("planned tests %v", v)
	}
	if mfs[nameIOPS] != nil {
		t.Errorf("final figures before the test ended")
	}
	spec := result.TestSpec{Name: "randwrite-4k"}
	l.Event(runner.Event{Kind: runner.EventTestEnd, Index: 1, Total: 3, Repeat: 1, Test: spec, Elapsed: 14 * time.Second})
	l.Add(sample())
	text, mfs = scrape(t, srv.Addr())
	lint(t, "run --metrics-addr (test done)", text)
	checkLabels(t, "live", mfs)
	if mfs[nameRunning] != nil {
		t.Errorf("running test left after it ended")
	}
	if v := mfs[nameIOPS].Metric[0].GetGauge().GetValue(); v != 2300 {
		t.Errorf("final iops %v", v)
	}
	if v := mfs[nameTestsDone].Metric[0].GetGauge().GetValue(); v != 1 {
		t.Errorf("done %v", v)
	}
	if mfs["go_goroutines"] == nil {
		t.Errorf("no process metrics")
	}
	first := series(mfs)
	for _, s := range first {
		if strings.Contains(s, "run_id=") {
			t.Errorf("live series with a run id: %s", s)
		}
	}

	// The next run, with another run id, on a new endpoint: the same
	// series.
	l2, srv2 := liveRun(t)
	l2.Event(runner.Event{Kind: runner.EventTestEnd, Index: 1, Total: 3, Repeat: 1, Test: spec})
	r := sample()
	r.RunID = "run-2"
	l2.Add(r)
	_, mfs2 := scrape(t, srv2.Addr())
	if second := series(mfs2); strings.Join(second, "\n") != strings.Join(first, "\n") {
		t.Errorf("a second run made other series:\nfirst:\n%s\nsecond:\n%s", strings.Join(first, "\n"), strings.Join(second, "\n"))
	}
}

// Live is a result sink output: what a sink hands it is exported.
func TestLiveEncode(t *testing.T) {
	l := NewLive("quick", nil, time.Time{})
	r := sample()
	if err := l.Encode(&r); err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(testBuild)
	reg.MustRegister(l)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range mfs {
		if f.GetName() == nameFindings && f.Metric[0].GetGauge().GetValue() == 2 {
			return
		}
	}
	t.Error("the encoded result's findings are not exported")
}

func TestServeHealthz(t *testing.T) {
	srv, err := Serve("127.0.0.1:0", NewRegistry(testBuild))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get("http://" + srv.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz: %s", resp.Status)
	}
	// A busy port is an error at once, with a hint.
	_, err = Serve(srv.Addr(), NewRegistry(testBuild))
	if le, ok := err.(*ListenError); !ok || le.Hint() == "" {
		t.Errorf("listening twice: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Error(err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

// The endpoint of 'iolens watch --metrics-addr': the watch metrics on the
// one metrics server, with build info, passing promtool check metrics.
func TestWatchEndpoint(t *testing.T) {
	reg := NewRegistry(testBuild)
	m := watch.NewMetrics(reg, "node-1")
	m.Expect("vdb", &watch.Ceiling{Name: "azure:P10", IOPS: 500, BWBytes: 100e6, BurstIOPS: 3500, BurstBWBytes: 170e6, BurstSeconds: 1800})
	for _, r := range watchRecords() {
		m.Observe(r)
	}
	srv, err := Serve("127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	text, mfs := scrape(t, srv.Addr())
	lint(t, "watch --metrics-addr", text)
	checkBuildInfo(t, "watch", mfs)
	checkLabels(t, "watch", mfs)
	if f := mfs["iolens_watch_device_io_operations_total"]; f == nil || f.GetType() != dto.MetricType_COUNTER {
		t.Errorf("watch IO counter: %v", f)
	}
}
