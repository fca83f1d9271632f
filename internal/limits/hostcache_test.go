package limits

import (
	"math"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// The arithmetic, by hand: fill - drain grows the backlog; a full one
// drains at the disk's rate.
func TestWriteBack(t *testing.T) {
	cf := WriteBack(128e6, 25e6, 3<<30)
	if !cf.Grows || !near(cf.FillSeconds, float64(3<<30)/103e6, 1e-9) || !near(cf.StallSeconds, float64(3<<30)/25e6, 1e-9) {
		t.Errorf("P4 behind 128 MB/s: %+v", cf)
	}
	for _, c := range []CacheFill{WriteBack(128e6, 150e6, 3<<30), WriteBack(128e6, 128e6, 3<<30), WriteBack(0.5e6, 25e6, 3<<30)} {
		if c.Grows || c.FillSeconds != 0 || c.StallSeconds != 0 {
			t.Errorf("drain as fast as the fill builds a backlog: %+v", c)
		}
	}
	if cf := WriteBack(1e6, 0, 1<<30); !cf.Grows || !math.IsInf(cf.StallSeconds, 1) || !strings.Contains(cf.Sentence(), "indefinitely") {
		t.Errorf("no drain: %+v %s", cf, cf.Sentence())
	}
}

// Seed 003: ReadWrite caching on a D8s_v3 stalled a P4 (writes near
// 128 MiB/s for 20-30 s, then nothing for 2 minutes and more) but not a
// P20, which drains 150 MB/s, faster than the 128 MB/s the cache takes.
func TestSeed003HostCache(t *testing.T) {
	c := MustDefault()
	for _, tc := range []struct {
		disk        string
		grows       bool
		fillS, stop float64
	}{
		{disk: "azure:P20"},
		// 3 GiB / (128 - 25 MB/s) = 31 s, then 3 GiB / 25 MB/s = 129 s.
		{disk: "azure:P4@2019-02", grows: true, fillS: float64(3<<30) / (128e6 - 25*(1<<20)), stop: float64(3<<30) / (25 * (1 << 20))},
		{disk: "azure:P4", grows: true, fillS: float64(3<<30) / 103e6, stop: float64(3<<30) / 25e6},
	} {
		x, err := c.ParseExpectation(tc.disk, "D8s_v3", nil, "readwrite")
		if err != nil {
			t.Fatal(err)
		}
		cf, ok := x.HostCacheFill(1<<20, 0)
		if !ok || cf.FillBPS != 128e6 || cf.Grows != tc.grows || !near(cf.FillSeconds, tc.fillS, 0.01) || !near(cf.StallSeconds, tc.stop, 0.01) {
			t.Errorf("%s: %+v, want grows %v, fill %.1f s, stall %.1f s", tc.disk, cf, tc.grows, tc.fillS, tc.stop)
		}
		if cf.CacheGiB != 200 || !strings.Contains(cf.BacklogNote(), "the VM's 200 GiB cache is the whole VM's") {
			t.Errorf("the VM's cache size and the assumed backlog are not reconciled: %s", cf.BacklogNote())
		}
		// The finding follows the same arithmetic on measured writes at
		// the cache's 128 MB/s.
		fs := c.Diagnose(mkResult("write", 1<<20, 8, 122, 65), x)
		got := len(fs) > 1 && fs[1].Code == result.CodeHostCacheRW
		if got != tc.grows {
			t.Errorf("%s: ReadWrite finding %v, want %v: %+v", tc.disk, got, tc.grows, fs)
		}
		measured := 122.0 * (1 << 20)
		if got && (!near(fs[1].Evidence["fill_s"], float64(3<<30)/(measured-cf.DrainBPS), 0.01) ||
			!strings.Contains(fs[1].Summary, "then IO to the disk stalls for")) {
			t.Errorf("%s: finding %s %v", tc.disk, fs[1].Summary, fs[1].Evidence)
		}
	}
}

// No warning for reads, for fsync-bound tests, or for writes slower than
// the drain (the 0.5 MB/s fsync test).
func TestHostCacheNoWarning(t *testing.T) {
	c := MustDefault()
	x, err := c.ParseExpectation("azure:P4", "Standard_D8s_v3", nil, "readwrite")
	if err != nil {
		t.Fatal(err)
	}
	fsync := mkResult("write", 2300, 1, 220, 4.5)
	fsync.Test.Fdatasync = 1
	jobFsync := mkResult("write", 64<<10, 1, 500, 2)
	jobFsync.Test.Options = []result.Option{{Key: "fsync", Value: "1"}}
	slow := mkResult("write", 1<<20, 1, 0.5, 2000)
	for name, r := range map[string]*result.Result{"reads": mkResult("read", 1<<20, 8, 3000, 2), "fdatasync": fsync, "fsync option": jobFsync, "0.5 MB/s": slow} {
		for _, f := range c.Diagnose(r, x) {
			if f.Code == result.CodeHostCacheRW {
				t.Errorf("%s: %s", name, f.Summary)
			}
		}
	}
	// Without ReadWrite there is no cache arithmetic at all.
	y, _ := c.ParseExpectation("azure:P4", "Standard_D8s_v3", nil, "readonly")
	if _, ok := y.HostCacheFill(1<<20, 0); ok {
		t.Error("a ReadOnly cache has a write backlog")
	}
}
