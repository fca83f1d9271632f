package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

func TestAnalyzeFioOutput(t *testing.T) {
	etcd := filepath.Join("..", "analysis", "testdata", "etcd_fdatasync.json")
	out, errs, code := execute(t, "analyze", etcd)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "fdatasync p99 5.93 ms against the 10 ms limit: pass") {
		t.Errorf("no etcd verdict:\n%s", out)
	}
	// The verdict is info; --fail-on info turns it into a failure.
	if _, _, code := execute(t, "analyze", "--fail-on", "info", etcd); code != 4 {
		t.Errorf("--fail-on info: exit %d, want 4", code)
	}
	if _, errs, code := execute(t, "analyze", "--fail-on", "bad", etcd); code != 2 || !strings.Contains(errs, "hint:") {
		t.Errorf("--fail-on bad: exit %d, %s", code, errs)
	}

	// One fio file per depth reads as a sweep.
	qds, _ := filepath.Glob(filepath.Join("..", "analysis", "testdata", "qd*.json"))
	out, errs, code = execute(t, append([]string{"analyze"}, qds...)...)
	if code != 0 || !strings.Contains(out, "randread-4k: latency-bound (raise parallelism)") {
		t.Errorf("exit %d, %s\n%s", code, errs, out)
	}
}

func TestAnalyzeReplacesSavedFindings(t *testing.T) {
	// A saved result with a stale finding and a stalled series.
	r := result.Result{Schema: result.SchemaV1, RunID: "r", Suite: "standard", Index: 1, Repeat: 1, Status: "ok",
		Test:     result.TestSpec{Name: "sustained", RW: "write", BlockSize: 1 << 20, RuntimeS: 40},
		Write:    &result.DirResult{IOPS: 100, BWBytes: 100e6, RuntimeMs: 40000, IOBytes: 4e9},
		Findings: []result.Finding{{Kind: "old", Severity: "fail", Summary: "stale"}}}
	for i := 1; i <= 40; i++ {
		if i > 20 && i <= 26 {
			continue // no completions: a stall
		}
		r.FioSeries = append(r.FioSeries, result.FioSample{T: float64(i), WriteBWBytes: 100e6, WriteIOPS: 100})
	}
	b, _ := json.Marshal(r)
	path := filepath.Join(t.TempDir(), "r.ndjson")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := execute(t, "analyze", "-o", "json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rs []result.Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, f := range rs[0].Findings {
		kinds = append(kinds, f.Kind)
		if f.Kind == "stall" && (*f.StartS != 20 || *f.DurationS != 6) {
			t.Errorf("stall %+v", f)
		}
	}
	// Every result also names the limit that binds it, and the disk
	// model's curve it is on.
	if strings.Join(kinds, ",") != "steady,stall,limit,model" {
		t.Errorf("findings %v, want steady,stall,limit,model", kinds)
	}
	out, _, _ = execute(t, "analyze", path)
	if !strings.Contains(out, "[warn] throughput stalled for 6 s from t=20s") {
		t.Errorf("text:\n%s", out)
	}
}

func TestAnalyzeExpect(t *testing.T) {
	fixture := "../report/testdata/randread_4k_qd8.jsonplus.json"
	out, errs, code := execute(t, "analyze", "--expect", "azure:P15", fixture)
	if code != 0 || !strings.Contains(out, "of the azure:P15 ceiling at 4 KiB (1,100 IOPS") {
		t.Fatalf("exit %d, %s\n%s", code, errs, out)
	}
	// 23k IOPS on a P15 is above what the disk can do: a warning.
	if _, _, code := execute(t, "analyze", "--expect", "azure:P15", "--fail-on", "warn", fixture); code != 4 {
		t.Errorf("--fail-on warn above the ceiling: exit %d, want 1", code)
	}
	if _, errs, code := execute(t, "analyze", "--expect", "azure:P99", fixture); code != 2 || !strings.Contains(errs, "hint:") {
		t.Errorf("unknown disk: exit %d, %s", code, errs)
	}
}
