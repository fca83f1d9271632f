package compare_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/browsertest"
	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
)

// run is a saved run as compare reads it: the quick suite's tests, three
// repeats each, with series, histograms and a disk it was compared with.
func run(id, path string, scale float64, runtime float64, disk string) []result.Result {
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	var rs []result.Result
	tests := []struct {
		name, rw string
		bs       int64
		qd       int
		iops     float64
	}{{"randread-4k-qd32", "randread", 4096, 32, 3000}, {"randwrite-4k-qd32", "randwrite", 4096, 32, 2900},
		{"read-1m-qd8", "read", 1 << 20, 8, 119}, {"write-1m-qd8", "write", 1 << 20, 8, 118}, {"randread-4k-qd1", "randread", 4096, 1, 900}}
	for rep := 1; rep <= 3; rep++ {
		for i, tc := range tests {
			iops := tc.iops * scale * (1 + 0.01*float64(rep))
			d := &result.DirResult{IOPS: iops, BWBytes: iops * float64(tc.bs), Lat: result.Latency{N: 10000, MeanNs: 1e6, P99Ns: 2e6 / scale},
				Hist: result.HistogramOf(map[uint64]uint64{1003520: 9900, uint64(2023424 / scale): 100})}
			r := result.Result{Schema: result.Schema, RunID: id, Suite: "quick", Index: i + 1, Repeat: rep, Status: "ok", SampleIntervalS: 1,
				Test:   result.TestSpec{Name: tc.name, RW: tc.rw, BlockSize: tc.bs, IODepth: tc.qd, NumJobs: 1, Direct: true, IOEngine: "libaio", RuntimeS: runtime, RampS: 2},
				Target: result.Target{Kind: "dir", Path: path, Device: "nvme1n1", Filesystem: "ext4", SizeBytes: 1 << 30, Labels: map[string]string{"expect": disk}},
				Host:   result.Host{Hostname: "node-1", Kernel: "6.1.0", CPUs: 2, MemTotalBytes: 4 << 30, IolensVersion: "test"},
				Start:  start.Add(time.Duration(rep*10+i) * time.Minute), FioVersion: "fio-3.33"}
			if tc.rw == "randread" || tc.rw == "read" {
				r.Read = d
			} else {
				r.Write = d
			}
			for s := 1; s <= int(runtime); s++ {
				r.FioSeries = append(r.FioSeries, result.FioSample{T: float64(s), ReadIOPS: d.IOPS, ReadBWBytes: d.BWBytes, ReadLatMeanNs: 1e6})
			}
			rs = append(rs, r)
		}
	}
	return rs
}

// The comparison page: the warning first, better and worse in colour,
// the cost, and nothing wider than a 1000 px window.
func TestComparePageInBrowser(t *testing.T) {
	d := browsertest.Start(t, 1000, 900)
	long := "/var/lib/kubelet/pods/0f6a3c1e-8a53-4f43-9e1a-6d1f2b3c4d5e/volumes/kubernetes.io~csi/pvc-3f1e2d4c-5b6a-4789-8c0d-1e2f3a4b5c6d/mount"
	ops := []compare.Operand{
		{Name: "storage-class=managed-premium,cluster=aks-westeurope-prod", Results: run("20240501-120000-ab12cd", long, 1, 20, "aws:gp3:100GiB")},
		{Name: "storage-class=managed-csi-premium-v2,cluster=aks-westeurope-prod", Results: run("20240502-093000-ef34ab", long, 1.6, 60, "aws:gp2:1000GiB")},
		{Name: "before.ndjson", Results: run("20240503-080000-0a1b2c", "/mnt/data", 0.6, 20, "")},
	}
	c := compareTold(ops)
	if len(c.Mismatches) == 0 || c.Costs[0] == nil {
		t.Fatalf("the fixture should mismatch and be priced: %v %v", c.Mismatches, c.Costs)
	}
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, report.ComparePage(ops, c)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "compare.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	d.Open(path)
	if errs := d.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	if over, els := d.Overflow(); over > 0 {
		t.Errorf("the page is %d px wider than a 1000 px window: %v", over, els)
	}
	res := d.Exec(`
		var main = document.querySelector("main"), first = main.querySelector("section");
		var cls = {};
		document.querySelectorAll("#compare td").forEach(function (td) { if (td.className) cls[td.className] = (cls[td.className] || 0) + 1; });
		var b = document.querySelector("#compare td.better"), w = document.querySelector("#compare td.worse");
		return {first: first.id, warning: first.innerText, cls: cls,
			betterBg: b ? getComputedStyle(b).backgroundColor : "", worseBg: w ? getComputedStyle(w).backgroundColor : "",
			cost: (document.querySelector("#cost") || {}).innerText || ""};
	`).(map[string]any)
	if res["first"] != "warnings" || !strings.Contains(res["warning"].(string), "runtime differs: A 20 s; B 60 s; C 20 s (in all 5 tests)") {
		t.Errorf("the page does not open with the warning: %v", res)
	}
	cls := res["cls"].(map[string]any)
	// B is 60% faster on every test with p=1e-5: better in IOPS and p99;
	// C is 40% slower: worse.
	if cls["better"] == nil || cls["worse"] == nil {
		t.Errorf("no better/worse cells: %v", cls)
	}
	if res["betterBg"] == res["worseBg"] || res["betterBg"] == "rgba(0, 0, 0, 0)" {
		t.Errorf("better and worse are not coloured apart: %v / %v", res["betterBg"], res["worseBg"])
	}
	if cost := res["cost"].(string); !strings.Contains(cost, "aws:gp3:100GiB") || !strings.Contains(cost, "aws:gp2:1000GiB") {
		t.Errorf("cost table: %q", cost)
	}
	if dir := os.Getenv("IOLENS_ARTIFACTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "compare.png"), d.Screenshot(), 0o644)
	}
}
