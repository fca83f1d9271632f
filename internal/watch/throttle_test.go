package watch

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

func TestParseThrottleCaps(t *testing.T) {
	mm := map[string]string{"7:3": "loop3"}
	got := parseIOMax([]byte("7:3 rbps=max wbps=20000000 riops=max wiops=1\n8:0 rbps=1 wbps=max riops=max wiops=max\n7:4 wiops=5\n"), mm)
	if want := (capLimits{wbps: 20e6, wiops: 1}); len(got) != 1 || got["7:3"] != want {
		t.Errorf("io.max: got %+v, want 7:3 %+v only", got, want)
	}
	if got := parseIOMax([]byte("7:3 rbps=max wbps=max riops=max wiops=max\n"), mm); len(got) != 0 {
		t.Errorf("io.max without caps: got %+v", got)
	}
	if got := parseBlkioCaps([]byte("7:3 1048576\n8:0 5\n"), mm); len(got) != 1 || got["7:3"] != 1048576 {
		t.Errorf("blkio: got %+v", got)
	}
	if got := parseBlkioCaps([]byte(""), mm); len(got) != 0 {
		t.Errorf("empty blkio file: got %+v", got)
	}
}

// cgroupFixture is a hierarchy, v1 or v2, holding one capped cgroup
// whose counters move with the device's.
type cgroupFixture struct {
	t          *testing.T
	v2         bool
	dir        string // the capped cgroup
	mm         string // the capped device's major:minor
	rios, wios uint64
	rb, wb     uint64
}

func newCgroupFixture(t *testing.T, sys string, v2 bool) *cgroupFixture {
	root := filepath.Join(sys, "fs/cgroup")
	f := &cgroupFixture{t: t, v2: v2, dir: filepath.Join(root, "emu/disk"), mm: "253:0"}
	if v2 {
		f.write(filepath.Join(root, "cgroup.controllers"), "cpu io memory\n")
		f.write(filepath.Join(root, "emu/io.max"), "") // capped below, not here
	} else {
		f.dir = filepath.Join(root, "blkio/emu/disk")
		f.write(filepath.Join(root, "blkio/blkio.throttle.io_service_bytes"), "Total 0\n")
	}
	f.caps(2000)
	f.flush()
	return f
}

