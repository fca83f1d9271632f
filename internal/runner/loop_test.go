package runner

import (
	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
	"golang.org/x/sys/unix"

	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// loopFS makes an ext4 file system on a loop device and mounts it, undoing
// everything when the test ends. It skips when not root or when the tools
// are missing.
func loopFS(t *testing.T) (mnt, dev string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to attach a loop device and mount it")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount", "fio"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	realio.Exclusive(t)
	base := t.TempDir()
	img := filepath.Join(base, "disk.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 512<<20); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", "--direct-io=on", img).Output()
	if err != nil {
		t.Skipf("no loop device available: %v", err)
	}
	dev = strings.TrimSpace(string(out))
	realio.Cleanup(t, func() { _ = exec.Command("losetup", "-d", dev).Run() })
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs: %v: %s", err, out)
	}
	mnt = filepath.Join(base, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", dev, mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	realio.Cleanup(t, func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount: %v: %s", err, out)
		}
	})
	return mnt, dev
}

// The device series must see the IO fio did: on a loop device nothing
// else writes, so the bytes the device wrote during the measurement match
// fio's bytes.
func TestDeviceSeriesSeesIO(t *testing.T) {
	mnt, dev := loopFS(t)
	spec := result.TestSpec{Name: "seqwrite", RW: "write", BlockSize: 1 << 20, IODepth: 8, NumJobs: 1, Direct: true, IOEngine: "libaio", RuntimeS: 4}
	var got []result.Result
	err := Run(context.Background(), Config{Suite: result.Suite{Name: "t", Tests: []result.TestSpec{spec}}, Dir: mnt, SizeBytes: 128 << 20},
		func(r result.Result) error { got = append(got, r); return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := got[0]
	name := filepath.Base(dev)
	if r.Target.Device != name || r.Target.Filesystem != "ext4" {
		t.Fatalf("target = %+v, want device %s", r.Target, name)
	}
	// The backing file's own disk is found too, when it has one: a
	// TMPDIR on a tmpfs has none (the file system's device number has
	// major 0).
	var st unix.Stat_t
	if err := unix.Stat(filepath.Dir(mnt), &st); err != nil {
		t.Fatal(err)
	}
	if unix.Major(st.Dev) == 0 {
		if len(r.Target.Devices) != 1 {
			t.Errorf("devices = %v: the backing file is on a file system with no disk, want only %s", r.Target.Devices, name)
		}
	} else if len(r.Target.Devices) < 2 {
		t.Errorf("devices = %v: the loop device's backing disk should be found too", r.Target.Devices)
	}
	var loop *result.DeviceSeries
	for i := range r.Devices {
		if r.Devices[i].Device == name {
			loop = &r.Devices[i]
		}
	}
	if loop == nil {
		t.Fatalf("no series for %s", name)
	}
	var devBytes float64
	for _, s := range loop.Samples {
		if s.T > 0 && s.T <= spec.RuntimeS+0.5 {
			devBytes += s.WriteBWBytes * r.Interval() // a rate over one interval
		}
	}
	fioBytes := float64(r.Write.IOBytes)
	ratio := devBytes / fioBytes
	t.Logf("fio wrote %.0f MB, the device series saw %.0f MB (ratio %.2f)", fioBytes/1e6, devBytes/1e6, ratio)
	// The device's windows are offset from fio's by up to an interval, so
	// allow a window's worth of difference.
	if ratio < 0.6 || ratio > 1.4 {
		t.Errorf("device series saw %.2f of fio's bytes", ratio)
	}
	if ents, _ := os.ReadDir(mnt); len(ents) != 1 || ents[0].Name() != "lost+found" {
		t.Errorf("files left on the target: %v", ents)
	}
}
