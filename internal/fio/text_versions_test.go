package fio

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// The files testdata/text-VERSION_*.txt are fio's normal output in the
// shape that version's stat.c and num2str.c give it (padding, units,
// which unit a latency line and its percentiles take), with figures of
// our own. The expected figures are worked out by hand from the lines.

// fio 2.0.x pads a number that has no suffix: "bw=516093 B/s",
// "iops=125 ,", "min=152 , max=41576 ,". It read as zeros.
func TestTextFio20Padding(t *testing.T) {
	rs := readFile(t, "text-2.0.13_padded.txt")
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	// rr: 22680 reads of 4 KiB in 180001 ms; clat min 152, max 41576,
	// avg 7935.21 µs; lat avg 7945.27 µs; 99.00th=[17024] µs.
	r := rs[0]
	d := r.Read
	if r.Test.Name != "rr" || d == nil || !within(d.IOPS, 22680.0*1000/180001, 1e-12) || d.IOBytes != 22680*4096 ||
		d.BWBytes != 22680*4096*1000/180001 || d.TotalIOs != 22680 {
		t.Fatalf("rr = %s %+v", r.Test.Name, d)
	}
	if d.LatKind != "clat" || !within(d.Lat.MeanNs, 7935.21e3, 1e-12) || d.Lat.MinNs != 152e3 || d.Lat.MaxNs != 41576e3 ||
		d.Lat.P99Ns != 17024e3 || d.Lat.P9999Ns != 38144e3 || !within(d.TotalLatMeanNs, 7945.27e3, 1e-12) {
		t.Errorf("rr latency = %s %+v, total mean %g", d.LatKind, d.Lat, d.TotalLatMeanNs)
	}
	if r.Test.RW != "randread" || r.Test.BlockSize != 4096 || r.Test.IODepth != 1 || r.FioVersion != "fio-2.0.13" {
		t.Errorf("rr test = %+v, %s", r.Test, r.FioVersion)
	}
	// sw: 48000 writes of 64 KiB in 60000 ms ("io=3000.0MB",
	// "bw=51200KB/s", "iops=800 ,"); clat avg 4.99 ms.
	r = rs[1]
	if d := r.Write; r.Test.Name != "sw" || d == nil || d.IOPS != 800 || d.IOBytes != 48000*65536 || d.BWBytes != 48000*65536/60 ||
		!within(d.Lat.MeanNs, 4.99e6, 1e-12) || d.Lat.P99Ns != 8512e3 || r.Test.BlockSize != 65536 || r.Test.IODepth != 4 {
		t.Errorf("sw = %+v, test %+v", d, r.Test)
	}
}

// fio 2.x prints "KB" and "MB" for kb_base=1000 too: 1000s there. Here
// 3000 writes of 1 MiB print as "io=3145.8MB, bw=104816KB/s"; read as
// 1024s they came out 4.9% high.
func TestTextFio21KBBase1000(t *testing.T) {
	rs := readFile(t, "text-2.1.10_kb_base1000.txt")
	d := rs[0].Write
	if d == nil || d.IOBytes != 3000<<20 || d.BWBytes != float64(int64(3000<<20)*1000/30012) || !within(d.IOPS, 3000.0*1000/30012, 1e-12) {
		t.Fatalf("seqw = %+v, want 3145728000 B at %d B/s", d, int64(3000<<20)*1000/30012)
	}
	// "clat (msec): max=45" is 45 ms truncated: the max lies in [45, 46)
	// ms, so 99.99th=[45312] µs stands, and the max is at least it.
	if d.Lat.P9999Ns != 45312e3 || d.Lat.MaxNs != 45312e3 || !within(d.Lat.MeanNs, 10.02e6, 1e-12) {
		t.Errorf("seqw latency = %+v, want p99.99 45.312 ms, max 45.312 ms", d.Lat)
	}
}