func (f *cgroupFixture) write(p, s string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// caps sets the IOPS caps both ways on the device, as the emulator does.
func (f *cgroupFixture) caps(iops int) {
	if f.v2 {
		f.write(filepath.Join(f.dir, "io.max"), fmt.Sprintf("%s rbps=80000000 wbps=80000000 riops=%d wiops=%d\n", f.mm, iops, iops))
		return
	}
	for k, v := range map[string]int{"read_bps_device": 80e6, "write_bps_device": 80e6, "read_iops_device": iops, "write_iops_device": iops} {
		f.write(filepath.Join(f.dir, "blkio.throttle."+k), fmt.Sprintf("%s %d\n", f.mm, v))
	}
}

func (f *cgroupFixture) flush() {
	mm := f.mm
	if f.v2 {
		f.write(filepath.Join(f.dir, "io.stat"), fmt.Sprintf("%s rbytes=%d wbytes=%d rios=%d wios=%d dbytes=0 dios=0\n", mm, f.rb, f.wb, f.rios, f.wios))
		return
	}
	f.write(filepath.Join(f.dir, "blkio.throttle.io_service_bytes_recursive"), fmt.Sprintf("%s Read %d\n%s Write %d\n%s Total %d\nTotal %d\n", mm, f.rb, mm, f.wb, mm, f.rb+f.wb, f.rb+f.wb))
	f.write(filepath.Join(f.dir, "blkio.throttle.io_serviced_recursive"), fmt.Sprintf("%s Read %d\n%s Write %d\n%s Total %d\nTotal %d\n", mm, f.rios, mm, f.wios, mm, f.rios+f.wios, f.rios+f.wios))
}

// holdStep is one interval of TestThrottleHold.
type holdStep struct {
	cap   int     // the cgroup's IOPS cap from this interval's end
	ios   uint64  // writes completed by the cgroup
	mb    float64 // MB it wrote
	other uint64  // 4 KiB writes from elsewhere (a journal commit)
	want  string
	why   string // in a stall finding logged at this interval
}

// TestThrottleHold: asynchronous writes held by a cgroup's block throttle
// leave no trace on the device's queue nor in iowait. The cap that went
// down to 1 IOPS starts the stall in the interval it did; the cgroup at
// that cap keeps it going, through an interval in which nothing
// completed; raising the cap ends it. Workloads that stop are not
// stalls, whatever their cgroup's cap.
func TestThrottleHold(t *testing.T) {
	scenarios := []struct {
		name     string
		steps    []holdStep
		findings string
		refMB    float64 // the stall's reference: the median of the active intervals before it
	}{
		{"cache", []holdStep{
			{cap: 2000, ios: 150, mb: 80, want: StateOK},
			{cap: 2000, ios: 150, mb: 80, want: StateOK},
			{cap: 2000, ios: 150, mb: 80, want: StateOK},
			{cap: 2000, ios: 150, mb: 80, want: StateOK},
			{cap: 1, ios: 30, mb: 16, want: StateStalled, why: "went down to wiops=1"},
			{cap: 1, ios: 1, mb: 0.5, want: StateStalled},
			{cap: 1, ios: 0, mb: 0, want: StateStalled},
			{cap: 1, ios: 2, mb: 1, want: StateStalled},
			{cap: 2000, ios: 100, mb: 50, want: StateOK},
			{cap: 2000, ios: 150, mb: 80, want: StateOK},
			{cap: 2000, ios: 150, mb: 80, want: StateOK},
			// fio stops: idle, not stalled, under a high cap and then a
			// low one set when nothing was running.
			{cap: 2000, want: StateOK},
			{cap: 2000, want: StateOK},
			{cap: 1, want: StateOK},
			{cap: 1, want: StateOK},
			// Another cgroup's trickle with this one idle under its
			// tiny cap.
			{cap: 1, other: 2, want: StateOK},
		}, "loop3 stall start @4; loop3 stall end @4+4", 80},
		// Recorded on a loaded machine: 1 MiB writes at 20 to 76 IOPS
		// after a start-up interval of 5 small IOs, which is no part of
		// the reference, then a stall at 1 IOPS through which the
		// journal commits two 4 KiB writes.
		{"large IOs", []holdStep{
			{cap: 2000, ios: 0, mb: 0, want: StateOK},
			{cap: 2000, ios: 5, mb: 0.02, want: StateOK},
			{cap: 2000, ios: 76, mb: 79.7, want: StateOK},
			{cap: 2000, ios: 29, mb: 30.4, want: StateOK},
			{cap: 2000, ios: 20, mb: 21, want: StateOK},
			{cap: 2000, ios: 55, mb: 54.6, want: StateOK},
			{cap: 2000, ios: 76, mb: 79.7, want: StateOK},
			{cap: 2000, ios: 26, mb: 27.3, want: StateOK},
			{cap: 1, ios: 1, mb: 1.05, want: StateStalled},
			{cap: 1, ios: 1, mb: 1.05, want: StateStalled},
			{cap: 1, ios: 1, mb: 1.05, other: 2, want: StateStalled},
			{cap: 1, ios: 1, mb: 1.05, want: StateStalled},
			{cap: 2000, ios: 54, mb: 56.6, want: StateOK},
		}, "loop3 stall start @8; loop3 stall end @8+4", (30.4 + 54.6) / 2},
	}
	for _, sc := range scenarios {
		for _, v2 := range []bool{true, false} {
			t.Run(sc.name+map[bool]string{true: "/v2", false: "/v1"}[v2], func(t *testing.T) {
				tr := newTree(t, "loop3")
				cg := newCgroupFixture(t, tr.sys, v2)
				w, err := New(Config{ProcRoot: tr.proc, SysRoot: tr.sys, Devices: []string{"loop3"}, Host: "fixture"})
				if err != nil {
					t.Fatal(err)
				}
				if w.throttle == nil || w.throttle.v2 != v2 {
					t.Fatalf("hierarchy not found: %+v", w.throttle)
				}
				t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				if _, err := w.Start(t0); err != nil {
					t.Fatal(err)
				}
				var recs []result.WatchRecord
				for i, s := range sc.steps {
					c := tr.counters["loop3"]
					ios := s.ios + s.other
					c[3] += ios
					c[4] += uint64(s.mb*1e6/512) + s.other*8
					c[5] += ios // 1 ms each: no queue to speak of
					c[7] += ios
					tr.cpuTotal += 100
					tr.flush()
					cg.wios += s.ios
					cg.wb += uint64(s.mb * 1e6)
					cg.caps(s.cap)
					cg.flush()
					rs, err := w.Tick(t0.Add(time.Duration(i+1) * time.Second))
					if err != nil {
						t.Fatal(err)
					}
					recs = append(recs, rs...)
					if got := rs[0].Devices[0].State; got != s.want {
						t.Errorf("interval %d: %s, want %s", i+1, got, s.want)
					}
					for _, r := range rs[1:] {
						f := r.Finding
						if s.why != "" && f.Kind == "stall" && !strings.Contains(f.Summary, s.why) {
							t.Errorf("interval %d: %q does not say %q", i+1, f.Summary, s.why)
						}
						if ref := f.Evidence["ref_bytes_s"] / 1e6; f.Kind == "stall" && f.Phase == "end" && math.Abs(ref-sc.refMB) > 0.01 {
							t.Errorf("interval %d: reference %.2f MB/s, want %.2f", i+1, ref, sc.refMB)
						}
					}
				}
				if got := strings.Join(findings(recs), "; "); got != sc.findings {
					t.Errorf("findings: %s, want %s", got, sc.findings)
				}
			})
		}
	}
}

// TestNeighbourHeldByThrottle: loop3's workload pauses while the host
// waits on IO (iowait 40%) and vdb, not watched, is all but idle. With a
// cgroup's writes to vdb held at its throttle cap, the wait is theirs:
// loop3 paused, also in the interval after the last one held, while the
// throttle's queue drains. Without that, nothing but loop3 (or a
// throttle above it that watch cannot see) can be waited on: a stall.
func TestNeighbourHeldByThrottle(t *testing.T) {
	for _, held := range []bool{true, false} {
		for _, v2 := range []bool{true, false} {
			t.Run(fmt.Sprintf("held=%v/v2=%v", held, v2), func(t *testing.T) {
				tr := newTree(t, "loop3", "vdb")
				cg := newCgroupFixture(t, tr.sys, v2)
				cg.mm = tr.mm["vdb"]
				cg.caps(100)
				cg.flush()
				w, err := New(Config{ProcRoot: tr.proc, SysRoot: tr.sys, Devices: []string{"loop3"}, Host: "fixture"})
				if err != nil {
					t.Fatal(err)
				}
				t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				if _, err := w.Start(t0); err != nil {
					t.Fatal(err)
				}
				for i := 1; i <= 9; i++ {
					paused := i > 4
					// The neighbour's IO ends in interval 7: its throttle
					// queue drains through it; from 8 on, nothing holds.
					nios := uint64(100)
					if i >= 7 {
						nios = 30
					}
					// The fixture's columns: r_ios r_sect r_ticks w_ios w_sect
					// w_ticks in_flight io_ticks weighted.
					c := tr.counters["loop3"]
					c[6] = 0
					if !paused {
						c[3] += 3000
						c[4] += 24000
						c[5] += 3000
						c[6] = 3
						c[7] += 900
						c[8] += 3000
					}
					// vdb: 100 small writes a second, 5 ms busy.
					v := tr.counters["vdb"]
					v[3] += nios
					v[4] += nios * 8
					v[5] += 5
					v[7] += 5
					v[8] += 5
					cg.wios += nios
					cg.wb += nios * 4096
					if !held {
						cg.caps(100000)
					}
					cg.flush()
					tr.cpuTotal += 100
					if paused {
						tr.cpuIowait += 40
					}
					tr.flush()
					rs, err := w.Tick(t0.Add(time.Duration(i) * time.Second))
					if err != nil {
						t.Fatal(err)
					}
					want := StateBusy
					switch {
					case paused && held && i <= 7:
						want = StateOK
					case paused:
						want = StateStalled
					}
					if got := rs[0].Devices[0].State; got != want {
						t.Errorf("interval %d: loop3 %s, want %s", i, got, want)
					}
				}
			})
		}
	}
}

// TestThrottleDisks: the throttle sampler follows caps on every whole
// disk of the host and every watched device; a cap on a watched
// partition's disk keeps the disk's name (TestFamily: it is no other
// disk's).
func TestThrottleDisks(t *testing.T) {
	sys := t.TempDir()
	mk := func(dir, mm string, partition bool) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(sys, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sys, dir, "dev"), []byte(mm+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if partition {
			if err := os.WriteFile(filepath.Join(sys, dir, "partition"), []byte("1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(filepath.Join(sys, "dev/block"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(sys, dir), filepath.Join(sys, "dev/block", mm)); err != nil {
			t.Fatal(err)
		}
	}
	mk("devices/virtual/block/vdb", "253:16", false)
	mk("devices/virtual/block/vdb/vdb1", "253:17", true)
	mk("devices/virtual/block/vdc", "253:32", false)
	if err := os.MkdirAll(filepath.Join(sys, "block"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"vdb", "vdc"} {
		if err := os.Symlink("../devices/virtual/block/"+d, filepath.Join(sys, "block", d)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		watched map[string]string
		want    string
	}{
		{map[string]string{"253:17": "vdb1"}, "253:16=vdb 253:17=vdb1 253:32=vdc"},
		{map[string]string{"253:17": "vdb1", "253:16": "vdb"}, "253:16=vdb 253:17=vdb1 253:32=vdc"},
		{map[string]string{}, "253:16=vdb 253:32=vdc"},
	} {
		th := &throttles{watched: tc.watched, sys: sysBlock{sys}}
		var got []string
		for mm, n := range th.disks() {
			got = append(got, mm+"="+n)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != tc.want {
			t.Errorf("watching %v: %s, want %s", tc.watched, strings.Join(got, " "), tc.want)
		}
	}
}

// TestFamily: a device's disk, the disks under a stacked device and the
// watched devices tied to those carry its IO: their busy time and their
// throttle caps are not another disk's. Partitions of one disk are tied
// to each other; unrelated disks are not.
func TestFamily(t *testing.T) {
	sys := t.TempDir()
	dev := func(dir, name, mm string, partition bool, slaves ...string) result.WatchDeviceInfo {
		t.Helper()
		full := filepath.Join(sys, "devices/virtual/block", dir)
		for _, p := range []string{full, filepath.Join(full, "slaves"), filepath.Join(sys, "class/block"), filepath.Join(sys, "dev/block")} {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(full, "dev"), []byte(mm+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if partition {
			if err := os.WriteFile(filepath.Join(full, "partition"), []byte("1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range slaves {
			if err := os.Mkdir(filepath.Join(full, "slaves", s), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, l := range []string{filepath.Join(sys, "class/block", name), filepath.Join(sys, "dev/block", mm)} {
			if err := os.Symlink(full, l); err != nil {
				t.Fatal(err)
			}
		}
		return result.WatchDeviceInfo{Name: name, MajMin: mm}
	}
	vdb := dev("vdb", "vdb", "253:16", false)
	vdb1 := dev("vdb/vdb1", "vdb1", "253:17", true)
	vdb2 := dev("vdb/vdb2", "vdb2", "253:18", true)
	sdc := dev("sdc", "sdc", "8:32", false)
	dm := dev("dm-0", "dm-0", "252:0", false, "sdc")
	vdd := dev("vdd", "vdd", "253:48", false)
	_ = vdb
	fam := sysBlock{sys}.family([]result.WatchDeviceInfo{vdb1, vdb2, dm, sdc, vdd})
	str := func(n string) string {
		var l []string
		for x := range fam[n] {
			l = append(l, x)
		}
		sort.Strings(l)
		return strings.Join(l, " ")
	}
	for n, want := range map[string]string{"vdb1": "vdb vdb2", "vdb2": "vdb vdb1", "dm-0": "sdc", "sdc": "dm-0", "vdd": ""} {
		if got := str(n); got != want {
			t.Errorf("%s's family: %q, want %q", n, got, want)
		}
	}
	// In the state machine: vdb2's busy time is not another disk's for
	// vdb1, nor a cap on vdb; vdd's are.
	h := Host{OtherUtilPct: 5, util: map[string]float64{"vdb1": 1, "vdb2": 90, "vdd": 30}, family: fam}
	if got := h.othersBusy("vdb1"); got != 35 {
		t.Errorf("others busy for vdb1: %.0f%%, want 35%% (vdd and the unwatched, not vdb2)", got)
	}
	th := DefaultThresholds()
	h.IowaitPct = 50
	h.heldRecently = map[string]bool{"vdb": true}
	if p, _ := th.pending(h, "vdb1"); !p {
		t.Error("a cap on vdb1's own disk suppressed its host evidence")
	}
	h.heldRecently = map[string]bool{"vdd": true}
	if p, _ := th.pending(h, "vdb1"); p {
		t.Error("another disk held by its throttle, yet the host's wait was pinned on vdb1")
	}
}
