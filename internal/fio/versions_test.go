package fio

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// Each test here is one way older or other fio outputs were misread. The
// files under testdata/fio-VERSION_*.json and .txt are written in the
// shape that fio version's stat.c gives (keys, units, number formats),
// with figures of our own; the expected figures are worked out by hand
// from those figures, converted to bytes and ns where the file's unit is
// another.

func readFile(t *testing.T, name string) []result.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ReadResults(bytes.NewReader(b), name)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func within(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// fio before 3.2 writes bw in KiB/s and no bw_bytes; before 2.21 it
// writes io_bytes in KiB, and before 2.1.14 no total_ios (and an integer
// iops).
func TestBandwidthAndBytesBeforeFio32(t *testing.T) {
	rs := readFile(t, "fio-2.1.4_no_job_options.json")
	// seq-write: io_bytes 307200 KiB in 5000 ms, bw 61440 KiB/s, iops 480.
	if w := rs[0].Write; w == nil || w.IOBytes != 307200*1024 || w.BWBytes != 307200*1024*1000/5000 || w.IOPS != 480 || w.TotalIOs != 2400 {
		t.Errorf("fio 2.1.4 seq-write = %+v, want 307200 KiB, 61440 KiB/s, 480 IOPS, 2400 IOs", w)
	}
	// rand-read: io_bytes 36004 KiB in 6000 ms; fio's integer iops 1500
	// gives the count, 1500 × 6 s (fio wrote no total_ios yet).
	if r := rs[1].Read; r == nil || r.IOBytes != 36004*1024 || r.BWBytes != math.Trunc(36004*1024*1000/6000.0) || r.IOPS != 1500 || r.TotalIOs != 9000 {
		t.Errorf("fio 2.1.4 rand-read = %+v, want 36004 KiB at 6144682 B/s, 1500 IOPS, 9000 IOs", r)
	}
	// fio 2.20 still in KiB: 96000 KiB in 4000 ms, 12000 IOs.
	rs = readFile(t, "fio-2.20_jsonplus_us_bins.json")
	if w := rs[0].Write; w == nil || w.IOBytes != 96000*1024 || w.BWBytes != 96000*1024*1000/4000 || w.IOPS != 3000 || w.TotalIOs != 12000 {
		t.Errorf("fio 2.20 write = %+v, want 96000 KiB at 24000 KiB/s", w)
	}
	// fio 2.21: io_bytes in bytes (io_kbytes 3072000 beside), bw 307200 KiB/s.
	rs = readFile(t, "fio-2.21_io_kbytes.json")
	if r := rs[0].Read; r == nil || r.IOBytes != 3145728000 || r.BWBytes != 307200*1024 {
		t.Errorf("fio 2.21 read = %+v, want 3145728000 B at 307200 KiB/s", r)
	}
	// fio 3.1: ns latencies, io_bytes in bytes, still no bw_bytes: 491520000
	// bytes in 30000 ms.
	rs = readFile(t, "fio-3.1_no_bw_bytes.json")
	if r := rs[0].Read; r == nil || r.IOBytes != 491520000 || r.BWBytes != 491520000*1000/30000 || r.IOPS != 4000 {
		t.Errorf("fio 3.1 read = %+v, want 491520000 B at 16384000 B/s, 4000 IOPS", r)
	}
}

// fio 2.x's latencies are µs objects named clat and lat, its percentiles
// under clat.percentile, with "0.00" fillers for the unused slots.
func TestLatencyOfFio2(t *testing.T) {
	rs := readFile(t, "fio-2.1.4_no_job_options.json")
	r := rs[1] // rand-read: clat min 402, max 48120, mean 5310.42 µs; p50 4640, p99 11840 µs; lat mean 5322.17 µs
	if r.Test.Name != "rand-read" || r.Read == nil {
		t.Fatalf("result 2 = %s %+v", r.Test.Name, r.Read)
	}
	l := r.Read.Lat
	if r.Read.LatKind != "clat" || !within(l.MeanNs, 5310420, 1e-12) || l.MinNs != 402000 || l.MaxNs != 48120000 ||
		l.P50Ns != 4640000 || l.P99Ns != 11840000 || l.P9999Ns != 44800000 || l.N != 9000 {
		t.Errorf("latency = %s %+v, want clat mean 5310.42 µs, p50 4640, p99 11840, p99.99 44800 µs over 9000 IOs", r.Read.LatKind, l)
	}
	if !within(r.Read.TotalLatMeanNs, 5322170, 1e-12) {
		t.Errorf("total latency mean = %v, want 5322.17 µs", r.Read.TotalLatMeanNs)
	}
	// fio 2.21, the last in µs: clat mean 3301.25, p99 5152 µs.
	rs = readFile(t, "fio-2.21_io_kbytes.json")
	if l := rs[0].Read.Lat; !within(l.MeanNs, 3301250, 1e-12) || l.P99Ns != 5152000 || rs[0].Read.TotalLatMeanNs != 3323600 {
		t.Errorf("fio 2.21 latency = %+v, total mean %v", l, rs[0].Read.TotalLatMeanNs)
	}
}

// fio before 2.3 wrote no job options: the direction, block size and
// depth come from what each job did, and a note says so.
func TestOptionsInferredBeforeFio23(t *testing.T) {
	rs := readFile(t, "fio-2.1.4_no_job_options.json")
	for i, want := range []struct {
		rw        string
		bs, depth int
	}{
		{"write", 131072, 1}, // 314572800 B / 2400 IOs; iodepth_level 1=100%
		{"read", 4096, 8},    // 36868096 B / 9000 IOs = 4096.5; iodepth_level 8=99.7%
	} {
		s := rs[i].Test
		if s.RW != want.rw || s.BlockSize != int64(want.bs) || s.IODepth != want.depth {
			t.Errorf("%s: rw=%s bs=%d iodepth=%d, want %s %d %d", s.Name, s.RW, s.BlockSize, s.IODepth, want.rw, want.bs, want.depth)
		}
		if !strings.Contains(strings.Join(rs[i].Notes, ";"), "this fio wrote no job options") {
			t.Errorf("%s: no note that the options were inferred: %q", s.Name, rs[i].Notes)
		}
	}
}

// json+ bins of fio 2.x are on a µs grid: keyed by bucket index with the
// grid's constants (2.2.12 to 2.19), then by the bucket's µs value (2.20,
// 2.21). Both are put on the ns grid.
func TestJSONPlusBinsOfFio2(t *testing.T) {
	// fio 2.17, two numjobs clones: their bins merge. Index 100 is 100 µs
	// (below 2×64 an index is its value); index 140 is group 2 (140>>6),
	// so 2^(1+6) + (140%64 + 0.5) × 2^1 = 128 + 25 = 153 µs; index 300 is
	// 2^(3+6) + (300%64 + 0.5) × 2^3 = 512 + 356 = 868 µs. 19000 IOs at
	// 100 µs, 19600 at 153 and 400 at 868 of 39000: p50 and p90 are 153
	// µs, p99 (rank 38610 > 38600) and p99.9 are 868 µs, within the ns
	// grid's bucket (0.8%).
	rs := readFile(t, "fio-2.17_jsonplus_index_bins.json")
	d := rs[0].Read
	if d == nil || d.Hist.Count() != 39000 {
		t.Fatalf("read = %+v, want a histogram of 39000 IOs", d)
	}
	for _, c := range []struct{ got, want float64 }{{d.Lat.P50Ns, 153e3}, {d.Lat.P90Ns, 153e3}, {d.Lat.P99Ns, 868e3}, {d.Lat.P999Ns, 868e3}} {
		if !within(c.got, c.want, 0.008) {
			t.Errorf("percentiles %+v, want p50/p90 153 µs and p99/p99.9 868 µs", d.Lat)
			break
		}
	}
	// clat means weigh by IOs: (118.50 × 20000 + 121.00 × 19000) / 39000.
	if !within(d.Lat.MeanNs, (118.50*20000+121.00*19000)/39000*1000, 1e-12) || d.Lat.N != 39000 || d.Lat.MinNs != 62000 || d.Lat.MaxNs != 1505000 {
		t.Errorf("latency %+v, want the IO-weighted clat mean 119.718 µs, min 62, max 1505 µs", d.Lat)
	}
	// fio 2.20, one job: fio's own percentiles (µs) are exact, and the
	// histogram holds its 12000 IOs with p99 in the 1512 µs bucket.
	rs = readFile(t, "fio-2.20_jsonplus_us_bins.json")
	w := rs[0].Write
	if w == nil || w.Lat.P50Ns != 418000 || w.Lat.P90Ns != 450000 || w.Lat.P99Ns != 1512000 || w.Lat.P9999Ns != 7968000 {
		t.Fatalf("fio 2.20 write = %+v, want fio's p50 418, p90 450, p99 1512, p99.99 7968 µs", w)
	}
	if w.Hist.Count() != 12000 || !within(w.Hist.Percentile(99), 1512e3, 0.008) {
		t.Errorf("fio 2.20 histogram: %d IOs, p99 %.0f ns; want 12000 and 1512 µs", w.Hist.Count(), w.Hist.Percentile(99))
	}
}

// Before 3.18 latency objects have no N: mean, min and max are there all
// the same, and the count is the job's IOs.
func TestLatencyWithoutN(t *testing.T) {
	rs := readFile(t, "fio-3.16_no_N.json")
	// clat_ns (whose percentiles fio wrote): min 201350, max 8123456,
	// mean 395221.118; lat_ns mean 398900.5; 50000 IOs.
	d := rs[0].Read
	l := d.Lat
	if l.MinNs != 201350 || l.MaxNs != 8123456 || !within(l.MeanNs, 395221.118, 1e-12) || l.N != 50000 || l.P99Ns != 897024 {
		t.Errorf("latency = %+v, want clat min 201350, max 8123456, mean 395221.118 ns, p99 897024 over 50000 IOs", l)
	}
	if !within(d.TotalLatMeanNs, 398900.5, 1e-12) || d.BWBytes != 10240000 {
		t.Errorf("total latency mean = %v, bw %v; want 398900.5 ns and fio's bw_bytes 10240000", d.TotalLatMeanNs, d.BWBytes)
	}
}

// rw, bs and iodepth given in the global section apply to every job; a
// job's own option wins.
func TestGlobalOptions(t *testing.T) {
	rs := readFile(t, "fio-3.13_global_options_error.json")
	s := rs[0].Test
	if s.Name != "ok-job" || s.RW != "randwrite" || s.BlockSize != 65536 || s.IODepth != 8 || s.IOEngine != "libaio" || !s.Direct || s.RuntimeS != 30 {
		t.Errorf("test = %+v, want the global rw=randwrite iodepth=8 ioengine=libaio direct=1 runtime=30 and the job's bs=64k", s)
	}
	if w := rs[0].Write; w == nil || w.IOPS != 3200 || w.BWBytes != 209715200 {
		t.Errorf("write = %+v, want 3200 IOPS at 209715200 B/s", w)
	}
}

// A job fio reports with an error is a failed test that says which job
// and which error, beside the tests that ran.
func TestErrorJob(t *testing.T) {
	rs := readFile(t, "fio-3.13_global_options_error.json")
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	if rs[0].Status != "ok" {
		t.Errorf("ok-job: status %s", rs[0].Status)
	}
	r := rs[1]
	if r.Status != "failed" || r.Error != "fio job bad-job failed with error 22 (invalid argument)" {
		t.Errorf("bad-job: status %s, error %q", r.Status, r.Error)
	}
	for name, d := range r.Dirs() {
		t.Errorf("bad-job did no IO, yet has %s %+v", name, d)
	}
	if r.Test.BlockSize != 16384 {
		t.Errorf("bad-job bs = %d, want the global 16k", r.Test.BlockSize)
	}
}

// numjobs without group_reporting: four entries of one job ran at once,
// one test whose figures are fio's group sum.
func TestNumjobsWithoutGroupReportingIsOneTest(t *testing.T) {
	rs := readFile(t, "fio-3.6_numjobs4.json")
	if len(rs) != 1 {
		t.Fatalf("%d results, want 1", len(rs))
	}
	r := rs[0]
	// 30000 + 30600 + 29400 + 31000 = 121000 reads of 4 KiB, the longest
	// runtime 30002 ms.
	if !within(r.Read.IOPS, 121000.0*1000/30002, 1e-12) || !within(r.Read.BWBytes, 121000.0*4096*1000/30002, 1e-12) || r.Read.TotalIOs != 121000 {
		t.Errorf("read = %.4f IOPS %.0f B/s, want 4033.0645 IOPS", r.Read.IOPS, r.Read.BWBytes)
	}
	mean := (990100.5*30000 + 975300.25*30600 + 1015000.75*29400 + 962000.0*31000) / 121000
	if !within(r.Read.Lat.MeanNs, mean, 1e-12) || r.Read.Lat.N != 121000 {
		t.Errorf("latency %+v, want the IO-weighted clat mean %.3f ns", r.Read.Lat, mean)
	}
	if r.Read.Lat.P99Ns != 0 {
		t.Errorf("p99 %v from four jobs' own percentiles, which cannot be combined", r.Read.Lat.P99Ns)
	}
	if r.Test.NumJobs != 4 || r.Test.IODepth != 1 || r.Fio == nil || r.Fio.Jobs != 4 || len(r.Fio.Parts) != 4 {
		t.Fatalf("test %+v, fio %+v: want 4 jobs at QD1, each kept as a part", r.Test, r.Fio)
	}
	if p := r.Fio.Parts[1].Read; p == nil || p.IOPS != 1019.966001 {
		t.Errorf("second job's part = %+v, want its own 1019.966001 IOPS", p)
	}
	// fio's CPU is the busiest job's: usr 1.1 + sys 4.9.
	if !within(r.Fio.CPUPct, 6.0, 1e-12) {
		t.Errorf("CPU %v%%, want 6%%", r.Fio.CPUPct)
	}
}

// client/server: one entry per server and job, summed; each server kept
// and named, with a subtotal for a server that ran several jobs.
func TestClientServerHosts(t *testing.T) {
	rs := readFile(t, "client_server_2hosts.json")
	if len(rs) != 1 {
		t.Fatalf("%d results, want 1", len(rs))
	}
	r := rs[0]
	if len(r.Fio.Hosts) != 2 || r.Fio.Hosts[0] != "127.0.0.1:18766" || r.Fio.Parts[1].Host != "127.0.0.1:18765" {
		t.Errorf("hosts %v, parts %+v", r.Fio.Hosts, r.Fio.Parts)
	}
	if r.Test.NumJobs != 2 {
		t.Errorf("numjobs = %d, want 2 (one per server)", r.Test.NumJobs)
	}

	rs = readFile(t, "fio-3.33_client_2hosts_numjobs2.json")
	if len(rs) != 1 {
		t.Fatalf("%d results, want 1 (All clients is fio's own sum)", len(rs))
	}
	r = rs[0]
	// 40000 + 41000 reads on node-a, 30000 + 29000 on node-b; the longest
	// runtime 10002 ms.
	if !within(r.Read.IOPS, 140000.0*1000/10002, 1e-12) || r.Test.NumJobs != 4 || r.Host.Hostname != "node-a,node-b" {
		t.Errorf("read %.1f IOPS, numjobs %d, host %q; want 13997.2 IOPS, 4 jobs on node-a,node-b", r.Read.IOPS, r.Test.NumJobs, r.Host.Hostname)
	}
	if len(r.Fio.Parts) != 6 {
		t.Fatalf("%d parts, want 4 jobs and 2 host subtotals", len(r.Fio.Parts))
	}
	for i, want := range []struct {
		host string
		iops float64
	}{{"node-a", 81000.0 * 1000 / 10001}, {"node-b", 59000.0 * 1000 / 10002}} {
		p := r.Fio.Parts[4+i]
		if p.Host != want.host || p.Jobs != 2 || p.Read == nil || !within(p.Read.IOPS, want.iops, 1e-12) {
			t.Errorf("subtotal %d = %+v, want %s's 2 jobs at %.2f IOPS", i, p, want.host, want.iops)
		}
	}
	if !strings.Contains(strings.Join(r.Notes, ";"), "client/server run: 2 hosts (node-a, node-b)") {
		t.Errorf("notes %q", r.Notes)
	}
}

// trim is a direction of its own, and unified_rw_reporting=mixed reports
// one direction, mixed, which is not a read.
func TestTrimAndMixed(t *testing.T) {
	rs := readFile(t, "trim_randtrim_64k.json")
	if d := rs[0].Trim; d == nil || !within(d.IOPS, 36724.137931, 1e-12) || d.BWBytes != 2406753103 {
		t.Errorf("trim = %+v, want 36724.137931 IOPS at 2406753103 B/s", d)
	}
	rs = readFile(t, "unified_mixed_randrw.json")
	if r := rs[0]; r.Mixed == nil || r.Read != nil || r.Write != nil || r.Mixed.TotalIOs != 86133 {
		t.Errorf("unified mixed: read %+v write %+v mixed %+v, want mixed alone with 86133 IOs", r.Read, r.Write, r.Mixed)
	}
}

// fio's steady-state verdict and its latency_target search are said, the
// target and window in the units each version wrote: both µs before 3.3,
// both ns from 3.3, the window µs again from 3.21.
func TestFioOwnVerdicts(t *testing.T) {
	rs := readFile(t, "steadystate_iops20pct.json")
	ss := rs[0].Fio.SteadyState
	if ss == nil || !ss.Attained || ss.Criterion != "iops:20.000000%" || !strings.Contains(strings.Join(rs[0].Notes, ";"), "steady-state check (iops:20.000000% over 3 s): attained") {
		t.Errorf("steady state %+v, notes %q", ss, rs[0].Notes)
	}
	for _, c := range []struct {
		file       string
		targetNs   float64
		windowUs   float64
		percentile float64
		depth      int
		note       string
	}{
		{"fio-3.1_no_bw_bytes.json", 10e6, 1e6, 99, 12, "p99 latency under 10 ms (windows of 1000 ms): it settled at depth 12"}, // 10000 µs, 1000000 µs
		{"fio-3.16_no_N.json", 2e6, 500e3, 99.9, 5, "p99.9 latency under 2 ms (windows of 500 ms)"},                             // 2000000 ns, 500000000 ns
		{"latency_target_2ms.json", 2e6, 500e3, 99, 7, "under 2 ms (windows of 500 ms): it settled at depth 7"},                 // fio 3.33: 2000000 ns, 500000 µs
	} {
		rs := readFile(t, c.file)
		lt := rs[0].Fio.LatencyTarget
		if lt == nil || lt.TargetNs != c.targetNs || lt.WindowUs != c.windowUs || lt.Percentile != c.percentile || lt.Depth != c.depth {
			t.Errorf("%s: latency target = %+v, want %g ns, window %g µs, p%g, depth %d", c.file, lt, c.targetNs, c.windowUs, c.percentile, c.depth)
		}
		if !strings.Contains(strings.Join(rs[0].Notes, ";"), c.note) {
			t.Errorf("%s: notes %q lack %q", c.file, rs[0].Notes, c.note)
		}
	}
}

// Results of one fio document carry its JSON once, not once each.
func TestRawJSONOncePerInput(t *testing.T) {
	rs := readFile(t, "fio-3.13_global_options_error.json")
	with := 0
	for _, r := range rs {
		if len(r.FioJSON) > 0 {
			with++
		} else if r.FioJSONIn != rs[0].Index {
			t.Errorf("%s: fio_json_in = %d", r.Test.Name, r.FioJSONIn)
		}
	}
	if len(rs) != 2 || with != 1 {
		t.Errorf("%d results, %d with fio's JSON; want 2 and 1", len(rs), with)
	}
}

// fio's normal text output: seed 004's etcd test, fio 3.6, whose sync
// percentiles are only in the text.
func TestTextOutputSyncPercentiles(t *testing.T) {
	b, err := os.ReadFile("../../../shared/seeds/004_4a530ec4c34ee787.txt")
	if err != nil {
		t.Skip("seed 004 is not beside this checkout:", err)
	}
	rs, err := ReadResults(bytes.NewReader(b), "seed004")
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	s := r.Sync
	if r.Test.Name != "etcd1" || r.FioVersion != "fio-3.6" || s == nil {
		t.Fatalf("result %s %s, sync %+v", r.Test.Name, r.FioVersion, s)
	}
	// sync (usec): min=1240, max=23698, avg=4088.49; 99.00th=[10945],
	// 99.90th=[15533], 99.99th=[22414]; 10029 syncs (short=10029: the
	// fdatasync count fio misfiles).
	if s.Lat.N != 10029 || s.Lat.P99Ns != 10945e3 || s.Lat.P999Ns != 15533e3 || s.Lat.P9999Ns != 22414e3 ||
		s.Lat.MinNs != 1240e3 || s.Lat.MaxNs != 23698e3 || !within(s.Lat.MeanNs, 4088.49e3, 1e-12) {
		t.Errorf("sync = %+v", s.Lat)
	}
	// write: IOPS=243, BW=546KiB/s: 10029 writes in 41246 ms. The excerpt
	// has no header line with bs=2300, and its total says "21.0MiB" for
	// 22 MiB: the rate gives the bytes, and the bytes per IO the block size.
	if w := r.Write; w == nil || !within(w.IOPS, 10029.0*1000/41246, 1e-12) || !within(w.BWBytes, 10029.0*2300*1000/41246, 0.005) ||
		r.Test.BlockSize < 2290 || r.Test.BlockSize > 2310 || r.Test.RW != "write" {
		t.Errorf("write = %+v, rw %s, bs %d", w, r.Test.RW, r.Test.BlockSize)
	}
}

// The same shape without the seed: an fdatasync test pasted without its
// header line, fio 3.16.
func TestTextOutputSync(t *testing.T) {
	rs := readFile(t, "fio-3.16_fdatasync_excerpt.txt")
	r := rs[0]
	s := r.Sync
	if r.Test.Name != "etcd-check" || r.FioVersion != "fio-3.16" || s == nil {
		t.Fatalf("result %s %s, sync %+v", r.Test.Name, r.FioVersion, s)
	}
	// sync (usec): min=702, max=16210, avg=1962.35; 50.00th=[1795],
	// 99.00th=[4883], 99.90th=[9503], 99.99th=[15533]; issued total 0
	// syncs, short=10029 (fio's fdatasync count in read's short IOs).
	if s.Lat.N != 10029 || s.Lat.P50Ns != 1795e3 || s.Lat.P99Ns != 4883e3 || s.Lat.P999Ns != 9503e3 || s.Lat.P9999Ns != 15533e3 ||
		s.Lat.MinNs != 702e3 || s.Lat.MaxNs != 16210e3 || !within(s.Lat.MeanNs, 1962.35e3, 1e-12) || !r.Fio.SyncTotalIOsZero {
		t.Errorf("sync = %+v, fio %+v", s.Lat, r.Fio)
	}
	// write: 10029 writes of 2300 B in 20000 ms (BW=1126KiB/s). Without a
	// header the direction is what the job did, and the block size the
	// bytes per IO of the rate.
	if w := r.Write; w == nil || !within(w.IOPS, 10029.0*1000/20000, 1e-12) || !within(w.BWBytes, 10029.0*2300*1000/20000, 0.005) ||
		r.Test.RW != "write" || r.Test.BlockSize < 2290 || r.Test.BlockSize > 2310 {
		t.Errorf("write = %+v, rw %s, bs %d; want 501.45 IOPS of 2300 B, rw=write", w, r.Test.RW, r.Test.BlockSize)
	}
}

// The text of fio 2.x: "read : io=..., bw=...KB/s, iops=..., runt=...",
// several runs in one file (each a repeat of the test).
func TestTextOutputFio2Runs(t *testing.T) {
	rs := readFile(t, "fio-2.2.10_randread_2runs.txt")
	if len(rs) != 2 || rs[0].Repeat != 1 || rs[1].Repeat != 2 || rs[1].Test.Name != "randread" {
		t.Fatalf("%d results: %+v", len(rs), rs)
	}
	for i, want := range []struct {
		rt            float64
		clatUs, p99Us float64
		latUs         float64
	}{{15000, 3655.21, 7904, 3658.87}, {14200, 3461.07, 7392, 3464.41}} {
		// 524288 reads of 4 KiB (io=2048.0MB), 8 jobs with group_reporting
		// at QD16 each.
		r := rs[i]
		if d := r.Read; d == nil || !within(d.IOPS, 524288*1000/want.rt, 1e-12) || d.IOBytes != 524288*4096 ||
			!within(d.Lat.MeanNs, want.clatUs*1e3, 1e-12) || d.Lat.P99Ns != want.p99Us*1e3 || !within(d.TotalLatMeanNs, want.latUs*1e3, 1e-12) {
			t.Errorf("run %d: read = %+v", i+1, d)
		}
		if r.Test.NumJobs != 8 || r.Test.IODepth != 16 || r.Test.RW != "randread" || r.Test.BlockSize != 4096 || r.FioVersion != "fio-2.2.10" {
			t.Errorf("run %d: test = %+v, fio %s", i+1, r.Test, r.FioVersion)
		}
	}
}

// The text of fio 3.x: rounded headline figures ("IOPS=45.2k"), exact
// issued counts, the block size from the header, a job per group.
func TestTextOutputFio3Groups(t *testing.T) {
	rs := readFile(t, "fio-3.25_two_groups.txt")
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	// seq-read: 8704 reads of 1024 KiB in 10001 ms, clat avg=4588.31 µs,
	// 99.00th=[6390] µs, QD4.
	r := rs[0]
	if d := r.Read; r.Test.Name != "seq-read" || d == nil || !within(d.IOPS, 8704.0*1000/10001, 1e-12) || d.IOBytes != 8704<<20 ||
		!within(d.BWBytes, float64(8704<<20)*1000/10001, 1e-9) || !within(d.Lat.MeanNs, 4588310, 1e-12) || d.Lat.P99Ns != 6390e3 {
		t.Errorf("seq-read = %+v", d)
	}
	if r.Test.RW != "read" || r.Test.BlockSize != 1<<20 || r.Test.IODepth != 4 {
		t.Errorf("seq-read test = %+v", r.Test)
	}
	// rand-write: IOPS=45.2k is 452300 writes of 4096 B in 10001 ms; the
	// total "1767MiB" is 1852620800 B rounded.
	r = rs[1]
	if d := r.Write; r.Test.Name != "rand-write" || d == nil || !within(d.IOPS, 452300.0*1000/10001, 1e-12) || d.IOBytes != 452300*4096 ||
		!within(d.Lat.MeanNs, 703860, 1e-12) || !within(d.TotalLatMeanNs, 707280, 1e-12) || d.Lat.P99Ns != 1647e3 {
		t.Errorf("rand-write = %+v", d)
	}
	if r.Test.RW != "randwrite" || r.Test.BlockSize != 4096 || r.Test.IODepth != 32 || r.Fio.GroupID != 1 {
		t.Errorf("rand-write test = %+v, fio %+v", r.Test, r.Fio)
	}
}

func FuzzTextReader(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("x: (groupid=0, jobs=1): err= 0\n  read: IOPS=1k, BW=1MiB/s (1MB/s)(1MiB/0msec)\n  clat (usec): min=1K, max=2G, avg=nan, stdev=1\n  clat percentiles (usec):\n   | 1.00th=[99999999999999999999]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var tr TextReader
		for _, l := range strings.Split(string(b), "\n") {
			tr.Line(l)
		}
		for _, doc := range tr.Documents() {
			rs, err := resultsOf(doc, nil, "fuzz", nil)
			if err != nil {
				continue
			}
			for i := range rs {
				if _, err := result.Marshal(&rs[i]); err != nil {
					t.Fatalf("a result of text output cannot be written: %v", err)
				}
			}
		}
	})
}
