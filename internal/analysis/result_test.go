package analysis

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
)

// seriesResult is a 128k sequential write whose fio series is s (bytes/s
// per window). Windows at zero get no row, as fio writes none.
func seriesResult(s series) result.Result {
	r := result.Result{Schema: result.SchemaV1, Status: "ok", Test: result.TestSpec{Name: "w", RW: "write", BlockSize: 128 << 10, RuntimeS: float64(len(s)), Direct: true},
		Write: &result.DirResult{RuntimeMs: int64(len(s)) * 1000, IOBytes: 1}}
	for i, v := range s {
		if v == 0 {
			continue
		}
		r.FioSeries = append(r.FioSeries, result.FioSample{T: float64(i + 1), WriteBWBytes: v, WriteIOPS: v / (128 << 10)})
	}
	return r
}

func kinds(fs []result.Finding) string {
	var k []string
	for _, f := range fs {
		k = append(k, f.Kind)
	}
	return strings.Join(k, ",")
}

func steadyOf(t *testing.T, fs []result.Finding) result.Finding {
	t.Helper()
	for _, f := range fs {
		if f.Kind == kindSteady {
			return f
		}
	}
	t.Fatalf("no steady-state finding in %+v", fs)
	return result.Finding{}
}

func TestSyntheticSeries(t *testing.T) {
	var stalls series
	for range 6 {
		stalls = cat(stalls, flat(25, 120e6).noisy(0.05, uint64(len(stalls))), flat(8, 0))
	}
	for _, c := range []struct {
		name   string
		s      series
		kinds  string // findings other than steady state, in order
		steady string // prefix of the steady-state summary
	}{
		{"flat", flat(120, 100e6), "", "steady from t=0s"},
		{"noise", flat(600, 100e6).noisy(0.04, 11), "", "steady from t=0s"},
		{"ramp", ramp(120, 20e6, 120e6).noisy(0.02, 12), "", "never steady"},
		{"warm-up then flat", cat(ramp(30, 20e6, 100e6), flat(90, 100e6)).noisy(0.02, 13), "", "steady from t=2"},
		{"periodic stalls", stalls, "stall,stall,stall,stall,stall,stall", "never steady"},
		{"credit cliff", cat(flat(90, 250e6), flat(150, 60e6)).noisy(0.03, 14), "cliff", "steady from t=9"},
		{"short", flat(6, 100e6), "", "not enough data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := seriesResult(c.s)
			fs := ResultFindings(&r)
			st := steadyOf(t, fs)
			if !strings.HasPrefix(st.Summary, c.steady) {
				t.Errorf("steady state %q, want %q...", st.Summary, c.steady)
			}
			var other []result.Finding
			for _, f := range fs {
				if f.Kind != kindSteady {
					other = append(other, f)
				}
			}
			if got := kinds(other); got != c.kinds {
				t.Errorf("findings %q, want %q: %+v", got, c.kinds, other)
			}
		})
	}
}

func TestCliffFindingFigures(t *testing.T) {
	r := seriesResult(cat(flat(90, 250e6), flat(150, 60e6)).noisy(0.03, 14))
	for _, f := range ResultFindings(&r) {
		if f.Kind != KindCliff {
			continue
		}
		if *f.DurationS != 90 || !near(f.Evidence["burst_rate"], 250e6, 5e6) || !near(f.Evidence["plateau_rate"], 60e6, 2e6) {
			t.Errorf("cliff %+v", f)
		}
		if !strings.Contains(f.Summary, "250.") || !strings.Contains(f.Summary, "for 90 s") {
			t.Errorf("summary %q lacks the figures", f.Summary)
		}
		return
	}
	t.Fatal("no cliff")
}

