package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/hint"
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// DeviceRefusal explains why iolens will not test a block device.
type DeviceRefusal struct {
	Device string
	Reason string
	hint   string
}

func (e *DeviceRefusal) Error() string {
	return fmt.Sprintf("refusing to test %s: %s", e.Device, e.Reason)
}

// Hint says what would make the run acceptable.
func (e *DeviceRefusal) Hint() string { return e.hint }

// DeviceUse is what the kernel knows to be using a block device or one of
// its partitions.
type DeviceUse struct {
	// Name is the kernel's name for the device (sdb, loop3, nvme0n1).
	Name       string
	Partitions []string
	// Mounts are mount points, in this or any other mount namespace
	// (those name the process they were seen through).
	Mounts []string
	// Holders are devices stacked on it: device mapper (LVM, dm-crypt,
	// multipath), md RAID, bcache.
	Holders []string
	// Swap lists the swap areas on it.
	Swap []string
	// Unchecked says what could not be looked at (no sysfs entry in a
	// container, say); O_EXCL still guards those.
	Unchecked string
}

// String describes the uses, for an error message.
func (u DeviceUse) String() string {
	var parts []string
	if len(u.Mounts) > 0 {
		parts = append(parts, "mounted at "+strings.Join(u.Mounts, ", "))
	}
	if len(u.Holders) > 0 {
		parts = append(parts, "held by "+strings.Join(u.Holders, ", ")+" (device mapper, LVM, dm-crypt or md RAID)")
	}
	if len(u.Swap) > 0 {
		parts = append(parts, "used as swap ("+strings.Join(u.Swap, ", ")+")")
	}
	return strings.Join(parts, "; ")
}

// DeviceInspector reads what uses a device from /proc and /sys. The
// roots are values so that tests can point them at fixture trees.
type DeviceInspector struct {
	ProcRoot, SysRoot string
}

func (d DeviceInspector) proc() string { return orDefault(d.ProcRoot, "/proc") }
func (d DeviceInspector) sys() string  { return orDefault(d.SysRoot, "/sys") }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Inspect finds the mounts (in every mount namespace it can see), holders
// and swap areas of the device numbered majmin ("7:3") and of its
// partitions, and of every device that shows the same blocks: the disk
// of a partition, other loop devices on the same backing file, the
// block device a loop device reads, and loop devices that read this one.
// The kernel's exclusive open sees none of those. name is the device's
// name to fall back on when sysfs has no entry for it (a container may
// see /dev but not /sys): partitions, holders and the others are then
// left unchecked, and said so.
func (d DeviceInspector) Inspect(majmin, name string) (DeviceUse, error) {
	u := DeviceUse{Name: name}
	link, err := os.Readlink(filepath.Join(d.sys(), "dev", "block", majmin))
	if err == nil {
		u.Name = filepath.Base(link)
	} else {
		u.Unchecked = fmt.Sprintf("partitions and holders (no %s/dev/block/%s)", d.sys(), majmin)
	}
	// numbers and names are what the mount tables and swaps are matched
	// against; each name says how it relates to the device.
	numbers := map[string]string{majmin: u.Name}
	names := map[string]bool{u.Name: true}
	add := func(name, mm, label string, partitions bool) {
		numbers[mm], names[name] = label, true
		u.Holders = append(u.Holders, d.holders(name, "")...)
		if !partitions {
			return
		}
		for _, p := range d.partitions(name) {
			plabel := p.name
			if label != name {
				plabel = p.name + " (a partition of " + label + ")"
			}
			if name == u.Name {
				u.Partitions = append(u.Partitions, p.name)
			}
			numbers[p.mm], names[p.name] = plabel, true
			u.Holders = append(u.Holders, d.holders(name, p.name)...)
		}
	}
	add(u.Name, majmin, u.Name, true)
	if err == nil {
		if disk, mm, ok := d.parent(majmin); ok {
			add(disk, mm, disk+" (the disk "+u.Name+" is a partition of)", false)
		}
		for _, o := range d.sameBlocks(u.Name, majmin) {
			add(o.name, o.mm, o.name+" ("+o.why+")", true)
		}
	}
	fs, err := procfs.NewFS(d.proc())
	if err != nil {
		return u, err
	}
	if swaps, err := fs.Swaps(); err == nil {
		for _, s := range swaps {
			if names[filepath.Base(s.Filename)] {
				u.Swap = append(u.Swap, s.Filename)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return u, fmt.Errorf("reading %s/swaps: %w", d.proc(), err)
	}
	u.Mounts, err = d.mounts(fs, numbers)
	sort.Strings(u.Holders)
	return u, err
}

// blockDev is a block device by kernel name and major:minor.
type blockDev struct{ name, mm, why string }

// partitions lists the partitions of disk name.
func (d DeviceInspector) partitions(name string) []blockDev {
	dir := filepath.Join(d.sys(), "class", "block", name)
	ents, _ := os.ReadDir(dir)
	var out []blockDev
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "partition")); err != nil {
			continue
		}
		mm, _ := os.ReadFile(filepath.Join(dir, e.Name(), "dev"))
		out = append(out, blockDev{name: e.Name(), mm: strings.TrimSpace(string(mm))})
	}
	return out
}

