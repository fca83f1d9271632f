package diskstats

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs/blockdevice"
	"golang.org/x/sys/unix"
)

// fixture builds a /proc and /sys tree: vda with partition vda1 (ext4 on
// /), loop0 backed by a file on /, dm-0 over vdb and vdc (xfs on /data),
// and a tmpfs on /tmp.
func fixture(t testing.TB) (Resolver, string) {
	t.Helper()
	root := t.TempDir()
	proc, sys := filepath.Join(root, "proc"), filepath.Join(root, "sys")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	dev := filepath.Join(sys, "devices")
	write(filepath.Join(dev, "virtio1/block/vda/dev"), "253:0\n")
	write(filepath.Join(dev, "virtio1/block/vda/vda1/dev"), "253:1\n")
	write(filepath.Join(dev, "virtio1/block/vda/vda1/partition"), "1\n")
	write(filepath.Join(dev, "virtual/block/loop0/dev"), "7:0\n")
	write(filepath.Join(dev, "virtual/block/loop0/loop/backing_file"), "/var/lib/disk.img\n")
	write(filepath.Join(dev, "virtio2/block/vdb/dev"), "253:16\n")
	write(filepath.Join(dev, "virtio3/block/vdc/dev"), "253:32\n")
	write(filepath.Join(dev, "virtual/block/dm-0/dev"), "254:0\n")
	link("../../../../virtio2/block/vdb", filepath.Join(dev, "virtual/block/dm-0/slaves/vdb"))
	link("../../../../virtio3/block/vdc", filepath.Join(dev, "virtual/block/dm-0/slaves/vdc"))
	for mm, p := range map[string]string{"253:0": "virtio1/block/vda", "253:1": "virtio1/block/vda/vda1", "7:0": "virtual/block/loop0",
		"253:16": "virtio2/block/vdb", "253:32": "virtio3/block/vdc", "254:0": "virtual/block/dm-0"} {
		link("../../devices/"+p, filepath.Join(sys, "dev/block", mm))
	}
	write(filepath.Join(proc, "1/mountinfo"), strings.Join([]string{
		"22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw",
		"30 22 254:0 / /data rw,noatime shared:2 - xfs /dev/mapper/vg-data rw,attr2",
		"31 22 0:40 / /tmp rw,nosuid shared:3 - tmpfs tmpfs rw,size=1024k",
		"40 22 7:0 / /mnt/emu rw,relatime shared:4 - ext4 /dev/loop0 rw",
	}, "\n")+"\n")
	link("1", filepath.Join(proc, "self"))
	devs := map[string]uint64{
		"/": unix.Mkdev(253, 1), "/data": unix.Mkdev(254, 0), "/tmp": unix.Mkdev(0, 40),
		"/mnt/emu": unix.Mkdev(7, 0), "/var/lib/disk.img": unix.Mkdev(253, 1),
	}
	blocks := map[string]uint64{"/dev/vdb": unix.Mkdev(253, 16), "/dev/loop0": unix.Mkdev(7, 0)}
	r := Resolver{ProcRoot: proc, SysRoot: sys, Stat: func(p string) (uint64, uint64, bool, error) {
		if rdev, ok := blocks[p]; ok {
			return unix.Mkdev(0, 5), rdev, true, nil
		}
		best := ""
		for mp := range devs {
			if under(p, mp) && len(mp) > len(best) {
				best = mp
			}
		}
		return devs[best], 0, false, nil
	}}
	return r, root
}

func TestResolve(t *testing.T) {
	r, _ := fixture(t)
	tests := []struct {
		path    string
		devices string // name:role, in order
		fstype  string
	}{
		{"/home/user/bench", "vda1:direct vda:parent", "ext4"},
		{"/data/db", "dm-0:direct vdb:slave vdc:slave", "xfs"},
		{"/tmp/x", "", "tmpfs"},
		{"/mnt/emu/scratch", "loop0:direct vda1:backing vda:parent", "ext4"},
		{"/dev/vdb", "vdb:direct", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res, err := r.Resolve(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range res.Devices {
				got = append(got, d.Name+":"+d.Role)
			}
			if strings.Join(got, " ") != tt.devices {
				t.Errorf("devices = %q, want %q", strings.Join(got, " "), tt.devices)
			}
			if res.Mount.FSType != tt.fstype {
				t.Errorf("fstype = %q, want %q", res.Mount.FSType, tt.fstype)
			}
		})
	}
	res, _ := r.Resolve("/data/db")
	if res.Mount.MountPoint != "/data" || res.Mount.Options != "noatime,rw" || res.Primary() != "dm-0" {
		t.Errorf("mount = %+v, primary %q", res.Mount, res.Primary())
	}
}

