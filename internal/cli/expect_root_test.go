package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
)

// TestExpectOnEmulatedDisk: an emulated disk with a catalog disk's caps
// and a 1 ms latency, run with --expect on the same disk, gets "at cap"
// verdicts where the tests reach the caps and "latency-bound" at QD1.
// The latency, not the host, sets where QD1 lands: at most 1,000 IOPS,
// against a 4,000 IOPS cap that QD32 (up to 32,000 IOPS at 1 ms) reaches
// on any host. Root only; about 25 s.
func TestExpectOnEmulatedDisk(t *testing.T) {
	realio.Real(t, emulate.Unavailable("fio"))
	const disk = "azure:premium-ssd-v2:iops=4000,throughput=150"
	t.Setenv("IOLENS_EMULATE_DIR", t.TempDir())
	// The controller daemon create starts is this test binary, as iolens.
	t.Setenv("IOLENS_TEST_MAIN", "1")
	if _, errs, code := execute(t, "emulate", "create", "expect", "--profile", disk, "--latency", "1ms", "--ram", "--size", "1GiB"); code != 0 {
		t.Fatalf("emulate create: exit %d: %s", code, errs)
	}
	realio.Cleanup(t, func() {
		if _, errs, code := execute(t, "emulate", "rm", "--force", "expect"); code != 0 {
			t.Errorf("emulate rm: exit %d: %s", code, errs)
		}
	})
	job := filepath.Join(t.TempDir(), "caps.fio")
	err := os.WriteFile(job, []byte(`[global]
ioengine=libaio
direct=1
runtime=4
time_based
[randread-4k-qd32]
rw=randread
bs=4k
iodepth=32
[randread-4k-qd1]
stonewall
rw=randread
bs=4k
iodepth=1
[read-1m-qd8]
stonewall
rw=read
bs=1m
iodepth=8
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code := execute(t, "run", "--emulated", "expect", "--job", job, "--size", "256MiB", "--expect", disk, "--no-save", "-o", "json")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	var rs []result.Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("run output: %v", err)
	}
	want := map[string]string{"randread-4k-qd32": limits.VerdictDiskIOPS, "randread-4k-qd1": limits.VerdictLatency, "read-1m-qd8": limits.VerdictDiskBW}
	code2verdict := map[string]string{result.CodeDiskIOPS: limits.VerdictDiskIOPS, result.CodeDiskBandwidth: limits.VerdictDiskBW, result.CodeLatency: limits.VerdictLatency}
	for _, r := range rs {
		var got []string
		for _, f := range r.Findings {
			if f.Kind == limits.KindCeiling {
				got = append(got, code2verdict[f.Code])
				t.Logf("%s: %s", r.Test.Name, f.Summary)
			}
		}
		if w, ok := want[r.Test.Name]; ok {
			if len(got) != 1 || got[0] != w {
				t.Errorf("%s: verdicts %q, want %q", r.Test.Name, got, w)
			}
			delete(want, r.Test.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("no results for %v", want)
	}
}