// holders lists what is stacked on disk name, or on its partition part.
func (d DeviceInspector) holders(name, part string) []string {
	dir := filepath.Join(d.sys(), "class", "block", name, "holders")
	if part != "" {
		dir = filepath.Join(d.sys(), "class", "block", name, part, "holders")
	}
	hs, _ := os.ReadDir(dir)
	var out []string
	for _, h := range hs {
		out = append(out, h.Name())
	}
	return out
}

// parent returns the disk of a partition.
func (d DeviceInspector) parent(majmin string) (name, mm string, ok bool) {
	dir := filepath.Join(d.sys(), "dev", "block", majmin)
	if _, err := os.Stat(filepath.Join(dir, "partition")); err != nil {
		return "", "", false
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", "", false
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(real), "dev"))
	if err != nil {
		return "", "", false
	}
	return filepath.Base(filepath.Dir(real)), strings.TrimSpace(string(b)), true
}

// fileID names the file at path by device and inode when it can be
// seen from here, and by its path otherwise: two loop devices on the
// same image match either way, through any hard link or bind mount that
// stat follows. A block device is named by the device it is.
func fileID(path string) string {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return "path:" + path
	}
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		return fmt.Sprintf("blk:%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
	}
	return fmt.Sprintf("file:%d:%d", st.Dev, st.Ino)
}