func TestDeviceRates(t *testing.T) {
	prev := blockdevice.IOStats{ReadIOs: 1000, ReadSectors: 8000, ReadTicks: 500, WriteIOs: 200, WriteSectors: 204800,
		WriteTicks: 1000, IOsTotalTicks: 10000, WeightedIOTicks: 20000}
	cur := blockdevice.IOStats{ReadIOs: 3000, ReadSectors: 24000, ReadTicks: 1500, WriteIOs: 300, WriteSectors: 307200,
		WriteTicks: 3000, IOsTotalTicks: 10500, WeightedIOTicks: 24000, IOsInProgress: 4}
	got := deviceRates(prev, cur, 2*time.Second)
	// By hand, over 2 s: 2000 reads, 16000 sectors; 100 writes, 102400 sectors.
	want := Rates{ReadIOPS: 1000, WriteIOPS: 50, ReadBWBytes: 16000 * 512 / 2, WriteBWBytes: 102400 * 512 / 2,
		ReadAwaitMs: 0.5, WriteAwaitMs: 20, QueueSize: 2, ReadReqBytes: 4096, WriteReqBytes: 524288, UtilPct: 25, InFlight: 4}
	if got != want {
		t.Errorf("rates =\n%+v, want\n%+v", got, want)
	}
	if z := deviceRates(cur, prev, time.Second); z.ReadIOPS != 0 || z.WriteBWBytes != 0 {
		t.Errorf("counters going backwards should give zero rates, got %+v", z)
	}
}

// TestOthersBusyTime: the disks whose busy time counts as the others' are the
// whole disks that carry none of the kept devices' own IO: not the disk
// of a kept partition, not a disk under a kept stacked device, and no
// stacked device (its IO shows on the disks under it).
func TestOthersBusyTime(t *testing.T) {
	root := t.TempDir()
	// vda (partition vda1), sdb, sdc under dm-0, each busy a different
	// number of ms.
	ticks := map[string]int{"vda": 1, "vda1": 2, "sdb": 10, "sdc": 100, "dm-0": 1000}
	var b strings.Builder
	for _, d := range []string{"vda", "vda1", "sdb", "sdc", "dm-0"} {
		fmt.Fprintf(&b, " 8 0 %s 1 0 8 1 0 0 0 0 0 %d 1 0 0 0 0 0 0\n", d, ticks[d])
	}
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"block/vda/vda1", "block/sdb", "block/sdc", "block/dm-0/slaves/sdc"} {
		mk(p)
	}
	os.WriteFile(filepath.Join(root, "diskstats"), []byte(b.String()), 0o644)
	os.WriteFile(filepath.Join(root, "stat"), []byte("cpu  100 0 50 800 40 0 10 0 0 0\nbtime 1\n"), 0o644)
	os.WriteFile(filepath.Join(root, "meminfo"), []byte("MemTotal: 1000 kB\n"), 0o644)
	for _, tc := range []struct {
		keep []string
		want uint64
	}{
		{[]string{"sdb"}, 1 + 100},    // vda and sdc; dm-0 is stacked
		{[]string{"vda1"}, 10 + 100},  // vda carries vda1's IO
		{[]string{"dm-0"}, 1 + 10},    // sdc carries dm-0's IO
		{[]string{"vda", "dm-0"}, 10}, // sdb only
	} {
		r, err := NewReader(root, root, tc.keep)
		if err != nil {
			t.Fatal(err)
		}
		s, err := r.Snapshot(time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		if s.OtherIOTicks != tc.want {
			t.Errorf("keeping %v: the others' io_ticks %d, want %d", tc.keep, s.OtherIOTicks, tc.want)
		}
	}
}

