package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
	"golang.org/x/sys/unix"
)

// devTree builds /proc and /sys fixture trees for a disk loop3 (7:3) with
// one partition loop3p1 (259:0). mods adds to it.
func devTree(t testing.TB, mods func(proc, sys string)) DeviceInspector {
	t.Helper()
	root := t.TempDir()
	proc, sys := filepath.Join(root, "proc"), filepath.Join(root, "sys")
	dev := filepath.Join(sys, "devices", "virtual", "block", "loop3")
	mustMkdir(t, filepath.Join(dev, "holders"), filepath.Join(dev, "loop3p1", "holders"), filepath.Join(sys, "dev", "block"), filepath.Join(sys, "class", "block"))
	mustWrite(t, filepath.Join(dev, "loop3p1", "partition"), "1\n")
	mustWrite(t, filepath.Join(dev, "loop3p1", "dev"), "259:0\n")
	mustLink(t, "../../devices/virtual/block/loop3", filepath.Join(sys, "dev", "block", "7:3"))
	mustLink(t, "../../devices/virtual/block/loop3/loop3p1", filepath.Join(sys, "dev", "block", "259:0"))
	mustLink(t, "../../devices/virtual/block/loop3", filepath.Join(sys, "class", "block", "loop3"))
	mustWrite(t, filepath.Join(proc, "swaps"), "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n")
	// This process is pid 100; pid 200 is in its namespace, pid 300 in
	// another one.
	for pid, ns := range map[string]string{"100": "mnt:[4026531841]", "200": "mnt:[4026531841]", "300": "mnt:[4026532999]"} {
		mustMkdir(t, filepath.Join(proc, pid, "ns"))
		mustLink(t, ns, filepath.Join(proc, pid, "ns", "mnt"))
		mustWrite(t, filepath.Join(proc, pid, "mountinfo"), "22 1 252:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n")
	}
	mustLink(t, "100", filepath.Join(proc, "self"))
	if mods != nil {
		mods(proc, sys)
	}
	return DeviceInspector{ProcRoot: proc, SysRoot: sys}
}

func mustMkdir(t testing.TB, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func mustWrite(t testing.TB, path, text string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustLink(t testing.TB, target, path string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(path))
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

const mountLine = "40 22 %s / %s rw,relatime shared:9 - ext4 /dev/%s rw\n"

func TestInspectDevice(t *testing.T) {
	appendTo := func(path, text string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		mods func(proc, sys string)
		want DeviceUse
	}{
		{"unused", nil, DeviceUse{}},
		{"LVM on the disk", func(_, sys string) {
			mustLink(t, "../../dm-0", filepath.Join(sys, "devices/virtual/block/loop3/holders/dm-0"))
		}, DeviceUse{Holders: []string{"dm-0"}}},
		{"dm-crypt on the partition", func(_, sys string) {
			mustLink(t, "../../../dm-1", filepath.Join(sys, "devices/virtual/block/loop3/loop3p1/holders/dm-1"))
		}, DeviceUse{Holders: []string{"dm-1"}}},
		{"md on the partition", func(_, sys string) {
			mustLink(t, "../../../md0", filepath.Join(sys, "devices/virtual/block/loop3/loop3p1/holders/md0"))
		}, DeviceUse{Holders: []string{"md0"}}},
		{"swap on the partition", func(proc, _ string) {
			appendTo(filepath.Join(proc, "swaps"), "/dev/loop3p1                            partition\t65532\t\t0\t\t-2\n")
		}, DeviceUse{Swap: []string{"/dev/loop3p1"}}},
		{"swap file elsewhere", func(proc, _ string) {
			appendTo(filepath.Join(proc, "swaps"), "/swapfile                               file\t\t65532\t\t0\t\t-2\n")
		}, DeviceUse{}},
		{"mounted here", func(proc, _ string) {
			appendTo(filepath.Join(proc, "100", "mountinfo"), fmt.Sprintf(mountLine, "7:3", "/data", "loop3"))
		}, DeviceUse{Mounts: []string{"loop3 at /data"}}},
		{"partition mounted in another namespace", func(proc, _ string) {
			appendTo(filepath.Join(proc, "300", "mountinfo"), fmt.Sprintf(mountLine, "259:0", "/var/lib/kubelet/x", "loop3p1"))
		}, DeviceUse{Mounts: []string{"loop3p1 at /var/lib/kubelet/x (in the mount namespace of pid 300)"}}},
		{"a second table of our own namespace is not read", func(proc, _ string) {
			appendTo(filepath.Join(proc, "200", "mountinfo"), fmt.Sprintf(mountLine, "7:3", "/stale", "loop3"))
		}, DeviceUse{}},
		{"another device", func(proc, _ string) {
			appendTo(filepath.Join(proc, "300", "mountinfo"), fmt.Sprintf(mountLine, "7:4", "/other", "loop4"))
		}, DeviceUse{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := devTree(t, tt.mods).Inspect("7:3", "loop3")
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != "loop3" || len(got.Partitions) != 1 || got.Partitions[0] != "loop3p1" {
				t.Errorf("device = %s, partitions %v", got.Name, got.Partitions)
			}
			if fmt.Sprint(got.Mounts) != fmt.Sprint(tt.want.Mounts) || fmt.Sprint(got.Holders) != fmt.Sprint(tt.want.Holders) || fmt.Sprint(got.Swap) != fmt.Sprint(tt.want.Swap) {
				t.Errorf("use = %+v, want %+v", got, tt.want)
			}
			if got.InUse() != (tt.want.String() != "") {
				t.Errorf("InUse = %v for %q", got.InUse(), got.String())
			}
		})
	}
	// Without a sysfs entry (a container), mounts and swap are still
	// checked, and what was not is said.
	in := devTree(t, func(proc, _ string) {
		appendTo(filepath.Join(proc, "swaps"), "/dev/sdz                                partition\t65532\t\t0\t\t-2\n")
	})
	u, err := in.Inspect("8:0", "sdz")
	if err != nil || u.Name != "sdz" || len(u.Swap) != 1 || !strings.Contains(u.Unchecked, "holders") {
		t.Errorf("no sysfs entry: %+v, %v", u, err)
	}
}

// loopDevice attaches a loop device to a new file of size bytes, and
// detaches it when the test ends. It skips when not root, and under
// -short (attach).
func loopDevice(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to attach loop devices")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mkswap", "swapon", "swapoff", "unshare", "mount", "umount", "blkid"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	return attach(t, img, false)
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, out)
	}
}