// Windows line ends: every percentile kept, and the mean stays the
// completion latency's. A max printed in msec does not cut a percentile
// printed in µs ("max=452" and 99.99th=[452985]).
func TestTextFio36CRLF(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "text-3.6_crlf_msec_max.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("\r\n")) {
		t.Fatal("the fixture lost its CRLF line ends")
	}
	for _, in := range [][]byte{b, bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))} {
		rs, err := ReadResults(bytes.NewReader(in), "crlf.txt")
		if err != nil {
			t.Fatal(err)
		}
		// 45330 writes of 4 KiB in 30001 ms; clat avg 21.17 ms (lat
		// 21.18); 50.00th=[14746], 99.00th=[177210], 99.90th=[350225],
		// 99.99th=[452985] µs.
		d := rs[0].Write
		if d == nil || !within(d.IOPS, 45330.0*1000/30001, 1e-12) || d.IOBytes != 45330*4096 {
			t.Fatalf("randw = %+v", d)
		}
		if d.LatKind != "clat" || !within(d.Lat.MeanNs, 21.17e6, 1e-12) || !within(d.TotalLatMeanNs, 21.18e6, 1e-12) || d.Lat.P50Ns != 14746e3 ||
			d.Lat.P99Ns != 177210e3 || d.Lat.P999Ns != 350225e3 || d.Lat.P9999Ns != 452985e3 || d.Lat.MaxNs != 452985e3 {
			t.Errorf("randw latency = %s %+v, total mean %g", d.LatKind, d.Lat, d.TotalLatMeanNs)
		}
	}
}

// fio 3.x names its base: with kb_base=1000, "BW=524MB/s" and
// "(10.5GB/...)" are 1000s, and the header's "131kB" is 128 KiB rounded.
func TestTextFio3KBBase1000(t *testing.T) {
	rs := readFile(t, "text-3.10_kb_base1000.txt")
	r := rs[0]
	// 80000 reads of 131072 B in 20003 ms.
	if d := r.Read; d == nil || d.IOBytes != 80000*131072 || d.BWBytes != 80000*131072*1000/20003 || r.Test.BlockSize != 131072 {
		t.Errorf("seqr = %+v, bs %d; want 10485760000 B at 524.2 MB/s, 128 KiB", d, r.Test.BlockSize)
	}
}

// Client mode: the servers' lines carry "<host> ", and fio adds its own
// sum, "All clients", whose rate has no unit. One test, both servers'
// blocks summed; its header read through the prefix.
func TestTextClientServer(t *testing.T) {
	rs := readFile(t, "text-3.16_client_2hosts.txt")
	if len(rs) != 1 {
		for _, r := range rs {
			t.Logf("%s: %+v", r.Test.Name, r.Read)
		}
		t.Fatalf("%d results, want 1 (no \"All clients\")", len(rs))
	}
	r := rs[0]
	if r.FioVersion != "fio-3.16" || r.Test.Name != "mix" || r.Test.RW != "randrw" || r.Test.BlockSize != 4096 || r.Test.IODepth != 16 || r.Test.NumJobs != 2 {
		t.Errorf("test = %+v, %s", r.Test, r.FioVersion)
	}
	// reads: 84000 in 60001 ms and 81900 in 60002 ms: a group's rate is
	// all IOs over the longest runtime.
	if d := r.Read; d == nil || d.TotalIOs != 165900 || !within(d.IOPS, 165900.0*1000/60002, 1e-12) || d.IOBytes != 165900*4096 {
		t.Errorf("read = %+v", d)
	}
	if d := r.Write; d == nil || d.TotalIOs != 71100 || d.IOBytes != 71100*4096 {
		t.Errorf("write = %+v", d)
	}
}

// fio's text never says whether the job used direct IO: unknown, never
// buffered (the page-cache warning must not fire on it).
func TestTextDirectUnknown(t *testing.T) {
	for _, name := range []string{"text-2.0.13_padded.txt", "text-3.6_crlf_msec_max.txt", "fio-3.25_two_groups.txt"} {
		for _, r := range readFile(t, name) {
			if !r.Test.DirectUnknown || r.Test.Buffered() || strings.Contains(r.Test.Summary(), "buffered") {
				t.Errorf("%s %s: direct %v unknown %v, summary %q", name, r.Test.Name, r.Test.Direct, r.Test.DirectUnknown, r.Test.Summary())
			}
		}
	}
	// JSON from fio 2.3 on lists every option set: no direct is buffered.
	for _, r := range readFile(t, "randread_4k_qd8.jsonplus.json") {
		if r.Test.DirectUnknown {
			t.Errorf("JSON with job options: direct read as unknown: %+v", r.Test)
		}
	}
	// fio before 2.3 wrote no options at all.
	for _, r := range readFile(t, "fio-2.1.4_no_job_options.json") {
		if !r.Test.DirectUnknown {
			t.Errorf("fio 2.1.4 JSON: direct read as known: %+v", r.Test)
		}
	}
}

// An fdatasync test's text names no fdatasync=: the counts give one sync
// per write, which bounds each write in the analysis.
func TestTextSyncInterval(t *testing.T) {
	r := readFile(t, "fio-3.16_fdatasync_excerpt.txt")[0]
	if r.Test.Fdatasync != 1 {
		t.Errorf("fdatasync = %d, want 1 (10029 writes, 10029 syncs)", r.Test.Fdatasync)
	}
}