// TestWriteback is seed 000 test 6 in small: fio writes 6 GB in 20 s
// into the page cache; the disk takes 125 MB/s during the test and for
// 30 s after.
func TestWriteback(t *testing.T) {
	r := seriesResult(flat(20, 300e6))
	r.Test.Direct = false
	r.Write.IOBytes = 6e9
	r.Target.Device = "sdc"
	dev := result.DeviceSeries{Device: "sdc", Role: "direct"}
	tail := result.DeviceSeries{Device: "sdc", Role: "direct"}
	for i := 1; i <= 20; i++ {
		dev.Samples = append(dev.Samples, result.DeviceSample{T: float64(i) + 0.3, WriteBWBytes: 125e6, UtilPct: 100})
	}
	for i := 21; i <= 55; i++ {
		w := 125e6
		if i > 50 {
			w = 0
		}
		tail.Samples = append(tail.Samples, result.DeviceSample{T: float64(i) + 0.3, WriteBWBytes: w})
	}
	r.Devices, r.Tail = []result.DeviceSeries{dev}, []result.DeviceSeries{tail}
	fs := writebackFindings(&r)
	if kinds(fs) != "writeback,page-cache" {
		t.Fatalf("findings %q: %+v", kinds(fs), fs)
	}
	if d := *fs[0].DurationS; !near(d, 30.3, 0.01) {
		t.Errorf("tail %v s, want 30.3", d)
	}
	// 20 samples, the first counted as 1 s: 2.5 GB reached the disk.
	if ratio := fs[1].Evidence["ratio"]; !near(ratio, 6e9/2.5e9, 0.01) {
		t.Errorf("inflation ratio %v, want 2.4", ratio)
	}

	// Direct IO that matches the device: nothing to say.
	r.Write.IOBytes = 2.5e9
	r.Tail = nil
	if fs := writebackFindings(&r); len(fs) != 0 {
		t.Errorf("findings on matching bytes: %+v", fs)
	}
}

func loadFio(t *testing.T, name string) result.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := fio.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	j := doc.AllJobs()[0]
	r := result.Result{Schema: result.SchemaV1, Status: "ok", RunID: "fixture", FioJSON: doc.Raw}
	o := j.JobOptions
	fmt.Sscan(o["iodepth"], &r.Test.IODepth)
	fmt.Sscan(o["fdatasync"], &r.Test.Fdatasync)
	r.Test.NumJobs, r.Test.RW, r.Test.BlockSize = 1, o["rw"], 4096
	if err := fio.FillFromFio(&r, []fio.Job{j}); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEtcdVerdictOnFio333Output(t *testing.T) {
	// fio 3.33: sync.total_ios 0, 10029 fdatasyncs in sync.lat_ns.N, p99
	// 5.93 ms, p99.9 16.9 ms, max 29.9 ms (read from the file by eye).
	r := loadFio(t, "etcd_fdatasync.json")
	f, ok := EtcdVerdict(&r)
	if !ok {
		t.Fatal("no verdict")
	}
	if f.Severity != SevInfo || f.Evidence["syncs"] != 10029 || f.Evidence["p99_ns"] != 5931008 || f.Evidence["p99_9_ns"] != 16908288 || f.Evidence["max_ns"] != 29909460 {
		t.Errorf("verdict %+v", f)
	}
	// fio's counter bug is a detail for whoever reads fio's output, not
	// the verdict's reader.
	if !strings.Contains(f.Summary, "pass") || strings.Contains(f.Summary, "total_ios") || !strings.Contains(f.Detail, "sync.total_ios=0") {
		t.Errorf("summary %q, detail %q", f.Summary, f.Detail)
	}
	for _, c := range []struct {
		p99 float64
		sev string
	}{{8.4e6, SevInfo}, {8.5e6, SevWarn}, {9.99e6, SevWarn}, {10e6, SevFail}, {25e6, SevFail}} {
		r.Sync.Lat.P99Ns = c.p99
		if f, _ := EtcdVerdict(&r); f.Severity != c.sev {
			t.Errorf("p99 %v ns: severity %s, want %s", c.p99, f.Severity, c.sev)
		}
	}
}

func TestQDSweepOnRealRuns(t *testing.T) {
	// fio-brief §5: randread 4k on a VM, IOPS still rising at QD 64, and
	// Little's ratio 0.99..1.00 at every depth.
	var members []*result.Result
	for _, q := range []int{1, 2, 4, 8, 16, 32, 64} {
		r := loadFio(t, fmt.Sprintf("qd%d.json", q))
		r.Test.Group = SweepPrefix + "randread-4k"
		members = append(members, &r)
	}
	sw, ok := AnalyzeSweep("randread-4k", members, nil)
	if !ok {
		t.Fatal("no sweep")
	}
	if sw.Regime != regimeLatencyBound || sw.Knee != 0 || sw.Max.Outstanding != 64 || !near(sw.Max.IOPS, 59796, 1) {
		t.Errorf("sweep %+v", sw)
	}
	if sw.LittleMin < 0.98 || sw.LittleMax > 1.01 {
		t.Errorf("Little's ratio %v..%v, want 0.99..1.00", sw.LittleMin, sw.LittleMax)
	}
	f := sweepFinding(sw)
	if f.Severity != SevInfo || !strings.Contains(f.Summary, "Little's law holds") {
		t.Errorf("finding %+v", f)
	}
}

