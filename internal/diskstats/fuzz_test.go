package diskstats

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var diskstatsSeeds = []string{
	" 253       0 vda 9087 2046 629398 3604 41339 37512 2270298 62044 0 48212 68124 0 0 0 0 4062 2474\n",
	"   7       0 loop0 1 0 8 0 0 0 0 0 0 4 0 0 0 0 0 0 0\n",
	" 253 0 vda 1 2 3\n",
	" 253 0 vda -1 NaN Inf 1e400 99999999999999999999999 0 0 0 0 0 0\n",
	" 253 0 vda 18446744073709551615 0 18446744073709551615 0 18446744073709551615 0 18446744073709551615 0 4294967295 4294967295 4294967295\n",
	"\n\n x y z\n",
}

const fuzzStat = "cpu  100 0 50 1000 20 0 0 0 0 0\n"
const fuzzMeminfo = "MemTotal: 1000 kB\nDirty: 10 kB\nWriteback: 0 kB\n"

// Whatever /proc/diskstats holds, the rates computed from it are finite,
// not negative, and utilisation stays within 100%.
func FuzzDiskstats(f *testing.F) {
	for _, s := range diskstatsSeeds {
		f.Add(s)
	}
	proc := f.TempDir()
	for name, text := range map[string]string{"stat": fuzzStat, "meminfo": fuzzMeminfo, "diskstats": diskstatsSeeds[0]} {
		if err := os.WriteFile(filepath.Join(proc, name), []byte(text), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	r, err := NewReader(proc, "", nil)
	if err != nil {
		f.Fatal(err)
	}
	prev, err := r.Snapshot(time.Unix(1000, 0))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if err := os.WriteFile(filepath.Join(proc, "diskstats"), []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		cur, err := r.Snapshot(time.Unix(1001, 0))
		if err != nil {
			return
		}
		for name, rt := range Diff(prev, cur).Devices {
			for _, v := range []float64{rt.ReadIOPS, rt.WriteIOPS, rt.ReadBWBytes, rt.WriteBWBytes, rt.ReadAwaitMs, rt.WriteAwaitMs, rt.QueueSize, rt.ReadReqBytes, rt.WriteReqBytes, rt.UtilPct} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("%s: rates %+v from %q", name, rt, in)
				}
			}
			if rt.UtilPct > 100 {
				t.Fatalf("%s: util %v%%", name, rt.UtilPct)
			}
		}
	})
}

var mountinfoSeeds = []string{
	"22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n30 22 254:0 / /data rw,noatime shared:2 - xfs /dev/mapper/vg-data rw,attr2\n",
	"30 22 254:0 / /data rw shared:2 master:1 propagate_from:1 unbindable - xfs /dev/x rw\n",
	"30 22 254:0 / /da\\040ta rw - xfs /dev/x rw\n",
	"30 22 254:0 / /data rw\n", "30 22 254:0\n", "- - - - - - - - -\n", "30 22 254:0 / /data rw - \n",
	"30 22 254:0 / /data rw shared:2 - xfs\n", "\x00\n",
}

// Whatever /proc/self/mountinfo holds, resolving a path either fails
// cleanly or names a mount that contains the path.
func FuzzMountinfo(f *testing.F) {
	for _, s := range mountinfoSeeds {
		f.Add(s)
	}
	// One fixture per fuzzing process; each input replaces its mount
	// table (inputs run one at a time within a process).
	r, root := fixture(f)
	f.Fuzz(func(t *testing.T, in string) {
		if err := os.WriteFile(filepath.Join(root, "proc", "1", "mountinfo"), []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := r.Resolve("/data/x")
		if err != nil {
			return
		}
		if res.Mount.MountPoint == "" || !under("/data/x", res.Mount.MountPoint) {
			t.Fatalf("mount %+v for /data/x from %q", res.Mount, in)
		}
		for _, d := range res.Devices {
			if d.Name == "" || strings.Contains(d.Name, "/") {
				t.Fatalf("device %+v", d)
			}
		}
	})
}
