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

	"github.com/iolens/iolens/internal/result"
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
// detaches it when the test ends. It skips when not root.
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
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Skipf("no loop device available: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return dev
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
	lease, err := CheckDevice(ctx, write)
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
	lease, err = CheckDevice(ctx, DeviceCheck{Device: dev, Writes: true, Destructive: true, Force: true})
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
	if _, err := CheckDevice(ctx, write); !refusedFor(err, "ext4") {
		t.Errorf("ext4 without --force: %v", err)
	}
	if _, err := CheckDevice(ctx, DeviceCheck{Device: dev, Writes: true, Force: true}); !refusedFor(err, "destroy") {
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
	defer unmount()
	forced := DeviceCheck{Device: dev, Writes: true, Destructive: true, Force: true}
	if _, err := CheckDevice(ctx, forced); !refusedFor(err, "mounted at "+mnt) {
		t.Errorf("mounted, with --force: %v", err)
	}
	lease, err = CheckDevice(ctx, DeviceCheck{Device: dev})
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
		defer func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}()
		if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "ready" {
			t.Skipf("could not mount in a new namespace (%q)", line)
		}
		if _, err := CheckDevice(ctx, forced); !refusedFor(err, fmt.Sprintf("in the mount namespace of pid %d", cmd.Process.Pid)) {
			t.Errorf("mounted in another namespace: %v", err)
		}
	})

	// Swap.
	t.Run("swap", func(t *testing.T) {
		run(t, "mkswap", "-f", dev)
		if out, err := exec.Command("swapon", "-p", "-2", dev).CombinedOutput(); err != nil {
			t.Skipf("swapon: %v: %s", err, out)
		}
		defer run(t, "swapoff", dev)
		if _, err := CheckDevice(ctx, forced); !refusedFor(err, "used as swap") {
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
