package limits

import (
	"math"
	"strings"
	"testing"
)

// Seed 000 test 3: 4 KiB direct writes one at a time on a P15 took 2-3 ms
// each, "not able to get more than about 400 IOPS" against the 1,100 IOPS
// cap; test 4 reached the cap at QD16.
func TestSeed000LatencyModel(t *testing.T) {
	c := MustDefault()
	x, err := c.ParseExpectation("azure:P15", "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	p := x.PredictLatency(4<<10, true)
	if !near(p.QD1IOPS, 400, 1e-9) || !near(p.QD1LoIOPS, 1/0.003, 1e-9) || !near(p.QD1HiIOPS, 500, 1e-9) {
		t.Errorf("QD1 %.1f IOPS (%.1f-%.1f), want 400 (333-500)", p.QD1IOPS, p.QD1LoIOPS, p.QD1HiIOPS)
	}
	// 1,100 IOPS x 2 ms = 2.2 -> 3; x 3 ms = 3.3 -> 4: QD16 is enough.
	if p.DepthLo != 3 || p.DepthHi != 4 || p.CapIOPS != 1100 {
		t.Errorf("depth %d-%d for %g IOPS, want 3-4 for 1,100", p.DepthLo, p.DepthHi, p.CapIOPS)
	}
	if p.Model.Assumed || !strings.Contains(p.Model.Basis, "seed 000") {
		t.Errorf("the P15 model rests on seed 000's measurement: %+v", p.Model)
	}
	// Seed 004: the p99 of small-write fdatasync on a P30 across 31
	// regions spanned 5.59-15.18 ms, so etcd's 10 ms is uncertain.
	if !p.Model.FsyncMeasured || p.Model.FsyncP99LoNs != 5.59e6 || p.Model.FsyncP99HiNs != 15.18e6 || p.Etcd != "uncertain" {
		t.Errorf("fsync band %+v, etcd %s", p.Model, p.Etcd)
	}
	// A larger IO moves its extra bytes at the 125 MB/s cap.
	q := x.PredictLatency(128<<10, true)
	if want := 1 / (0.0025 + float64(124<<10)/125e6); !near(q.QD1IOPS, want, 1e-9) {
		t.Errorf("QD1 at 128 KiB %.1f IOPS, want %.1f", q.QD1IOPS, want)
	}
}

// Every family has a band; an assumed one says so; etcd verdicts follow
// the fsync band.
func TestLatencyModels(t *testing.T) {
	c := MustDefault()
	for _, f := range c.Families {
		for _, e := range f.Editions {
			x := &Expectation{Disk: &Disk{Family: f, Edition: e}}
			m := x.LatencyModel()
			if !m.Known() || m.Basis == "" || m.FsyncP99LoNs <= 0 || m.FsyncP99HiNs < m.FsyncP99LoNs {
				t.Errorf("%s@%s: model %+v", f.ID, e.From, m)
			}
			if !m.Assumed && len(m.Sources) == 0 {
				t.Errorf("%s@%s: an unassumed band with no source", f.ID, e.From)
			}
		}
	}
	for spec, want := range map[string]string{
		"aws:io2:100GiB:iops=5000":              "likely passes", // under 500 µs: p99 at most 3.6 ms
		"gcp:hyperdisk-throughput:2TiB":         "likely fails",  // 10-30 ms reads
		"aws:io2@2024:100GiB:iops=5000":         "uncertain",     // assumed 1-9 ms
		"azure:premium-ssd-v2:100GiB:iops=3000": "likely passes",
	} {
		x, err := c.ParseExpectation(spec, "", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := x.LatencyModel().Etcd(); got != want {
			t.Errorf("%s: etcd %s, want %s (%+v)", spec, got, want, x.LatencyModel())
		}
	}
	x, _ := c.ParseExpectation("aws:io1:100GiB:iops=3000", "", nil, "")
	if m := x.LatencyModel(); !m.Assumed || !strings.Contains(strings.Join(x.PredictLatency(4096, true).Lines(), "\n"), "ASSUMED") {
		t.Errorf("io1's assumed band not marked: %+v", m)
	}
}

// The bands quote the catalog's own sources: Google's performance page
// says Balanced and SSD persistent disks are "designed for
// sub-millisecond latencies", Azure that Ultra Disks have sub-millisecond
// latency and Standard SSDs single-digit milliseconds, AWS that EFS
// (Regional, General Purpose) reads take about 1 ms and writes 2.7 ms.
func TestLatencyFromSources(t *testing.T) {
	c := MustDefault()
	for _, tc := range []struct {
		spec         string
		loMs, hiMs   float64
		etcd         string
		tooWide      bool
		fitted       string
		linesContain string
	}{
		{spec: "gcp:pd-balanced:100GiB", loMs: 0.5, hiMs: 1, etcd: "likely passes", linesContain: "sourced: Google"},
		{spec: "gcp:pd-ssd:500GiB", loMs: 0.5, hiMs: 1, etcd: "likely passes", linesContain: "sub-millisecond"},
		{spec: "azure:ultra:100GiB", loMs: 0.5, hiMs: 1, etcd: "likely passes", linesContain: "sourced: Azure"},
		{spec: "azure:E10", loMs: 1, hiMs: 9, etcd: "uncertain", tooWide: true, linesContain: "too wide to size a queue depth"},
		{spec: "aws:gp3:100GiB", loMs: 1, hiMs: 9, etcd: "uncertain", tooWide: true, linesContain: "measure one IO at a time"},
		// 2.7 ms x 2 IOs x 3.6 = 19.4 ms at the high end: etcd uncertain.
		{spec: "aws:efs-elastic", loMs: 1, hiMs: 2.7, etcd: "uncertain", linesContain: "2.7 ms per write"},
		// The P15 band is seed 000's own measurement: fitted, not a prediction.
		{spec: "azure:P15", loMs: 2, hiMs: 3, etcd: "uncertain", fitted: "seed 000", linesContain: "fitted to seed 000, so no prediction of it"},
	} {
		x, err := c.ParseExpectation(tc.spec, "", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		m := x.LatencyModel()
		p := x.PredictLatency(4096, true)
		lines := strings.Join(p.Lines(), "\n")
		if m.Assumed || m.LoNs != tc.loMs*1e6 || m.HiNs != tc.hiMs*1e6 || m.Etcd() != tc.etcd || m.TooWide() != tc.tooWide || m.Fitted != tc.fitted || !strings.Contains(lines, tc.linesContain) {
			t.Errorf("%s: band %g-%g ms assumed %v, etcd %s, too wide %v, fitted %q; want %g-%g, %s, %v, %q and %q in:\n%s",
				tc.spec, m.LoNs/1e6, m.HiNs/1e6, m.Assumed, m.Etcd(), m.TooWide(), m.Fitted, tc.loMs, tc.hiMs, tc.etcd, tc.tooWide, tc.fitted, tc.linesContain, lines)
		}
		if tc.tooWide && strings.Contains(lines, "ceiling needs QD") {
			t.Errorf("%s: a too-wide band still sizes a depth:\n%s", tc.spec, lines)
		}
	}
}

// Diagnose compares a QD1 latency with the model, in the ceiling
// finding's summary and evidence.
func TestDiagnoseComparesLatency(t *testing.T) {
	c := MustDefault()
	x, _ := c.ParseExpectation("azure:P15", "", nil, "")
	for _, tc := range []struct {
		latMs float64
		want  string
	}{{2.5, "is within it"}, {6, "is above it"}, {0.3, "is below it"}} {
		fs := c.Diagnose(mkResult("write", 4096, 1, 1000/tc.latMs, tc.latMs), x)
		if len(fs) == 0 || !strings.Contains(fs[0].Summary, "the latency model for azure:premium-ssd gives 2-3 ms") || !strings.Contains(fs[0].Summary, tc.want) ||
			fs[0].Evidence["model_lat_lo_ns"] != 2e6 || fs[0].Evidence["model_lat_hi_ns"] != 3e6 {
			t.Errorf("%g ms: %+v", tc.latMs, fs)
		}
	}
	// At QD16 queueing adds latency: no comparison.
	fs := c.Diagnose(mkResult("write", 4096, 16, 1098, 14.5), x)
	if strings.Contains(fs[0].Summary, "latency model") {
		t.Errorf("QD16 compared with the QD1 model: %s", fs[0].Summary)
	}
	if lc, ok := x.CheckLatency(math.NaN(), 4096, 1); ok {
		t.Errorf("NaN latency compared: %+v", lc)
	}
}

// Seed 003: a buffered dd bs=100k on a P4 moved about 25 MiB/s, where 120
// IOPS of 100 KiB is 12.3 MB/s: the page cache merged the writes. The
// note offers the size where the P4's throughput cap binds, 25 MiB/s /
// 120 = 214 KiB (2019 table, MiB/s), and gives the cap there.
func TestBufferedNoteSeed003(t *testing.T) {
	x, err := MustDefault().ParseExpectation("azure:P4@2019-02", "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	n := x.BufferedNote(100 << 10)
	for _, s := range []string{"try --io-size 214k", "26.2 MB/s there, against 12.3 MB/s at 100 KiB", "25 MiB/s"} {
		if !strings.Contains(n, s) {
			t.Errorf("note %q lacks %q", n, s)
		}
	}
	if got := x.At(214<<10, true).BWBytes / (1 << 20); got < 25-1e-9 {
		t.Errorf("at 214 KiB the P4 moves %.2f MiB/s, want its 25 MiB/s cap", got)
	}
	if n := x.BufferedNote(256 << 10); n != "" {
		t.Errorf("256 KiB is already past the merge size: %q", n)
	}
}