// Text that cannot be read right is refused with its line, never read
// as a test of 0 IOPS, or of a rate its own counts deny.
func TestTextRefused(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	fio3 := read("fio-3.25_two_groups.txt")
	fio20 := read("text-2.0.13_padded.txt")
	cut := fio3[:strings.Index(fio3, "read: IOPS=")+len("read: IOPS=8")]
	for _, tc := range []struct {
		name, in string
		line     int
	}{
		// The bytes and runtime say 500 MiB in 1 ms, IOPS=870 and the
		// counts 8704 in 10001 ms: the runtime was edited.
		{"runtime edited", strings.Replace(fio3, "(8704MiB/10001msec)", "(8704MiB/1msec)", 1), lineOf(fio3, "read: IOPS=")},
		// The same without the counts: the bytes over the runtime deny
		// the rate printed beside them.
		{"runtime edited, no counts", strings.Replace(strings.Replace(fio3, "(8704MiB/10001msec)", "(8704MiB/1msec)", 1), "issued rwts: total=8704,", "issued: total=8704,", 1), lineOf(fio3, "read: IOPS=")},
		// The count lost a digit.
		{"count cut", strings.Replace(fio3, "total=8704,", "total=870,", 1), lineOf(fio3, "read: IOPS=")},
		// A file cut inside the job's first figure.
		{"cut mid-number", cut, lineOf(fio3, "seq-read: (groupid=")},
		// A direction line in no shape fio wrote.
		{"unknown shape", strings.Replace(fio20, "  read : io=90720KB,", "  read : io=90720 KB;", 1), lineOf(fio20, "rr: (groupid=")},
	} {
		_, err := ReadResults(strings.NewReader(tc.in), "t.txt")
		var te *TextError
		if !errors.As(err, &te) || te.Line != tc.line || te.Hint() == "" {
			t.Errorf("%s: err = %v, want a TextError at line %d", tc.name, err, tc.line)
		}
	}
}

// lineOf is the 1-based line of the first line holding s.
func lineOf(text, s string) int {
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	return -1
}

// No result of 0 IOPS with status ok comes out of a decoder, whatever
// its input.
func FuzzTextNoSilentZero(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
			f.Add(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := ReadResults(bytes.NewReader(b), "fuzz.txt")
		if err != nil {
			return
		}
		for i := range rs {
			checkNoSilentZero(t, &rs[i])
		}
	})
}

// checkNoSilentZero fails on a result that says ok and did no IO, or
// whose rate its own counts deny.
func checkNoSilentZero(t *testing.T, r *result.Result) {
	t.Helper()
	if r.Status != "ok" {
		return
	}
	any := false
	for _, name := range []string{"read", "write", "trim", "mixed", "sync"} {
		d := r.Dir(name)
		if d == nil {
			continue
		}
		if d.IOPS > 0 || d.TotalIOs > 0 {
			any = true
		}
		if name != "sync" && d.TotalIOs > 0 && d.RuntimeMs > 0 {
			if c := float64(d.TotalIOs) * 1000 / float64(d.RuntimeMs); r.Fio != nil && r.Fio.Jobs <= 1 && !within(d.IOPS, c, 0.02) {
				t.Fatalf("%s %s: %g IOPS, its counts give %g", r.Test.Name, name, d.IOPS, c)
			}
		}
	}
	if !any {
		t.Fatalf("%s: status ok with no IO", r.Test.Name)
	}
}

// The depth of a pasted job without its header line is the one fio
// issued most IOs at (its "IO depths" line), not fio's default 1; a
// header whose depth that line denies is refused.
func TestTextDepth(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "text-3.6_crlf_msec_max.txt"))
	if err != nil {
		t.Fatal(err)
	}
	in := string(b)
	header := in[:strings.Index(in, "\n")+1]
	rs, err := ReadResults(strings.NewReader(strings.Replace(in, header, "", 1)), "excerpt.txt")
	if err != nil {
		t.Fatal(err)
	}
	// IO depths: 32=99.9%.
	if r := rs[0]; r.Test.IODepth != 32 || !strings.Contains(strings.Join(r.Notes, "\n"), "iodepth=32") {
		t.Errorf("excerpt: depth %d, notes %q", r.Test.IODepth, r.Notes)
	}
	_, err = ReadResults(strings.NewReader(strings.Replace(in, "iodepth=32", "iodepth=1", 1)), "t.txt")
	var fe *FigureError
	if !errors.As(err, &fe) || fe.Field != "iodepth" {
		t.Errorf("header iodepth=1 against IOs at 32: err = %v", err)
	}
}