func TestSnapshotFromFixture(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "diskstats"), []byte(
		" 253       0 vda 100 0 800 50 10 0 80 20 1 60 70 0 0 0 0 0 0\n 253       1 vda1 100 0 800 50 10 0 80 20 1 60 70 0 0 0 0 0 0\n"+
			"   7       0 loop0 5 0 40 1 0 0 0 0 0 300 1 0 0 0 0 0 0\n   8      16 sdb 5 0 40 1 0 0 0 0 0 200 1 0 0 0 0 0 0\n"), 0o644)
	// The whole disks are /sys/block's entries; vda1 is a partition.
	for _, d := range []string{"vda", "loop0", "sdb"} {
		if err := os.MkdirAll(filepath.Join(root, "block", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "stat"), []byte("cpu  100 0 50 800 40 0 10 0 0 0\ncpu0 100 0 50 800 40 0 10 0 0 0\nbtime 1\n"), 0o644)
	os.WriteFile(filepath.Join(root, "meminfo"), []byte("MemTotal: 1000 kB\nDirty: 2048 kB\nWriteback: 4 kB\n"), 0o644)
	r, err := NewReader(root, root, []string{"vda"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Snapshot(time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Devices) != 1 || s.Devices["vda"].ReadIOs != 100 {
		t.Errorf("devices = %+v", s.Devices)
	}
	if s.DirtyBytes != 2048*1024 || s.WritebackBytes != 4096 {
		t.Errorf("dirty = %d, writeback = %d", s.DirtyBytes, s.WritebackBytes)
	}
	next := s
	next.CPUTotal += 10
	next.CPUIowait += 2.5
	if got := systemRates(s, next).IowaitPct; got != 25 {
		t.Errorf("iowait = %v%%, want 25%%", got)
	}
	// The disks not kept, partitions left out: loop0 and sdb.
	if s.OtherIOTicks != 500 {
		t.Errorf("other disks' io_ticks = %d, want 500 (loop0 and sdb, not vda's partition)", s.OtherIOTicks)
	}
	next.At = s.At.Add(2 * time.Second)
	next.OtherIOTicks += 1500
	if got := systemRates(s, next).OtherUtilPct; got != 75 {
		t.Errorf("other disks busy %v%% of the interval, want 75%%", got)
	}
	// Without /sys/block nothing says which are whole disks: none count.
	if err := os.RemoveAll(filepath.Join(root, "block")); err != nil {
		t.Fatal(err)
	}
	if s, err = r.Snapshot(time.Unix(0, 0)); err != nil || s.OtherIOTicks != 0 {
		t.Errorf("without /sys/block: other io_ticks %d (%v), want 0", s.OtherIOTicks, err)
	}
}

// BenchmarkTick is the cost of one 1 s sample on this machine: reading
// /proc/diskstats, /proc/stat and /proc/meminfo and computing the rates.
// At one tick a second, ns/op divided by 1e7 is the share of a core in %.
func BenchmarkTick(b *testing.B) {
	// Every device kept (the runner's sampler before it resolves), and
	// one (watch's: the others' busy time is summed over /sys/block).
	for _, bc := range []struct {
		name string
		keep func([]string) []string
	}{{"all", func([]string) []string { return nil }}, {"one", func(l []string) []string { return l[:1] }}} {
		b.Run(bc.name, func(b *testing.B) {
			all, err := NewReader("/proc", "", nil)
			if err != nil {
				b.Skip(err)
			}
			s, err := all.Snapshot(time.Now())
			if err != nil || len(s.Devices) == 0 {
				b.Skip("no /proc/diskstats here")
			}
			var names []string
			for n := range s.Devices {
				names = append(names, n)
			}
			r, err := NewReader("/proc", "", bc.keep(names))
			if err != nil {
				b.Fatal(err)
			}
			prev, err := r.Snapshot(time.Now())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				cur, err := r.Snapshot(time.Now())
				if err != nil {
					b.Fatal(err)
				}
				_ = Diff(prev, cur)
				prev = cur
			}
		})
	}
}

// The disks other than the root's that carry mounted file systems: a
// volume over two disks, a loop device (whatever backs it); not the
// root disk's partitions, not a tmpfs, not a read-only image.
func TestOtherDisks(t *testing.T) {
	r, root := fixture(t)
	res, err := r.Resolve("/")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(root, "proc/1/mountinfo"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A second mount of the root's partition, and a snap's squashfs.
	if _, err := f.WriteString("41 22 253:1 /home /home rw - ext4 /dev/vda1 rw\n50 22 7:0 / /snap/core/1 ro - squashfs /dev/loop0 ro\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got := strings.Join(r.OtherDisks(res), "; ")
	if got != "dm-0 at /data; loop0 at /mnt/emu" {
		t.Errorf("other disks = %q", got)
	}
	data, err := r.Resolve("/data")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.OtherDisks(data), "; "); got != "vda at /; loop0 at /mnt/emu" {
		t.Errorf("other disks than /data's = %q", got)
	}
}
