package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/iolens/iolens/internal/units"
	"golang.org/x/sys/unix"
)

// Space is free space on a file system.
type Space struct {
	FreeBytes  int64
	TotalBytes int64
}

// FreeSpace reports the space available to unprivileged writers at path.
func FreeSpace(path string) (Space, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return Space{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	return Space{FreeBytes: int64(st.Bavail) * st.Bsize, TotalBytes: int64(st.Blocks) * st.Bsize}, nil
}

const (
	defaultSize = 1 << 30
	minSize     = 64 << 20
	// reserve is kept free on the target's file system beyond the test
	// files, so a benchmark never fills a disk other software uses.
	reserve = 256 << 20
)

// SpaceError means the target has too little free space.
type SpaceError struct {
	Path            string
	Need, FreeBytes int64
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("not enough free space in %s: the tests need %s (plus %s kept free), %s is free",
		e.Path, units.HumanBytes(float64(e.Need)), units.HumanBytes(reserve), units.HumanBytes(float64(e.FreeBytes)))
}

// Hint says how to fit.
func (e *SpaceError) Hint() string {
	return "free some space, pick a directory on a larger file system, or pass a smaller --size (at least 64M)"
}

// ChooseSize picks the shared test file's size. A size the user asked for
// is checked against free space; otherwise 1 GiB, reduced to a tenth of the
// free space when that is smaller. extra is what the suite's own-file tests
// need on top. The reason is shown to the user and kept in the result.
func ChooseSize(requested int64, sp Space, extra int64, path string) (int64, string, error) {
	avail := sp.FreeBytes - reserve - extra
	if requested > 0 {
		if requested > avail {
			return 0, "", &SpaceError{Path: path, Need: requested + extra, FreeBytes: sp.FreeBytes}
		}
		return requested, "set with --size", nil
	}
	size := int64(defaultSize)
	reason := fmt.Sprintf("default 1 GiB (%s free)", units.HumanBytes(float64(sp.FreeBytes)))
	if tenth := sp.FreeBytes / 10; tenth < size {
		size = tenth &^ (1<<20 - 1)
		reason = fmt.Sprintf("a tenth of the %s free, below the 1 GiB default", units.HumanBytes(float64(sp.FreeBytes)))
	}
	if size < minSize {
		size = minSize
		reason = "the 64 MiB minimum"
	}
	if size > avail {
		return 0, "", &SpaceError{Path: path, Need: size + extra, FreeBytes: sp.FreeBytes}
	}
	return size, reason, nil
}

// DeviceRefusal explains why iolens will not write to a block device.
type DeviceRefusal struct {
	Device string
	Reason string
	hint   string
}

func (e *DeviceRefusal) Error() string {
	return fmt.Sprintf("refusing to write to %s: %s", e.Device, e.Reason)
}

// Hint says what would make the run acceptable.
func (e *DeviceRefusal) Hint() string { return e.hint }

// CheckDeviceWritable decides whether write tests may run on a raw device.
// Writes destroy what is on the device, so they need --destructive, and a
// device that carries a file system, a partition table or partitions also
// needs --force. A mounted device is always refused.
func CheckDeviceWritable(ctx context.Context, dev string, destructive, force bool) error {
	if !destructive {
		return &DeviceRefusal{Device: dev, Reason: "the suite has write tests, which destroy the data on the device",
			hint: "pass --destructive if the device holds nothing you need, or run a read-only suite (--job with read tests)"}
	}
	if m, err := mountedDevice(dev); err != nil {
		return err
	} else if m != "" {
		return &DeviceRefusal{Device: dev, Reason: "it (or one of its partitions) is mounted at " + m,
			hint: "unmount it first; iolens never writes to a mounted device, even with --force"}
	}
	if force {
		return nil
	}
	if sig := deviceSignature(ctx, dev); sig != "" {
		return &DeviceRefusal{Device: dev, Reason: "it carries " + sig,
			hint: "check that nothing on it is needed, then add --force (data on the device will be overwritten)"}
	}
	return nil
}

// deviceSignature names what blkid finds on the device (a file system, a
// partition table, RAID or LVM metadata), or returns "" when it finds
// nothing. Partitions known to the kernel count too.
func deviceSignature(ctx context.Context, dev string) string {
	real, err := filepath.EvalSymlinks(dev)
	if err == nil {
		name := filepath.Base(real)
		if ents, err := os.ReadDir(filepath.Join("/sys/class/block", name)); err == nil {
			for _, e := range ents {
				if _, err := os.Stat(filepath.Join("/sys/class/block", name, e.Name(), "partition")); err == nil {
					return "partition " + e.Name()
				}
			}
		}
	}
	out, err := exec.CommandContext(ctx, "blkid", "-p", "-o", "export", dev).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 2 {
			return "" // blkid: nothing found
		}
		if errors.Is(err, exec.ErrNotFound) {
			return "an unknown signature (blkid is not installed, so iolens cannot check)"
		}
		return "an unknown signature (blkid failed: " + err.Error() + ")"
	}
	var typ, pt string
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, "TYPE="):
			typ = strings.TrimPrefix(l, "TYPE=")
		case strings.HasPrefix(l, "PTTYPE="):
			pt = strings.TrimPrefix(l, "PTTYPE=")
		}
	}
	switch {
	case typ != "":
		return "a " + typ + " signature"
	case pt != "":
		return "a " + pt + " partition table"
	}
	return "a signature blkid recognises"
}

// mountedDevice returns a mount point of dev or of one of its partitions.
func mountedDevice(dev string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		return "", fmt.Errorf("%s: %w", dev, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return "", &DeviceRefusal{Device: dev, Reason: "it is not a block device", hint: "pass a block device such as /dev/sdb, or a directory as the DIR argument"}
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	maj, min := unix.Major(st.Rdev), unix.Minor(st.Rdev)
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 5 {
			continue
		}
		var m, n uint32
		if _, err := fmt.Sscanf(f[2], "%d:%d", &m, &n); err != nil {
			continue
		}
		// Partitions of a disk share its major and follow its minor.
		if m == maj && (n == min || (n > min && n < min+16 && isPartitionOf(maj, n, dev))) {
			return f[4], nil
		}
	}
	return "", nil
}

func isPartitionOf(maj, min uint32, dev string) bool {
	link, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", maj, min))
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(dev)
	if err != nil {
		return false
	}
	return filepath.Base(filepath.Dir(link)) == filepath.Base(real)
}

// DeviceSize is a block device's size in bytes.
func DeviceSize(dev string) (int64, error) {
	f, err := os.Open(dev)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := f.Seek(0, 2)
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", dev, err)
	}
	return n, nil
}
