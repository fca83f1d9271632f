package diagnosis

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

func readFixture(t *testing.T, name string) []result.Result {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := result.NewDecoder(f, name, result.Formats{}).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// The quick suite on an emulated disk capped at 3,000 IOPS and 80 MB/s
// per direction (iolens emulate create --iops 3000 --bw 80MB/s, a run of
// the quick suite): the model finds both caps in both directions, QD1 at
// the IOPS cap (knee at 1), and etcd passing; the verdict says so first.
func TestQuickOnCappedDisk(t *testing.T) {
	rs := readFixture(t, "quick-3000iops-80MBps.ndjson")
	analysis.Annotate(rs)
	d := Build(rs, Options{Match: func(iops, bw float64) []Match {
		if iops < 2900 || iops > 3100 || bw < 79e6 || bw > 82e6 {
			t.Errorf("matcher asked for %v IOPS %v B/s", iops, bw)
		}
		return []Match{{Disk: "x:fake", IOPS: 3000, BWBytes: 80e6}}
	}})
	for name, dir := range map[string]*Direction{"read": d.Disk.Read, "write": d.Disk.Write} {
		if dir == nil {
			t.Fatalf("%s: no model", name)
		}
		if dir.IOPSLimit != result.CodeIOPSCap || dir.IOPS < 2900 || dir.IOPS > 3030 {
			t.Errorf("%s: IOPS %v (%s), want about 3,000 at an iops-cap", name, dir.IOPS, dir.IOPSLimit)
		}
		if dir.BWLimit != result.CodeBandwidthCap || dir.BWBytes < 79e6 || dir.BWBytes > 82e6 {
			t.Errorf("%s: %v B/s (%s), want about 80 MB/s at a bandwidth-cap", name, dir.BWBytes, dir.BWLimit)
		}
	}
	if r := d.Disk.Read; r.KneeQD != 1 || r.QD1IOPS < 2900 {
		t.Errorf("read QD1: %v IOPS, knee %d; want the cap at QD1, knee 1", r.QD1IOPS, r.KneeQD)
	}
	if d.Disk.Fsync == nil || d.Disk.Fsync.Etcd != "pass" {
		t.Errorf("fsync %+v", d.Disk.Fsync)
	}
	if d.Disk.Burst != nil || len(d.Disk.Stalls) != 0 {
		t.Errorf("a static disk has no burst or stall: %+v %+v", d.Disk.Burst, d.Disk.Stalls)
	}
	if len(d.Limits) != 6 {
		t.Errorf("%d limits, want one per test and direction (6)", len(d.Limits))
	}
	if len(d.ToChange) == 0 {
		t.Error("nothing to change on a capped disk")
	}
	v := strings.Join(d.Verdict, "\n")
	for _, want := range []string{"read:", "a flat IOPS cap", "a flat bandwidth cap", "at the ceiling already", "etcd PASS", "looks like: x:fake"} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q:\n%s", want, v)
		}
	}
	if d.Schema != schema || d.RunID == "" {
		t.Errorf("header %q %q", d.Schema, d.RunID)
	}
}