// sameBlocks finds the other block devices that show the blocks of
// device name (majmin): loop devices on the same backing file, the
// block device a loop device reads, and loop devices that read this one.
func (d DeviceInspector) sameBlocks(name, majmin string) []blockDev {
	backing := func(n string) string {
		b, err := os.ReadFile(filepath.Join(d.sys(), "class", "block", n, "loop", "backing_file"))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	mine := ""
	if b := backing(name); b != "" {
		mine = fileID(b)
	}
	self := "blk:" + majmin
	var out []blockDev
	ents, _ := os.ReadDir(filepath.Join(d.sys(), "class", "block"))
	for _, e := range ents {
		n := e.Name()
		if n == name {
			continue
		}
		b := backing(n)
		if b == "" {
			continue
		}
		mm, err := os.ReadFile(filepath.Join(d.sys(), "class", "block", n, "dev"))
		if err != nil {
			continue
		}
		id := fileID(b)
		switch {
		case mine != "" && id == mine:
			out = append(out, blockDev{name: n, mm: strings.TrimSpace(string(mm)), why: "a loop device on the same backing file, " + b})
		case id == self:
			out = append(out, blockDev{name: n, mm: strings.TrimSpace(string(mm)), why: "a loop device that reads " + name})
		}
	}
	if strings.HasPrefix(mine, "blk:") {
		mm := strings.TrimPrefix(mine, "blk:")
		if link, err := os.Readlink(filepath.Join(d.sys(), "dev", "block", mm)); err == nil {
			out = append(out, blockDev{name: filepath.Base(link), mm: mm, why: "the device " + name + " reads"})
		}
	}
	return out
}

// mounts scans the mount table of this process and of one process of
// every other mount namespace in sight: a device mounted in a container's
// namespace is not in ours.
func (d DeviceInspector) mounts(fs procfs.FS, numbers map[string]string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(mi []*procfs.MountInfo, where string) {
		for _, m := range mi {
			if name, ok := numbers[m.MajorMinorVer]; ok {
				s := m.MountPoint
				if where != "" {
					s += " (" + where + ")"
				}
				if len(numbers) > 1 {
					s = name + " at " + s
				}
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
	}
	self, err := fs.Self()
	if err != nil {
		return nil, err
	}
	mi, err := self.MountInfo()
	if err != nil {
		return nil, fmt.Errorf("reading %s/self/mountinfo: %w", d.proc(), err)
	}
	add(mi, "")
	selfNS, _ := os.Readlink(filepath.Join(d.proc(), "self", "ns", "mnt"))
	namespaces := map[string]bool{selfNS: true}
	procs, err := fs.AllProcs()
	if err != nil {
		return out, nil // no other namespaces in sight
	}
	for _, p := range procs {
		ns, err := os.Readlink(filepath.Join(d.proc(), strconv.Itoa(p.PID), "ns", "mnt"))
		if err != nil || namespaces[ns] {
			continue
		}
		namespaces[ns] = true
		mi, err := p.MountInfo()
		if err != nil {
			continue // the process ended, or its table is not readable
		}
		add(mi, fmt.Sprintf("in the mount namespace of pid %d", p.PID))
	}
	return out, nil
}

// DeviceCheck says what a run will do to a device.
type DeviceCheck struct {
	Device      string
	Writes      bool
	Destructive bool
	Force       bool
	Inspector   DeviceInspector
}

// DeviceLease is a device that passed CheckDevice. Release closes the
// exclusive handle that keeps the kernel from mounting, stacking or
// swapping on the device while iolens writes to it.
type DeviceLease struct {
	Use DeviceUse
	// ReadOnly is set when the device is in use: only reads may run, and
	// fio runs with --readonly.
	ReadOnly bool
	Note     string
	fd       int
}

// Release closes the exclusive handle, if one is held.
func (l *DeviceLease) Release() error {
	if l == nil || l.fd < 0 {
		return nil
	}
	err := unix.Close(l.fd)
	l.fd = -1
	return err
}

// checkDevice runs for every device run, whatever its tests: it checks
// that dev is a block device, finds its mounts, holders and swap areas,
// and opens it with O_EXCL, which the kernel answers with EBUSY when the
// device is mounted, held or swap (in any namespace). Writes need
// --destructive, a device in use is never written (not even with
// --force), and one that carries a file system, a partition table or
// partitions needs --force. Reads of a device in use are allowed, with a
// note: fio then runs with --readonly.
func checkDevice(ctx context.Context, c DeviceCheck) (*DeviceLease, error) {
	refuse := func(reason, hint string) error { return &DeviceRefusal{Device: c.Device, Reason: reason, hint: hint} }
	var st unix.Stat_t
	if err := unix.Stat(c.Device, &st); err != nil {
		return nil, &hint.Error{Err: fmt.Errorf("%s: %w", c.Device, err), Advice: "check the device's path: lsblk lists the block devices"}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return nil, refuse("it is not a block device", "pass a block device such as /dev/sdb, or a directory as the DIR argument")
	}
	mm := fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
	name := c.Device
	if real, err := filepath.EvalSymlinks(c.Device); err == nil {
		name = real
	}
	use, err := c.Inspector.Inspect(mm, filepath.Base(name))
	if err != nil {
		return nil, err
	}
	lease := &DeviceLease{Use: use, fd: -1}
	fd, err := unix.Open(c.Device, unix.O_RDONLY|unix.O_EXCL|unix.O_CLOEXEC, 0)
	busy := errors.Is(err, unix.EBUSY)
	if err != nil && !busy {
		return nil, fmt.Errorf("opening %s: %w", c.Device, err)
	}
	if err == nil {
		lease.fd = fd
	}
	inUse := use.String()
	if inUse == "" && busy {
		inUse = "the kernel reports it busy (mounted, held or used as swap, perhaps in a mount namespace iolens cannot see)"
	}
	if use.Unchecked != "" {
		lease.Note = fmt.Sprintf("%s: could not check %s; the exclusive open still refuses a mounted, held or swap device", c.Device, use.Unchecked)
	}
	if !c.Writes {
		if inUse != "" {
			lease.ReadOnly = true
			lease.Note = strings.TrimPrefix(lease.Note+"; ", "; ") + fmt.Sprintf("%s is in use (%s): only reads run, and fio runs with --readonly", c.Device, inUse)
		}
		return lease, nil
	}
	fail := func(err error) (*DeviceLease, error) {
		_ = lease.Release()
		return nil, err
	}
	if !c.Destructive {
		return fail(refuse("the suite has write tests, which destroy the data on the device",
			"pass --destructive if the device holds nothing you need, or run a read-only suite (--job with read tests)"))
	}
	if inUse != "" {
		return fail(refuse("it is in use: "+inUse,
			"unmount it, remove what is stacked on it (LVM, dm-crypt, md) or swapoff it first; iolens never writes to a device in use, even with --force"))
	}
	if c.Force {
		return lease, nil
	}
	if sig := deviceSignature(ctx, c.Device, c.Inspector.sys()); sig != "" {
		return fail(refuse("it carries "+sig,
			"check that nothing on it is needed, then add --force (data on the device will be overwritten)"))
	}
	return lease, nil
}

// deviceSignature names what blkid finds on the device (a file system, a
// partition table, RAID or LVM metadata), or returns "" when it finds
// nothing. Partitions known to the kernel count too.
func deviceSignature(ctx context.Context, dev, sysRoot string) string {
	if real, err := filepath.EvalSymlinks(dev); err == nil {
		name := filepath.Base(real)
		if ents, err := os.ReadDir(filepath.Join(sysRoot, "class", "block", name)); err == nil {
			for _, e := range ents {
				if _, err := os.Stat(filepath.Join(sysRoot, "class", "block", name, e.Name(), "partition")); err == nil {
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
