package runner

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

func TestChooseSize(t *testing.T) {
	const G, M = int64(1 << 30), int64(1 << 20)
	tests := []struct {
		name      string
		requested int64
		free      int64
		extra     int64
		want      int64
		reason    string
		err       bool
	}{
		{"default fits", 0, 80 * G, 22 * M, G, "default 1 GiB", false},
		{"tenth of free", 0, 5 * G, 0, 512 * M, "a tenth", false},
		{"minimum", 0, 400 * M, 0, 64 * M, "minimum", false},
		{"too small", 0, 300 * M, 0, 0, "", true},
		{"requested fits", 4 * G, 10 * G, 0, 4 * G, "--size", false},
		{"requested too big", 10 * G, 10 * G, 0, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason, err := chooseSize(tt.requested, Space{FreeBytes: tt.free}, tt.extra, "/x")
			if tt.err {
				var se *SpaceError
				if !errors.As(err, &se) || se.Hint() == "" {
					t.Fatalf("err = %v, want a SpaceError with a hint", err)
				}
				if !strings.Contains(err.Error(), "free") {
					t.Errorf("error should give the numbers: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || !strings.Contains(reason, tt.reason) {
				t.Errorf("got %d (%q), want %d (%q)", got, reason, tt.want, tt.reason)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"4k": 4096, "1M": 1 << 20, "22m": 22 << 20, "300Gi": 300 << 30, "1GiB": 1 << 30, "2300": 2300, "1.5G": 3 << 29} {
		if got, err := units.ParseSize(in); err != nil || got != want {
			t.Errorf("units.ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "4q", "-1"} {
		if _, err := units.ParseSize(bad); err == nil {
			t.Errorf("units.ParseSize(%q) accepted", bad)
		}
	}
	if units.FormatSize(4096) != "4k" || units.FormatSize(2300) != "2300" || units.FormatSize(1<<20) != "1M" {
		t.Error("FormatSize")
	}
}

func TestSuites(t *testing.T) {
	want := map[string]int{"quick": 6, "dbench": 9, "etcd": 1, "aks-2019": 8, "ibm-vpc": 6, "sustained-write": 2}
	for name, n := range want {
		s, err := LookupSuite(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Tests) != n {
			t.Errorf("%s has %d tests, want %d", name, len(s.Tests), n)
		}
	}
	std, _ := LookupSuite("standard")
	sweeps := map[string]int{}
	for _, s := range std.Tests {
		if s.Group != "" {
			sweeps[s.Group]++
		}
	}
	if sweeps["qd-sweep:randread-4k"] != 7 || sweeps["qd-sweep:randwrite-4k"] != 7 {
		t.Errorf("standard sweeps = %v, want 7 points each (QD 1..64)", sweeps)
	}
	etcd, _ := LookupSuite("etcd")
	e := etcd.Tests[0]
	if e.RW != "write" || e.IOEngine != "sync" || e.Fdatasync != 1 || e.SizeBytes != 22<<20 || e.BlockSize != 2300 || e.RuntimeS != 0 {
		t.Errorf("etcd test = %+v", e)
	}
	var ue *UnknownSuiteError
	if _, err := LookupSuite("nope"); !errors.As(err, &ue) || !strings.Contains(ue.Hint(), "quick") {
		t.Errorf("unknown suite error = %v", err)
	}
	for _, s := range Suites() {
		seen := map[string]bool{}
		for _, tt := range s.Tests {
			if seen[tt.Name] {
				t.Errorf("suite %s: duplicate test name %s", s.Name, tt.Name)
			}
			seen[tt.Name] = true
		}
	}
}

func TestSuiteFromJobFile(t *testing.T) {
	in := `[global]
ioengine=libaio
direct=1
runtime=30s
size=1g
[rand]
rw=randrw
rwmixread=70
bs=8k
iodepth=16
norandommap
[seq]
rw=read
bs=1m
`
	s, err := SuiteFromJobFile("x.fio", in)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tests) != 2 {
		t.Fatalf("tests = %d", len(s.Tests))
	}
	r := s.Tests[0]
	if r.RW != "randrw" || r.RWMixRead != 70 || r.BlockSize != 8192 || r.IODepth != 16 || !r.Direct || r.RuntimeS != 30 || r.SizeBytes != 1<<30 || r.IOEngine != "libaio" || r.TimeBased() {
		t.Errorf("rand = %+v", r)
	}
	if len(r.Options) != 1 || r.Options[0].Key != "norandommap" {
		t.Errorf("extra options = %+v", r.Options)
	}
	if s.Tests[1].BlockSize != 1<<20 || s.Tests[1].RW != "read" {
		t.Errorf("seq = %+v", s.Tests[1])
	}
	if _, err := SuiteFromJobFile("z.fio", "[a]\nbs=lots\n"); err == nil {
		t.Error("bad bs accepted")
	}
}

// Expected values are the rows of the log files, read by hand.
func TestReadFioLogs(t *testing.T) {
	got, err := fio.ReadFioLogs("testdata", "logs", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := []result.FioSample{
		{T: 1, ReadIOPS: 10245, WriteIOPS: 4407, ReadBWBytes: 40980 * 1024, WriteBWBytes: 17628 * 1024, ReadLatMeanNs: 268355, WriteLatMeanNs: 279708},
		{T: 2, ReadIOPS: 11998, WriteIOPS: 5092, ReadBWBytes: 47992 * 1024, WriteBWBytes: 20368 * 1024, ReadLatMeanNs: 227831, WriteLatMeanNs: 245594},
		{T: 3, ReadIOPS: 13430, WriteIOPS: 5758, ReadBWBytes: 53720 * 1024, WriteBWBytes: 23032 * 1024, ReadLatMeanNs: 201595, WriteLatMeanNs: 220711},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d samples, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sample %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func loadJobs(t *testing.T, name string) []fio.Job {
	b, err := os.ReadFile(filepath.Join("..", "report", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := fio.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return doc.AllJobs()
}

func TestFillFromFio(t *testing.T) {
	// Two jobs without group_reporting merge into one result as fio sums
	// a group: IOs and bytes over the longest runtime (both ran 2001 ms,
	// so the rates add: 15894.052974 + 15885.057471 IOPS from the file),
	// counts add (31804 + 31786 latency samples).
	var r result.Result
	if err := fio.FillFromFio(&r, loadJobs(t, "no_group_reporting_numjobs2.json")); err != nil {
		t.Fatal(err)
	}
	if r.Read == nil || r.Write != nil || r.Sync != nil {
		t.Fatalf("directions: read %v write %v sync %v", r.Read, r.Write, r.Sync)
	}
	if d := r.Read.IOPS - (15894.052974 + 15885.057471); d > 1e-6 || d < -1e-6 {
		t.Errorf("merged iops = %v", r.Read.IOPS)
	}
	if bw := float64(130269184+130195456) * 1000 / 2001; math.Abs(r.Read.BWBytes-bw) > 1e-6 || r.Read.Lat.N != 31804+31786 {
		t.Errorf("merged bw = %v, N = %d", r.Read.BWBytes, r.Read.Lat.N)
	}

	// The etcd sample: fdatasync latencies come from sync.lat_ns, whose N
	// (10029) is right while sync.total_ios is 0 (fio 3.33 bug).
	var e result.Result
	if err := fio.FillFromFio(&e, loadJobs(t, "etcd_fdatasync.json")); err != nil {
		t.Fatal(err)
	}
	if e.Sync == nil || e.Sync.TotalIOs != 10029 || e.Sync.Lat.N != 10029 || e.Sync.LatKind != "sync" {
		t.Fatalf("sync = %+v", e.Sync)
	}
	if e.Sync.Lat.P99Ns != 5931008 {
		t.Errorf("fdatasync p99 = %v, want 5931008 (fio's figure)", e.Sync.Lat.P99Ns)
	}
	if e.Read != nil {
		t.Errorf("the etcd sample has no reads, but read.short_ios is set by fio's bug: read = %+v", e.Read)
	}
}