// The verdict only restates the findings: the direction's figures come
// from the model finding of its curve, the per-test limits from the limit
// findings, and the advice from what the model says binds.
func TestVerdictFollowsFindings(t *testing.T) {
	mk := func(name string, qd int, iops float64, code string) result.Result {
		return result.Result{RunID: "r", Status: "ok", Test: result.TestSpec{Name: name, RW: "randread", BlockSize: 4096, IODepth: qd, NumJobs: 1, Direct: true},
			Read:     &result.DirResult{IOPS: iops, BWBytes: iops * 4096, Lat: result.Latency{N: 100, MeanNs: float64(qd) / iops * 1e9}},
			Findings: []result.Finding{{Kind: result.KindLimit, Code: code, Dir: "read"}}}
	}
	qd1, qd32 := mk("qd1", 1, 500, result.CodeLatency), mk("qd32", 32, 16000, result.CodeIOPSCap)
	qd32.Findings = append(qd32.Findings, result.Finding{Kind: result.KindModel, Code: result.CodeIOPSCap, Dir: "read", Evidence: map[string]float64{
		"io_size_bytes": 4096, "random": 1, "state": float64(result.StateNumber(result.StatePlateau)), "base_lat_ns": 2e6, "base_qd": 1,
		"level_iops": 16000, "ceiling_iops": 16000, "rate_low": 15900, "rate_high": 16100, "knee_qd": 32,
		"qd1_iops": 500, "qd1_lat_ns": 2e6, "qd32_iops": 16000, "qd32_lat_ns": 2e6}})
	d := Build([]result.Result{qd32, qd1}, Options{})
	r := d.Disk.Read
	if r == nil || r.IOPSLimit != result.CodeIOPSCap || r.IOPS != 16000 || r.KneeQD != 32 || r.QD1IOPS != 500 || r.IOPSState != result.StatePlateau {
		t.Fatalf("read %+v", r)
	}
	if len(d.Curves) != 1 || len(d.Curves[0].Points) != 2 || d.Curves[0].Points[0].QD != 1 {
		t.Errorf("curves %+v", d.Curves)
	}
	if len(d.Limits) != 2 || d.Limits[0].Code != result.CodeIOPSCap || d.Limits[1].Code != result.CodeLatency {
		t.Errorf("limits %+v", d.Limits)
	}
	v := strings.Join(append(d.Verdict, d.ToChange...), "\n")
	for _, want := range []string{"16,000 IOPS ±0.7% (a flat IOPS cap)", "QD32 reaches the ceiling", "a deeper queue does not"} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q:\n%s", want, v)
		}
	}
	for _, line := range d.Verdict {
		if len(line) > 140 {
			t.Errorf("verdict line of %d characters: %s", len(line), line)
		}
	}
	if d.Disk.Write != nil || d.Disk.Fsync != nil || len(d.CatalogMatch) != 0 {
		t.Errorf("model has what was not measured: %+v", d.Disk)
	}
}

// A burst that ran out between two tests of the same shape, each too
// short to show the cliff itself, is still the model's burst.
func TestBurstBetweenTests(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(name string, start time.Duration, iops float64) result.Result {
		return result.Result{RunID: "r", Status: "ok", Start: t0.Add(start),
			Test:  result.TestSpec{Name: name, RW: "randwrite", BlockSize: 4096, IODepth: 32, NumJobs: 1, Direct: true},
			Write: &result.DirResult{IOPS: iops, BWBytes: iops * 4096}}
	}
	d := Build([]result.Result{mk("randwrite-4k-qd32", 0, 3000), mk("burst-randwrite-4k-qd32", 40*time.Second, 300)}, Options{})
	b := d.Disk.Burst
	if b == nil || !b.Between || b.Rate != 3000 || b.Baseline != 300 || b.DurationS != 40 {
		t.Fatalf("burst %+v", b)
	}
	if v := strings.Join(d.Verdict, "\n"); !strings.Contains(v, "3,000 IOPS fell to 300 IOPS within 40 s") {
		t.Errorf("verdict:\n%s", v)
	}
}

