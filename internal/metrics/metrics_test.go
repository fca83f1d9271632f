package metrics

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func sample() result.Result {
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	stall, dur := 10.0, 5.0
	return result.Result{
		Schema: result.SchemaV1, RunID: "run-1", Suite: "quick", Index: 1, Repeat: 1,
		Test:   result.TestSpec{Name: "randwrite-4k"},
		Target: result.Target{Device: "vdb", Labels: map[string]string{"storage-class": "premium", "zone": `a"b`}},
		Start:  start, End: start.Add(60 * time.Second), Status: "ok",
		Write: &result.DirResult{IOPS: 2300, BWBytes: 2300 * 4096,
			Lat: result.Latency{P50Ns: 1e6, P90Ns: 2e6, P99Ns: 4e6, P999Ns: 8e6, P9999Ns: 16e6},
			// Bucket midpoints: 30.3 µs, 995 µs, 3.04 s.
			Hist: result.HistogramOf(map[uint64]uint64{30336: 5, 995328: 10, 3036676096: 1})},
		Findings: []result.Finding{{Kind: "stall", Severity: "fail", StartS: &stall, DurationS: &dur}, {Kind: "stall", Severity: "fail"}},
	}
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

func TestTextfile(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTextfile(&buf, []result.Result{sample()}); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if strings.Contains(text, " 171") { // a Unix timestamp column would start so
		t.Errorf("textfile format has no timestamps:\n%s", text)
	}
	problems, err := promlint.New(bytes.NewReader(buf.Bytes())).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	mfs := parse(t, &buf)

	iops := mfs[NameIOPS]
	if iops == nil || iops.GetType() != dto.MetricType_GAUGE || len(iops.Metric) != 1 {
		t.Fatalf("iops family: %v", iops)
	}
	m := iops.Metric[0]
	if got := labels(m); got["run_id"] != "run-1" || got["test"] != "randwrite-4k" || got["direction"] != "write" || got["device"] != "vdb" || got["repeat"] != "1" {
		t.Errorf("iops labels %v", got)
	}
	if m.GetGauge().GetValue() != 2300 {
		t.Errorf("iops %v", m.GetGauge().GetValue())
	}
	if v := mfs[NameThroughput].Metric[0].GetGauge().GetValue(); v != 2300*4096 {
		t.Errorf("throughput %v", v)
	}
	for _, q := range mfs[NameQuantile].Metric {
		l := labels(q)
		if l["percentile"] == "99" && q.GetGauge().GetValue() != 0.004 {
			t.Errorf("p99 %v s, want 0.004", q.GetGauge().GetValue())
		}
	}
	h := mfs[NameLatency]
	if h == nil || h.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("latency family: %v", h)
	}
	hist := h.Metric[0].GetHistogram()
	if hist.GetSampleCount() != 16 {
		t.Errorf("count %d, want 16", hist.GetSampleCount())
	}
	// Cumulative counts, by hand: 5 samples at 30.3 µs are first counted
	// under 50 µs, the 10 at 995 µs under 1 ms, the one at 3.04 s under 5 s.
	want := map[float64]uint64{25e-6: 0, 50e-6: 5, 500e-6: 5, 1e-3: 15, 2.5: 15, 5: 16, 10: 16}
	for _, b := range hist.GetBucket() {
		if w, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
			t.Errorf("bucket le=%g: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), w)
		}
	}
	if f := mfs[NameFindings].Metric[0]; f.GetGauge().GetValue() != 2 || labels(f)["kind"] != "stall" {
		t.Errorf("findings %v", f)
	}
	info := mfs[NameRunInfo].Metric[0]
	if l := labels(info); l["label_storage_class"] != "premium" || l["label_zone"] != `a"b` || l["suite"] != "quick" {
		t.Errorf("info labels %v", l)
	}
	if v := mfs[NameDuration].Metric[0].GetGauge().GetValue(); v != 60 {
		t.Errorf("duration %v", v)
	}
}

// Runs with different label keys still share one info family.
func TestTextfileManyRuns(t *testing.T) {
	a, b := sample(), sample()
	b.RunID, b.Target.Labels = "run-2", map[string]string{"cluster": "west"}
	var buf bytes.Buffer
	if err := WriteTextfile(&buf, []result.Result{a, b}); err != nil {
		t.Fatal(err)
	}
	mfs := parse(t, &buf)
	if n := len(mfs[NameRunInfo].Metric); n != 2 {
		t.Fatalf("%d info series", n)
	}
	for _, m := range mfs[NameRunInfo].Metric {
		if len(m.Label) != 5 { // run_id, suite, 3 label_*
			t.Errorf("info labels %v", labels(m))
		}
	}
}

func TestSanitizeLabelName(t *testing.T) {
	for in, want := range map[string]string{"storage-class": "storage_class", "a.b/c": "a_b_c", "9x": "_x", "ok_1": "ok_1", "é": "_"} {
		if got := SanitizeLabelName(in); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}

func TestPromBucketsAgainstPercentile(t *testing.T) {
	h, err := result.HistogramFromBins(map[string]uint64{"995328": 3, "2023424": 1})
	if err != nil {
		t.Fatal(err)
	}
	n, sum, b := PromBuckets(&h)
	if n != 4 || b[1e-3] != 3 || b[2.5e-3] != 4 {
		t.Errorf("n %d buckets %v", n, b)
	}
	if want := (3*995328.0 + 2023424) / 1e9; sum < want*0.999 || sum > want*1.001 {
		t.Errorf("sum %g want %g", sum, want)
	}
}

func TestServeLive(t *testing.T) {
	c := NewCollector()
	c.StartRun("run-1", "quick", map[string]string{"storage-class": "premium"})
	srv, err := Serve("127.0.0.1:0", c)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	spec := result.TestSpec{Name: "randwrite-4k"}
	c.Event("run-1", runner.Event{Kind: runner.EventTestStart, Index: 1, Total: 3, Repeat: 1, Test: spec})
	c.Event("run-1", runner.Event{Kind: runner.EventStatus, Index: 1, Total: 3, Repeat: 1, Test: spec, IOPS: 1234, BWBytes: 5e6})

	get := func() map[string]*dto.MetricFamily {
		resp, err := http.Get("http://" + srv.Addr() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return parse(t, resp.Body)
	}
	mfs := get()
	if v := mfs[NameLiveIOPS].Metric[0].GetGauge().GetValue(); v != 1234 {
		t.Errorf("live iops %v", v)
	}
	if v := mfs[NameTestsPlaned].Metric[0].GetGauge().GetValue(); v != 3 {
		t.Errorf("planned tests %v", v)
	}
	if mfs[NameIOPS] != nil {
		t.Errorf("final figures before the test ended")
	}
	r := sample()
	c.Event("run-1", runner.Event{Kind: runner.EventTestEnd, Index: 1, Total: 3, Repeat: 1, Test: spec, Result: &r})
	mfs = get()
	if mfs[NameLiveIOPS] != nil || mfs[NameRunning] != nil {
		t.Errorf("live gauges left after the test ended")
	}
	if v := mfs[NameIOPS].Metric[0].GetGauge().GetValue(); v != 2300 {
		t.Errorf("final iops %v", v)
	}
	if v := mfs[NameTestsDone].Metric[0].GetGauge().GetValue(); v != 1 {
		t.Errorf("done %v", v)
	}
	if mfs["go_goroutines"] == nil {
		t.Errorf("no process metrics")
	}
}