// The device checks on real loop devices: a device in use is never
// written, not even with --force; reads of it run read-only; the
// exclusive handle keeps the kernel from mounting it while iolens holds
// it.
func TestCheckDeviceLoop(t *testing.T) {
	dev := loopDevice(t, 64<<20)
	ctx := context.Background()
	write := DeviceCheck{Device: dev, Writes: true, Destructive: true}
	mnt := t.TempDir()

	// Blank: writes may run, and while iolens holds the device no one
	// can claim it (mkfs and mount open it exclusively too).
	lease, err := checkDevice(ctx, write)
	if err != nil {
		t.Fatalf("blank device: %v", err)
	}
	if err := exec.Command("mkfs.ext4", "-q", "-F", dev).Run(); err == nil {
		t.Error("mkfs claimed the device while iolens held it")
	}
	if err := lease.Release(); err != nil {
		t.Fatal(err)
	}
	run(t, "mkfs.ext4", "-q", "-F", dev)
	lease, err = checkDevice(ctx, DeviceCheck{Device: dev, Writes: true, Destructive: true, Force: true})
	if err != nil {
		t.Fatalf("ext4 with --force: %v", err)
	}
	if err := exec.Command("mount", dev, mnt).Run(); err == nil {
		_ = exec.Command("umount", mnt).Run()
		t.Error("the device was mounted while iolens held it")
	}
	if err := lease.Release(); err != nil {
		t.Fatal(err)
	}

	// A file system needs --force; --destructive is always needed.
	if _, err := checkDevice(ctx, write); !refusedFor(err, "ext4") {
		t.Errorf("ext4 without --force: %v", err)
	}
	if _, err := checkDevice(ctx, DeviceCheck{Device: dev, Writes: true, Force: true}); !refusedFor(err, "destroy") {
		t.Errorf("no --destructive: %v", err)
	}

	// Mounted here.
	run(t, "mount", dev, mnt)
	mounted := true
	unmount := func() {
		if mounted {
			run(t, "umount", mnt)
			mounted = false
		}
	}
	realio.Cleanup(t, unmount)
	forced := DeviceCheck{Device: dev, Writes: true, Destructive: true, Force: true}
	if _, err := checkDevice(ctx, forced); !refusedFor(err, "mounted at "+mnt) {
		t.Errorf("mounted, with --force: %v", err)
	}
	lease, err = checkDevice(ctx, DeviceCheck{Device: dev})
	if err != nil || !lease.ReadOnly || !strings.Contains(lease.Note, "--readonly") {
		t.Errorf("reading a mounted device: lease %+v, err %v; want read-only with a note", lease, err)
	}
	_ = lease.Release()
	unmount()

	// Mounted in another mount namespace only.
	t.Run("other namespace", func(t *testing.T) {
		cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", fmt.Sprintf("mount %s %s && echo ready && exec sleep 600", dev, mnt))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Skipf("unshare: %v", err)
		}
		realio.Cleanup(t, func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "ready" {
			t.Skipf("could not mount in a new namespace (%q)", line)
		}
		if _, err := checkDevice(ctx, forced); !refusedFor(err, fmt.Sprintf("in the mount namespace of pid %d", cmd.Process.Pid)) {
			t.Errorf("mounted in another namespace: %v", err)
		}
	})

	// Swap.
	t.Run("swap", func(t *testing.T) {
		run(t, "mkswap", "-f", dev)
		if out, err := exec.Command("swapon", "-p", "-2", dev).CombinedOutput(); err != nil {
			t.Skipf("swapon: %v: %s", err, out)
		}
		realio.Cleanup(t, func() { run(t, "swapoff", dev) })
		if _, err := checkDevice(ctx, forced); !refusedFor(err, "used as swap") {
			t.Errorf("swap: %v", err)
		}
	})
}