// A verdict is read in ten seconds: five lines at most however much the
// run found (a burst, stalls, catalog disks, an expected disk), and the
// things to change apart from it, one short line each.
func TestVerdictShort(t *testing.T) {
	one, two := 1.0, 4.0
	model := func(dir string, bs int64, code string, level float64) result.Finding {
		return result.Finding{Kind: result.KindModel, Code: code, Dir: dir, Evidence: map[string]float64{
			"io_size_bytes": float64(bs), "random": 1, "state": float64(result.StateNumber(result.StatePlateau)), "base_lat_ns": 2e6, "base_qd": 1,
			"level_iops": level, "ceiling_iops": level, "rate_low": level * 0.99, "rate_high": level * 1.01, "knee_qd": 3,
			"qd1_iops": 500, "qd1_lat_ns": 2e6, "qd32_iops": level, "qd32_lat_ns": 2e6 * 32 * 500 / level}}
	}
	rs := []result.Result{
		{RunID: "r", Status: "ok", Test: result.TestSpec{Name: "rr", RW: "randread", BlockSize: 4096, IODepth: 32, Direct: true},
			Read: &result.DirResult{IOPS: 1100}, Findings: []result.Finding{model("read", 4096, result.CodeIOPSCap, 1100)}},
		{RunID: "r", Status: "ok", Test: result.TestSpec{Name: "rw", RW: "randwrite", BlockSize: 4096, IODepth: 32, Direct: true},
			Write: &result.DirResult{IOPS: 1100}, Findings: []result.Finding{model("write", 4096, result.CodeIOPSCap, 1100),
				{Kind: result.KindStall, Severity: "warn", StartS: &one, DurationS: &two},
				{Kind: result.KindCliff, Evidence: map[string]float64{"burst_rate": 3500 * 4096, "burst_duration_s": 30, "plateau_rate": 1100 * 4096}}}},
		{RunID: "r", Status: "ok", Test: result.TestSpec{Name: "w1m", RW: "write", BlockSize: 1 << 20, IODepth: 8, Direct: true},
			Write: &result.DirResult{IOPS: 119}, Findings: []result.Finding{model("write", 1<<20, result.CodeBandwidthCap, 119)}},
		{RunID: "r", Status: "ok", Test: result.TestSpec{Name: "fsync", RW: "write", BlockSize: 2300, Fdatasync: 1},
			Sync: &result.DirResult{}, Findings: []result.Finding{{Kind: result.KindEtcd, Code: result.CodeEtcdFail, Evidence: map[string]float64{"p99_ns": 12e6, "syncs": 1000}}}},
	}
	match := func(float64, float64) []Match {
		return []Match{{Disk: "azure:P15", IOPS: 1100, BWBytes: 125e6}, {Disk: "aws:gp2:367GiB", IOPS: 1101, BWBytes: 128e6}}
	}
	d := Build(rs, Options{Match: match, Expected: &Expected{Disk: "azure:P15", Source: "--expect"}})
	if len(d.Verdict) < 3 || len(d.Verdict) > 5 {
		t.Errorf("a verdict of %d lines, want 3 to 5:\n%s", len(d.Verdict), strings.Join(d.Verdict, "\n"))
	}
	v := strings.Join(d.Verdict, "\n")
	for _, want := range []string{"burst:", "stalls: 1", "looks like: azure:P15", "compared with azure:P15", "etcd FAIL"} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "to change") {
		t.Errorf("the advice is in the verdict:\n%s", v)
	}
	if len(d.ToChange) < 2 {
		t.Errorf("to change: %q", d.ToChange)
	}
	for _, a := range d.ToChange {
		if len(a) >= 100 || strings.Contains(a, "; ") && strings.Count(a, ";") > 1 {
			t.Errorf("a 'to change' line of %d characters: %s", len(a), a)
		}
	}
}

// A run on the root disk while other disks are mounted says so first:
// a mistyped path gives the root disk's answer.
func TestVerdictNamesRootDisk(t *testing.T) {
	rs := readFixture(t, "quick-3000iops-80MBps.ndjson")
	for i := range rs {
		rs[i].Target.Device, rs[i].Target.RootDisk, rs[i].Target.OtherDisks = "vda", true, []string{"vdb at /mnt/data"}
	}
	d := Build(rs, Options{})
	if len(d.Verdict) == 0 || d.Verdict[0] != "target: this is the root disk, vda, while other disks are mounted (vdb at /mnt/data)" {
		t.Errorf("verdict = %q", d.Verdict)
	}
	for i := range rs {
		rs[i].Target.RootDisk = false
	}
	if d := Build(rs, Options{}); len(d.Verdict) > 0 && strings.Contains(d.Verdict[0], "root disk") {
		t.Errorf("verdict = %q without the mark", d.Verdict)
	}
}

