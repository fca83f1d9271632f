package report

import (
	"bytes"
	"flag"
	"github.com/iolens/iolens/internal/diagnosis"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// fixed builds a deterministic set of results: one from fio's own output
// and a hand-made failed one.
func fixed(t *testing.T) []result.Result {
	t.Helper()
	var rs []result.Result
	for _, f := range []string{"randread_4k_qd8.jsonplus.json", "etcd_fdatasync.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadResults(bytes.NewReader(b), f)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, got...)
	}
	for i := range rs {
		rs[i].RunID = "run-1"
		rs[i].Suite = "golden"
		rs[i].Target = result.Target{Kind: "dir", Path: "/data/<x>|y", Device: "vda", Devices: []string{"vda"}, Filesystem: "ext4", SizeBytes: 1 << 30, SizeReason: "default 1 GiB"}
		rs[i].Host = result.Host{Hostname: "node-1", Kernel: "6.1.0", CPUs: 2, MemTotalBytes: 4 << 30, IolensVersion: "test"}
		rs[i].Index = i + 1
	}
	rs[1].Notes = []string{"buffered writes: fio's figures include the page cache"}
	start := 0.0
	dur := 12.0
	rs[0].Findings = []result.Finding{{Kind: "stall", Severity: "warn", Summary: "throughput near zero for 12 s", StartS: &start, DurationS: &dur}}
	rs = append(rs, result.Result{Schema: result.SchemaV1, RunID: "run-1", Suite: "golden", Index: 3, Repeat: 1, Status: "failed",
		Error: "fio job x failed with error 22 (EINVAL)", Test: result.TestSpec{Name: "bad-bs", RW: "read", BlockSize: 1000, IODepth: 1, NumJobs: 1},
		Target: rs[0].Target, Host: rs[0].Host, Start: time.Unix(0, 0).UTC()})
	return rs
}

func TestRenderGolden(t *testing.T) {
	rs := fixed(t)
	for _, format := range []string{"text", "md", "csv"} {
		t.Run(format, func(t *testing.T) {
			r, err := RendererFor(format)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := r(&buf, diagnosis.Replay(rs)); err != nil {
				t.Fatal(err)
			}
			golden(t, "golden."+format, buf.Bytes())
		})
	}
	if _, err := RendererFor("xml"); err == nil || !strings.Contains(err.(*UnknownFormatError).Hint(), "ndjson") {
		t.Errorf("unknown format error = %v", err)
	}
}

func TestNDJSONRoundTrip(t *testing.T) {
	rs := fixed(t)
	var buf bytes.Buffer
	if err := NDJSON(&buf, rs); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != len(rs) {
		t.Fatalf("%d lines for %d results", n, len(rs))
	}
	back, err := ReadResults(&buf, "x.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(rs) || back[0].Read.Lat.P99Ns != rs[0].Read.Lat.P99Ns || back[2].Status != "failed" {
		t.Errorf("round trip lost data: %+v", back[0].Read)
	}
	var arr bytes.Buffer
	if err := JSON(&arr, rs); err != nil {
		t.Fatal(err)
	}
	back, err = ReadResults(&arr, "x.json")
	if err != nil || len(back) != len(rs) {
		t.Errorf("JSON array round trip: %d results, %v", len(back), err)
	}
}

func TestReadFioOutput(t *testing.T) {
	rs := fixed(t)
	r := rs[0]
	// From the file: read iops 23412.862379, bw_bytes 95899084; with no
	// lat percentiles in the file, clat's are used (p99 1302528 ns).
	if r.Read == nil || r.Read.IOPS != 23412.862379 || r.Read.BWBytes != 95899084 {
		t.Fatalf("read = %+v", r.Read)
	}
	if r.Read.LatKind != "clat" || r.Read.Lat.P99Ns != 1302528 || r.Read.Lat.P999Ns != 4816896 {
		t.Errorf("latency = %s %+v", r.Read.LatKind, r.Read.Lat)
	}
	if r.Test.RW != "randread" || r.Test.BlockSize != 4096 || r.Test.IODepth != 8 || !r.Test.Direct {
		t.Errorf("spec from job options = %+v", r.Test)
	}
	for _, bad := range []string{"", "hello\n", `{"schema":"iolens.result/v9"}` + "\n"} {
		if _, err := ReadResults(strings.NewReader(bad), "bad"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