func refusedFor(err error, why string) bool {
	var dr *DeviceRefusal
	return errors.As(err, &dr) && strings.Contains(dr.Reason, why) && dr.Hint() != ""
}

// A run on a mounted device: a write suite is refused even with
// --destructive --force; a read test runs with fio --readonly and says so.
func TestRunOnMountedDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fio on a loop device")
	}
	mnt, dev := loopFS(t)
	write := result.TestSpec{Name: "w", RW: "write", BlockSize: 4096, IODepth: 1, NumJobs: 1, IOEngine: "psync", RuntimeS: 1}
	err := Run(context.Background(), Config{Suite: result.Suite{Name: "s", Tests: []result.TestSpec{write}}, Device: dev, Destructive: true, Force: true},
		func(result.Result) error { t.Error("a write test ran on a mounted device"); return nil }, nil)
	if !refusedFor(err, "mounted at "+mnt) {
		t.Fatalf("write suite on a mounted device: %v", err)
	}
	read := result.TestSpec{Name: "r", RW: "randread", BlockSize: 4096, IODepth: 1, NumJobs: 1, IOEngine: "psync", RuntimeS: 1}
	var got []result.Result
	var notes []string
	err = Run(context.Background(), Config{Suite: result.Suite{Name: "s", Tests: []result.TestSpec{read}}, Device: dev},
		func(r result.Result) error { got = append(got, r); return nil },
		func(e Event) {
			if e.Kind == EventInfo {
				notes = append(notes, e.Message)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Status != "ok" || !contains(got[0].FioArgs, "--readonly") {
		t.Fatalf("read result: %+v", got)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "only reads run") {
		t.Errorf("no note about the mounted device: %q", notes)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// loopOn adds loop device name (7:minor) to a fixture tree, on backing
// file img.
func loopOn(t testing.TB, sys, name, minor, img string) {
	t.Helper()
	dev := filepath.Join(sys, "devices", "virtual", "block", name)
	mustMkdir(t, filepath.Join(dev, "holders"))
	mustWrite(t, filepath.Join(dev, "dev"), "7:"+minor+"\n")
	mustWrite(t, filepath.Join(dev, "loop", "backing_file"), img+"\n")
	mustLink(t, "../../devices/virtual/block/"+name, filepath.Join(sys, "dev", "block", "7:"+minor))
	mustLink(t, "../../devices/virtual/block/"+name, filepath.Join(sys, "class", "block", name))
}

// The blocks of a device can be reached through other devices: another
// loop device on the same image, the disk of a partition. A mount, a
// holder or swap on any of them is a use of this device, which the
// kernel's exclusive open does not see.
func TestInspectSameBlocks(t *testing.T) {
	const img = "/nonexistent/images/disk.img"
	appendTo := func(path, text string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
	}
	tree := func(t *testing.T, mods func(proc, sys string)) DeviceInspector {
		return devTree(t, func(proc, sys string) {
			mustWrite(t, filepath.Join(sys, "devices", "virtual", "block", "loop3", "dev"), "7:3\n")
			mustWrite(t, filepath.Join(sys, "devices", "virtual", "block", "loop3", "loop", "backing_file"), img+"\n")
			loopOn(t, sys, "loop5", "5", img)
			loopOn(t, sys, "loop6", "6", "/nonexistent/images/other.img")
			if mods != nil {
				mods(proc, sys)
			}
		})
	}
	tests := []struct {
		name        string
		dev, majmin string
		mods        func(proc, sys string)
		mount       string // in the use's mounts
		holder      string
		swap        string
	}{
		{name: "another loop device on the same image is mounted", dev: "loop3", majmin: "7:3", mods: func(proc, _ string) {
			appendTo(filepath.Join(proc, "100", "mountinfo"), fmt.Sprintf(mountLine, "7:5", "/data", "loop5"))
		}, mount: "loop5 (a loop device on the same backing file, " + img + ") at /data"},
		{name: "another loop device on the same image is held by device mapper", dev: "loop3", majmin: "7:3", mods: func(_, sys string) {
			mustLink(t, "../../dm-2", filepath.Join(sys, "devices/virtual/block/loop5/holders/dm-2"))
		}, holder: "dm-2"},
		{name: "another loop device on the same image is swap", dev: "loop3", majmin: "7:3", mods: func(proc, _ string) {
			appendTo(filepath.Join(proc, "swaps"), "/dev/loop5                              partition\t65532\t\t0\t\t-2\n")
		}, swap: "/dev/loop5"},
		{name: "a loop device on another image is not this one", dev: "loop3", majmin: "7:3", mods: func(proc, _ string) {
			appendTo(filepath.Join(proc, "100", "mountinfo"), fmt.Sprintf(mountLine, "7:6", "/other", "loop6"))
		}},
		{name: "the disk of a partition is mounted", dev: "loop3p1", majmin: "259:0", mods: func(proc, _ string) {
			appendTo(filepath.Join(proc, "100", "mountinfo"), fmt.Sprintf(mountLine, "7:3", "/whole", "loop3"))
		}, mount: "loop3 (the disk loop3p1 is a partition of) at /whole"},
		{name: "a partition of the same image through another loop device", dev: "loop3", majmin: "7:3", mods: func(proc, sys string) {
			p := filepath.Join(sys, "devices", "virtual", "block", "loop5", "loop5p1")
			mustWrite(t, filepath.Join(p, "partition"), "1\n")
			mustWrite(t, filepath.Join(p, "dev"), "259:7\n")
			appendTo(filepath.Join(proc, "300", "mountinfo"), fmt.Sprintf(mountLine, "259:7", "/p", "loop5p1"))
		}, mount: "loop5p1 (a partition of loop5 (a loop device on the same backing file, " + img + ")) at /p (in the mount namespace of pid 300)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := tree(t, tt.mods).Inspect(tt.majmin, tt.dev)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.mount != "" || tt.holder != "" || tt.swap != ""
			if u.InUse() != want {
				t.Errorf("in use = %v, want %v: %+v", u.InUse(), want, u)
			}
			if tt.mount != "" && !contains(u.Mounts, tt.mount) {
				t.Errorf("mounts = %q, want %q", u.Mounts, tt.mount)
			}
			if tt.holder != "" && !contains(u.Holders, tt.holder) {
				t.Errorf("holders = %q, want %q", u.Holders, tt.holder)
			}
			if tt.swap != "" && !contains(u.Swap, tt.swap) {
				t.Errorf("swap = %q, want %q", u.Swap, tt.swap)
			}
		})
	}
}

// attach attaches another loop device to img (with its partitions when
// part), detached when the test ends.
func attach(t *testing.T, img string, part bool) string {
	t.Helper()
	if testing.Short() {
		t.Skip("attaches loop devices (and the tests make file systems on them): not a unit test (-short)")
	}
	args := []string{"--find", "--show"}
	if part {
		args = append(args, "--partscan")
	}
	out, err := exec.Command("losetup", append(args, img)...).Output()
	if err != nil {
		t.Skipf("no loop device available: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	realio.Cleanup(t, func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return dev
}

func backingFile(t *testing.T, dev string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/class/block", filepath.Base(dev), "loop", "backing_file"))
	if err != nil {
		t.Skipf("no loop sysfs entry for %s: %v", dev, err)
	}
	return strings.TrimSpace(string(b))
}

// A second loop device on an image mounted through the first is in use:
// never written, even with --force, and read only with --readonly.
func TestCheckDeviceSameImage(t *testing.T) {
	first := loopDevice(t, 64<<20)
	img := backingFile(t, first)
	second := attach(t, img, false)
	run(t, "mkfs.ext4", "-q", "-F", first)
	mnt := t.TempDir()
	run(t, "mount", first, mnt)
	realio.Cleanup(t, func() { run(t, "umount", mnt) })
	ctx := context.Background()
	_, err := checkDevice(ctx, DeviceCheck{Device: second, Writes: true, Destructive: true, Force: true})
	if !refusedFor(err, "mounted at") || !refusedFor(err, filepath.Base(first)+" (a loop device on the same backing file") {
		t.Errorf("writing %s while %s (same image) is mounted: %v", second, first, err)
	}
	lease, err := checkDevice(ctx, DeviceCheck{Device: second})
	if err != nil || !lease.ReadOnly {
		t.Errorf("reading %s: lease %+v, err %v; want read-only", second, lease, err)
	}
	_ = lease.Release()
}

// A loop device whose twin on the same image carries a device-mapper
// volume is held.
func TestCheckDeviceSameImageHeld(t *testing.T) {
	if _, err := exec.LookPath("dmsetup"); err != nil {
		t.Skip("needs dmsetup")
	}
	first := loopDevice(t, 64<<20)
	second := attach(t, backingFile(t, first), false)
	name := fmt.Sprintf("iolens-test-%d", os.Getpid())
	if out, err := exec.Command("dmsetup", "create", name, "--table", fmt.Sprintf("0 %d linear %s 0", (64<<20)/512, second)).CombinedOutput(); err != nil {
		t.Skipf("dmsetup create: %v: %s", err, out)
	}
	realio.Cleanup(t, func() { run(t, "dmsetup", "remove", name) })
	_, err := checkDevice(context.Background(), DeviceCheck{Device: first, Writes: true, Destructive: true, Force: true})
	if !refusedFor(err, "held by dm-") {
		t.Errorf("writing %s while %s (same image) is held by %s: %v", first, second, name, err)
	}
}

// mbr writes a DOS partition table with one Linux partition from 1 MiB
// to the end of a disk of size bytes.
func mbr(t *testing.T, img string, size int64) {
	t.Helper()
	var sec [512]byte
	e := sec[446:462]
	e[4] = 0x83 // Linux
	start, n := uint32(2048), uint32(size/512-2048)
	for i := 0; i < 4; i++ {
		e[8+i] = byte(start >> (8 * i))
		e[12+i] = byte(n >> (8 * i))
	}
	sec[510], sec[511] = 0x55, 0xaa
	f, err := os.OpenFile(img, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(sec[:], 0); err != nil {
		t.Fatal(err)
	}
}

// A partition whose disk is mounted is refused, and the reason names the
// disk's mount (not a busy device somewhere out of sight).
func TestCheckPartitionOfMountedDisk(t *testing.T) {
	img := filepath.Join(t.TempDir(), "disk.img")
	if os.Geteuid() != 0 {
		t.Skip("needs root to attach loop devices")
	}
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	mbr(t, img, 64<<20)
	disk := attach(t, img, true)
	part := disk + "p1"
	mm, err := os.ReadFile(filepath.Join("/sys/class/block", filepath.Base(part), "dev"))
	if err != nil {
		t.Skipf("the kernel found no partition on %s (no DOS partition support?): %v", disk, err)
	}
	if _, err := os.Stat(part); err != nil {
		// No udev to make the node: make one.
		var maj, min uint32
		if _, err := fmt.Sscanf(strings.TrimSpace(string(mm)), "%d:%d", &maj, &min); err != nil {
			t.Fatal(err)
		}
		part = filepath.Join(t.TempDir(), filepath.Base(part))
		if err := unix.Mknod(part, unix.S_IFBLK|0o600, int(unix.Mkdev(maj, min))); err != nil {
			t.Skipf("mknod %s: %v", part, err)
		}
	}
	// ext4 leaves the first KiB, and with it the partition table, alone.
	run(t, "mkfs.ext4", "-q", "-F", disk)
	mnt := t.TempDir()
	run(t, "mount", disk, mnt)
	realio.Cleanup(t, func() { run(t, "umount", mnt) })
	_, err = checkDevice(context.Background(), DeviceCheck{Device: part, Writes: true, Destructive: true, Force: true})
	if !refusedFor(err, filepath.Base(disk)+" (the disk "+filepath.Base(part)+" is a partition of) at "+mnt) {
		t.Errorf("writing %s while its disk is mounted: %v", part, err)
	}
}