// capped builds a sweep against a device capped at capIOPS with 0.5 ms
// service time: IOPS = min(QD/0.5ms, cap), latency by Little's law, each
// test's rate flat second to second as a throttle paces it, far flatter
// than its service times, which vary (half the IOs at half the mean, half
// at one and a half times it), would keep a device.
func cappedSweep(capIOPS float64, bs int64) []*result.Result {
	var out []*result.Result
	for q := 1; q <= 64; q *= 2 {
		iops := min(float64(q)/0.5e-3, capIOPS)
		lat := float64(q) / iops * 1e9
		h := result.Histogram{}
		h.Add(uint64(lat*0.5), 500)
		h.Add(uint64(lat*1.5), 500)
		out = append(out, &result.Result{Status: "ok", Index: q, Test: result.TestSpec{Name: fmt.Sprint("qd", q), RW: "randread", BlockSize: bs, IODepth: q, NumJobs: 1, Group: SweepPrefix + "x", Direct: true},
			Read: &result.DirResult{IOPS: iops, BWBytes: iops * float64(bs), RuntimeMs: 10000, Lat: result.Latency{N: 1000, MeanNs: lat}, Hist: h}, FioSeries: flatSeries(iops, bs, 10)})
	}
	return out
}

// flatSeries is n 1 s windows of a rate held to a pace.
func flatSeries(iops float64, bs int64, n int) []result.FioSample {
	var out []result.FioSample
	for i := 1; i <= n; i++ {
		v := iops * (1 + 1e-4*float64(i%2))
		out = append(out, result.FioSample{T: float64(i), ReadIOPS: v, ReadBWBytes: v * float64(bs)})
	}
	return out
}

func TestQDSweepRegimes(t *testing.T) {
	// A 1 MiB test at QD8, paced flat too (its latency varies: p99 1.5
	// times the mean).
	big := func(bw float64) []*result.Result {
		iops := bw / (1 << 20)
		return []*result.Result{{Status: "ok", Test: result.TestSpec{RW: "read", BlockSize: 1 << 20, IODepth: 8, NumJobs: 1, Direct: true},
			Read: &result.DirResult{IOPS: iops, BWBytes: bw, RuntimeMs: 10000, Lat: result.Latency{N: 1000, MeanNs: 8 / iops * 1e9, P99Ns: 12 / iops * 1e9}}, FioSeries: flatSeries(iops, 1<<20, 10)}}
	}
	// 3000 IOPS cap = 12.3 MB/s of 4k.
	for _, c := range []struct {
		name   string
		others []*result.Result
		want   string
	}{
		{"1M reads move far more bytes", big(125e6), regimeIOPSCapped},
		{"1M reads no faster in bytes", big(13e6), regimeBWCapped},
		{"nothing to compare: a flat cap at 4k is read as IOPS", nil, regimeIOPSCapped},
	} {
		sw, ok := AnalyzeSweep("x", cappedSweep(3000, 4096), c.others)
		if !ok || sw.Regime != c.want || sw.Knee != 2 || sw.Max.IOPS != 3000 {
			t.Errorf("%s: %+v", c.name, sw)
		}
	}
}

// The sweep's finding says the knee as the advice does: the bracket of
// measured depths it lies in, with the share the shallower one gets
// (issue 36), never a depth no test ran; a curve with no plateau has no
// knee to name.
func TestSweepKneeInMeasuredDepths(t *testing.T) {
	sw, ok := AnalyzeSweep("x", cappedSweep(3000, 4096), nil)
	if !ok {
		t.Fatal("no sweep")
	}
	// QD1 gets 2,000 IOPS (0.5 ms each), QD2 the 3,000 cap.
	if got, want := sweepFinding(sw).Summary, "knee between QD 1 and QD 2 (QD 2 reaches the plateau, QD 1 gets 67% of it)"; !strings.Contains(got, want) {
		t.Errorf("capped sweep says %q, want %q", got, want)
	}
	var members []*result.Result
	for _, q := range []int{1, 2, 4, 8, 16, 32, 64} {
		r := loadFio(t, fmt.Sprintf("qd%d.json", q))
		r.Test.Group = SweepPrefix + "randread-4k"
		members = append(members, &r)
	}
	sw, _ = AnalyzeSweep("randread-4k", members, nil)
	if got := sweepFinding(sw).Summary; !strings.Contains(got, "no plateau up to QD 64") || strings.Contains(got, "knee") {
		t.Errorf("still rising at QD64, the sweep says %q", got)
	}
}
