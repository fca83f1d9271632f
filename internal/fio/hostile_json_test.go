package fio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureOf returns a testdata file with one replacement made.
func fixtureOf(t *testing.T, name, old, new string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s lacks %q", name, old)
	}
	return strings.Replace(string(b), old, new, 1)
}

// fio's nan is unknown, never 0: where the other figures of the
// direction give it (fio computed each from the count, the bytes and the
// runtime), it is taken from them; otherwise the output is refused with
// the field named.
func TestNaNIsUnknown(t *testing.T) {
	// fio 2.21's io_kbytes as nan: io_bytes is still in bytes. Read as
	// KiB (as before 2.21) it showed 322,122.5 MB/s.
	rs, err := ReadResults(strings.NewReader(fixtureOf(t, "fio-2.21_io_kbytes.json", `"io_kbytes" : 3072000,`, `"io_kbytes" : nan,`)), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	if r := rs[0].Read; r == nil || r.IOBytes != 3145728000 || r.BWBytes != 307200*1024 {
		t.Errorf("io_kbytes nan: read = %+v, want 3145728000 B at 307200 KiB/s", r)
	}
	// iops as nan: 3000 IOs in 10000 ms.
	rs, err = ReadResults(strings.NewReader(fixtureOf(t, "fio-2.21_io_kbytes.json", `"iops" : 300.000000,`, `"iops" : nan,`)), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	if r := rs[0].Read; r == nil || r.IOPS != 300 {
		t.Errorf("iops nan: read = %+v, want 300 IOPS from 3000 IOs in 10 s", r)
	}
	for _, tc := range []struct{ file, old, new, field string }{
		// The sync mean, with 10029 syncs: 0 flipped the fdatasync
		// arithmetic.
		{"etcd_fdatasync.json", `"mean" : 361461.286868,`, `"mean" : nan,`, "sync.lat_ns.mean"},
		{"etcd_fdatasync.json", `"mean" : 361461.286868,`, `"mean" : -nan,`, "sync.lat_ns.mean"},
		{"fio-2.21_io_kbytes.json", `"mean" : 3301.250000,`, `"mean" : nan,`, "read.clat_ns.mean"},
		{"fio-2.21_io_kbytes.json", `"runtime" : 10000,`, `"runtime" : nan,`, "read.runtime"},
		{"fio-2.1.4_no_job_options.json", `"io_bytes" : 307200,`, `"io_bytes" : nan,`, "write.io_bytes"},
	} {
		_, err := ReadResults(strings.NewReader(fixtureOf(t, tc.file, tc.old, tc.new)), "f.json")
		var fe *FigureError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), "nan") || fe.Hint() == "" {
			t.Errorf("%s %s: err = %v, want %s refused as unknown", tc.file, tc.new, err, tc.field)
		}
	}
	// A nan percentile is left out: the record holds no p99 (reports
	// print "-"), as when fio collected none.
	rs, err = ReadResults(strings.NewReader(fixtureOf(t, "fio-2.21_io_kbytes.json", `"99.000000" : 5152,`, `"99.000000" : nan,`)), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	if r := rs[0].Read; r == nil || r.Lat.P99Ns != 0 || r.Lat.P50Ns != 3184e3 || r.Lat.P999Ns != 12096e3 {
		t.Errorf("p99 nan: latency %+v, want no p99 and the others kept", r)
	}
}

// A depth fio cannot have run is read from fio's own count of the
// depths it issued at, and a depth that count denies is refused.
func TestDepthAgainstIodepthLevel(t *testing.T) {
	// "-8" once gave QD1 and "66,549 IOPS at QD1"; fio issued 99.99%
	// of the IOs at 8 to 15 in flight.
	rs, err := ReadResults(strings.NewReader(fixtureOf(t, "randread_4k_qd8.jsonplus.json", `"iodepth" : "8"`, `"iodepth" : "-8"`)), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	if r := rs[0]; r.Test.IODepth != 8 || !strings.Contains(strings.Join(r.Notes, "\n"), `iodepth="-8"`) {
		t.Errorf("iodepth -8: depth %d, notes %q", r.Test.IODepth, r.Notes)
	}
	// The options say 1, the count says 8.
	_, err = ReadResults(strings.NewReader(fixtureOf(t, "randread_4k_qd8.jsonplus.json", `"iodepth" : "8"`, `"iodepth" : "1"`)), "f.json")
	var fe *FigureError
	if !errors.As(err, &fe) || fe.Field != "iodepth" {
		t.Errorf("iodepth 1 against a count at 8: err = %v", err)
	}
}

// fio's JSON compacted onto one line (jq -c, how tools store it) reads
// as the pretty document does.
func TestCompactJSON(t *testing.T) {
	for _, name := range []string{"etcd_fdatasync.json", "randread_4k_qd8.jsonplus.json", "client_server_2hosts.json", "fio-2.1.4_no_job_options.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := ReadResults(strings.NewReader(string(b)), name)
		if err != nil {
			t.Fatal(err)
		}
		compact := compactOf(t, b)
		got, err := ReadResults(strings.NewReader(compact), name)
		if err != nil {
			t.Fatalf("%s compacted: %v", name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s compacted: %d results, want %d", name, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Test.Name != w.Test.Name || g.Test.IODepth != w.Test.IODepth || g.Test.BlockSize != w.Test.BlockSize {
				t.Errorf("%s compacted: test %+v, want %+v", name, g.Test, w.Test)
			}
			for _, dir := range []string{"read", "write", "sync"} {
				gd, wd := g.Dir(dir), w.Dir(dir)
				if (gd == nil) != (wd == nil) || gd != nil && (gd.IOPS != wd.IOPS || gd.Lat != wd.Lat) {
					t.Errorf("%s compacted: %s %+v, want %+v", name, dir, gd, wd)
				}
			}
		}
		// Two status-interval documents, one a line: the last counts.
		if _, err := ReadResults(strings.NewReader(compact+"\n"+compact+"\n"), name); err != nil {
			t.Errorf("%s, two compact documents: %v", name, err)
		}
	}
}

// compactOf puts a fio JSON document on one line, as jq -c does: every
// line's indentation and newline dropped outside strings (the fixtures
// hold no newline inside a string).
func compactOf(t *testing.T, b []byte) string {
	t.Helper()
	s := string(b)
	s = s[strings.Index(s, "{\n"):]
	var out strings.Builder
	for _, l := range strings.Split(s, "\n") {
		out.WriteString(strings.TrimSpace(l))
	}
	c := out.String()
	if strings.Count(c, "\n") != 0 || !strings.HasPrefix(c, `{"`) {
		t.Fatalf("not compact: %.40q", c)
	}
	return c
}

// A job fio lists with no IO at all is no measurement: never a test of
// 0 IOPS with status ok.
func TestJSONJobWithoutIO(t *testing.T) {
	in := "{\n" + `"fio version":"fio-3.33","jobs":[{"jobname":"idle","groupid":0,"error":0,"job options":{"rw":"read","bs":"4k"},` +
		`"read":{"io_bytes":0,"io_kbytes":0,"bw_bytes":0,"iops":0,"runtime":0,"total_ios":0},` +
		`"write":{"io_bytes":0,"io_kbytes":0,"bw_bytes":0,"iops":0,"runtime":0,"total_ios":0}}]` + "\n}\n"
	rs, err := ReadResults(strings.NewReader(in), "idle.json")
	if err != nil {
		t.Fatal(err)
	}
	if r := rs[0]; r.Status != "failed" || !strings.Contains(r.Error, "did no IO") {
		t.Errorf("a job of no IO: status %s, error %q", r.Status, r.Error)
	}
}