// Depth advice is read off the depths measured (issue 36: "make run" said
// "5 or more in flight reach the ceiling" where QD4 measured 49% of it
// and QD32 all of it, and "knee at QD67" where nothing was measured
// between QD64 and QD128). Every depth a line names is a measured one.
func TestDepthAdviceFromMeasuredPoints(t *testing.T) {
	for _, c := range []struct {
		name   string
		points map[int]float64 // QD -> IOPS
		level  float64
		knee   float64 // the fit's
		want   []string
		reach  int
	}{
		{"this VM's disk", map[int]float64{1: 18270, 4: 41522, 32: 84804, 64: 84700}, 84718, 4.6,
			[]string{"QD32 reaches the ceiling, QD4 gets 49%", "one IO at a time gets 18,270 of 84,718 IOPS; QD32 reaches the ceiling, QD4 gets 49% of it"}, 32},
		{"a knee the fit puts at QD67", map[int]float64{1: 277, 32: 8400, 64: 15472, 128: 17724, 256: 18880}, 18293, 66.3,
			[]string{"QD128 reaches the ceiling, QD64 gets 85%"}, 128},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := map[string]float64{"io_size_bytes": 4096, "random": 1, "state": float64(result.StateNumber(result.StatePlateau)), "base_qd": 1,
				"level_iops": c.level, "ceiling_iops": c.level, "rate_low": c.level * 0.99, "rate_high": c.level * 1.01, "knee_qd": c.knee}
			var rs []result.Result
			for qd, iops := range c.points {
				ev[fmt.Sprintf("qd%d_iops", qd)], ev[fmt.Sprintf("qd%d_lat_ns", qd)] = iops, float64(qd)/iops*1e9
				if qd == 1 {
					ev["base_lat_ns"] = 1 / iops * 1e9
				}
			}
			for qd, iops := range c.points {
				r := result.Result{RunID: "r", Status: "ok", Test: result.TestSpec{Name: fmt.Sprintf("randread-4k-qd%d", qd), RW: "randread", BlockSize: 4096, IODepth: qd, NumJobs: 1, Direct: true},
					Read: &result.DirResult{IOPS: iops, BWBytes: iops * 4096, Lat: result.Latency{N: 100, MeanNs: float64(qd) / iops * 1e9}}}
				rs = append(rs, r)
			}
			rs[len(rs)-1].Findings = []result.Finding{{Kind: result.KindModel, Code: result.CodeIOPSCap, Dir: "read", Evidence: ev}}
			d := Build(rs, Options{})
			if r := d.Disk.Read; r == nil || r.KneeReachedQD != c.reach {
				t.Fatalf("read %+v, want the plateau reached at QD%d", r, c.reach)
			}
			all := strings.Join(append(d.Verdict, d.ToChange...), "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("lacks %q:\n%s", w, all)
				}
			}
			// Every "QDn" named is a measured depth.
			for _, m := range regexp.MustCompile(`QD(\d+)`).FindAllStringSubmatch(all, -1) {
				n, _ := strconv.Atoi(m[1])
				if _, ok := c.points[n]; !ok {
					t.Errorf("names QD%d, which was not measured:\n%s", n, all)
				}
			}
			if strings.Contains(all, "in flight reach") {
				t.Errorf("a depth from arithmetic, not a measured point:\n%s", all)
			}
		})
	}
}

// A figure at a burst rate is named so whatever the curve's state says
// beside it; a figure off the burst rate, or of another limit, is not.
func TestBurstWords(t *testing.T) {
	b := &BurstMatch{Disk: "azure:P15", BurstIOPS: 3500, BurstBWBytes: 170e6}
	for _, c := range []struct {
		v             float64
		code, in, out string
		several       bool
	}{
		{171e6, result.CodeBandwidthCap, "171 MB/s at QD8 (a flat bandwidth cap; one depth measured)", "171 MB/s at QD8 (azure:P15's burst rate; one depth measured)", false},
		{3501, result.CodeIOPSCap, "3,501 IOPS (a flat IOPS cap)", "3,501 IOPS (a catalog disk's burst rate)", true},
		{1100, result.CodeIOPSCap, "1,100 IOPS (a flat IOPS cap)", "1,100 IOPS (a flat IOPS cap)", false},
		{3501, result.CodeDevice, "3,501 IOPS (the device saturates)", "3,501 IOPS (the device saturates)", false},
	} {
		if got := burstWords(b, c.several, c.v, c.code, c.in); got != c.out {
			t.Errorf("%q: got %q, want %q", c.in, got, c.out)
		}
	}
}
