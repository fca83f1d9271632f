package diskstats

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Device is a block device that carries a target's IO.
type Device struct {
	Name string // kernel name, as in /proc/diskstats ("vda1", "loop0", "dm-0")
	// MajMin is "major:minor".
	MajMin string
	// Role says how the device relates to the target: "direct" (the
	// filesystem's device), "parent" (the disk of a partition), "backing"
	// (the disk under a loop device's backing file) or "slave" (a member
	// of a dm or md device).
	Role string
}

// Mount describes the filesystem a path lives on.
type Mount struct {
	MountPoint string
	FSType     string
	Source     string
	Options    string
	MajMin     string
}

// Resolution is what lies under a path.
type Resolution struct {
	Mount   Mount
	Devices []Device
}

// Primary is the first device, the one the filesystem sits on; empty when
// no block device backs the path (tmpfs, overlay without a device).
func (r Resolution) Primary() string {
	if len(r.Devices) == 0 {
		return ""
	}
	return r.Devices[0].Name
}

// Names lists every device name.
func (r Resolution) Names() []string {
	var out []string
	for _, d := range r.Devices {
		out = append(out, d.Name)
	}
	return out
}

// Resolver finds block devices. The roots are values so tests can point
// them at fixture trees; Stat is replaceable for the same reason.
type Resolver struct {
	ProcRoot string // default /proc
	SysRoot  string // default /sys
	// Stat returns the device a path's file system lives on (st_dev) and,
	// for a block special file, the device it is (st_rdev).
	Stat func(path string) (dev, rdev uint64, isBlock bool, err error)
}

func (r Resolver) proc() string {
	if r.ProcRoot == "" {
		return "/proc"
	}
	return r.ProcRoot
}

func (r Resolver) sys() string {
	if r.SysRoot == "" {
		return "/sys"
	}
	return r.SysRoot
}

func (r Resolver) stat(path string) (uint64, uint64, bool, error) {
	if r.Stat != nil {
		return r.Stat(path)
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, 0, false, err
	}
	return st.Dev, st.Rdev, st.Mode&unix.S_IFMT == unix.S_IFBLK, nil
}

func majmin(dev uint64) string { return fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev)) }

// Resolve finds the mount and the block devices behind path: a file or
// directory (through its file system's st_dev and mountinfo) or a block
// device node. Loop devices lead to their backing file's devices, dm and
// md devices to their slaves, partitions to their disk.
func (r Resolver) Resolve(path string) (Resolution, error) {
	dev, rdev, isBlock, err := r.stat(path)
	if err != nil {
		return Resolution{}, fmt.Errorf("resolving %s: %w", path, err)
	}
	var res Resolution
	if isBlock {
		name, err := r.nameOf(majmin(rdev))
		if err != nil {
			return res, err
		}
		res.Devices = r.expand(name, majmin(rdev), "direct", map[string]bool{})
		return res, nil
	}
	m, err := r.mountFor(path, majmin(dev))
	if err != nil {
		return res, err
	}
	res.Mount = m
	if unix.Major(dev) == 0 {
		// Anonymous device (btrfs, overlay, tmpfs, NFS): try the mount
		// source if it is a device node.
		if strings.HasPrefix(m.Source, "/dev/") {
			if _, srdev, ok, err := r.stat(m.Source); err == nil && ok {
				if name, err := r.nameOf(majmin(srdev)); err == nil {
					res.Devices = r.expand(name, majmin(srdev), "direct", map[string]bool{})
				}
			}
		}
		return res, nil
	}
	name, err := r.nameOf(majmin(dev))
	if err != nil {
		return res, err
	}
	res.Devices = r.expand(name, majmin(dev), "direct", map[string]bool{})
	return res, nil
}

// nameOf maps major:minor to a kernel device name through /sys/dev/block.
func (r Resolver) nameOf(mm string) (string, error) {
	link, err := os.Readlink(filepath.Join(r.sys(), "dev", "block", mm))
	if err != nil {
		return "", fmt.Errorf("no block device %s in %s/dev/block: %w", mm, r.sys(), err)
	}
	return filepath.Base(link), nil
}

// sysDir is the device's directory under /sys/dev/block, which exists for
// disks and partitions alike.
func (r Resolver) sysDir(mm string) string { return filepath.Join(r.sys(), "dev", "block", mm) }

func (r Resolver) expand(name, mm, role string, seen map[string]bool) []Device {
	return r.expandOpt(name, mm, role, seen, true)
}

// expandOpt is expand; backing says whether to follow a loop device to
// the disk under its backing file.
func (r Resolver) expandOpt(name, mm, role string, seen map[string]bool, backing bool) []Device {
	if seen[name] {
		return nil
	}
	seen[name] = true
	out := []Device{{Name: name, MajMin: mm, Role: role}}
	dir := r.sysDir(mm)
	// A partition: add its disk.
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			parent := filepath.Base(filepath.Dir(real))
			if pmm, err := readTrim(filepath.Join(filepath.Dir(real), "dev")); err == nil {
				out = append(out, r.expandOpt(parent, pmm, "parent", seen, backing)...)
			}
		}
	}
	// A loop device: add whatever holds its backing file.
	if b, err := readTrim(filepath.Join(dir, "loop", "backing_file")); backing && err == nil && b != "" {
		if bdev, _, _, err := r.stat(b); err == nil && unix.Major(bdev) != 0 {
			if bname, err := r.nameOf(majmin(bdev)); err == nil {
				out = append(out, r.expand(bname, majmin(bdev), "backing", seen)...)
			}
		}
	}
	// dm and md devices: add their members.
	if ents, err := os.ReadDir(filepath.Join(dir, "slaves")); err == nil {
		for _, e := range ents {
			smm, err := readTrim(filepath.Join(dir, "slaves", e.Name(), "dev"))
			if err != nil {
				continue
			}
			out = append(out, r.expandOpt(e.Name(), smm, "slave", seen, backing)...)
		}
	}
	return out
}

// mountFor finds the mount of path: the entry with the file's st_dev whose
// mount point is the longest prefix of the path.
func (r Resolver) mountFor(path, mm string) (Mount, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Mount{}, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	fs, err := procfs.NewFS(r.proc())
	if err != nil {
		return Mount{}, err
	}
	self, err := fs.Self()
	if err != nil {
		return Mount{}, fmt.Errorf("reading %s/self: %w", r.proc(), err)
	}
	mounts, err := self.MountInfo()
	if err != nil {
		return Mount{}, fmt.Errorf("reading mountinfo: %w", err)
	}
	var best *procfs.MountInfo
	for _, m := range mounts {
		// A mount point is absolute; a table with an empty one (a hostile
		// or corrupt mountinfo) would otherwise contain every path.
		if m.MajorMinorVer != mm || !filepath.IsAbs(m.MountPoint) || !under(abs, m.MountPoint) {
			continue
		}
		if best == nil || len(m.MountPoint) >= len(best.MountPoint) {
			best = m
		}
	}
	if best == nil {
		return Mount{}, errors.New("no mount found for " + abs + " (device " + mm + ")")
	}
	return Mount{MountPoint: best.MountPoint, FSType: best.FSType, Source: best.Source, Options: joinOpts(best.Options), MajMin: mm}, nil
}

func under(path, mp string) bool {
	if mp == "/" {
		return true
	}
	return path == mp || strings.HasPrefix(path, mp+"/")
}

func joinOpts(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != "" {
			k += "=" + v
		}
		keys = append(keys, k)
	}
	sortStrings(keys)
	return strings.Join(keys, ",")
}

func readTrim(p string) (string, error) {
	b, err := os.ReadFile(p)
	return strings.TrimSpace(string(b)), err
}

// imageFS are read-only image file systems (snaps, ISO images) that
// loop devices mount: they are not disks someone meant to test.
var imageFS = map[string]bool{"squashfs": true, "iso9660": true, "erofs": true, "cramfs": true, "udf": true}

// OtherDisks lists the disks, other than the ones under res, that carry
// a mounted file system ("vdb at /mnt/data"), one entry a disk. A
// partition or logical volume of res's disk is the same disk; a loop
// device is a disk of its own, whatever file backs it.
func (r Resolver) OtherDisks(res Resolution) []string {
	mine := map[string]bool{}
	if len(res.Devices) > 0 {
		d := res.Devices[0]
		for _, x := range r.expandOpt(d.Name, d.MajMin, d.Role, map[string]bool{}, false) {
			mine[x.Name] = true
		}
	}
	fs, err := procfs.NewFS(r.proc())
	if err != nil {
		return nil
	}
	self, err := fs.Self()
	if err != nil {
		return nil
	}
	mounts, err := self.MountInfo()
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range mounts {
		if imageFS[m.FSType] || strings.HasPrefix(m.MajorMinorVer, "0:") || !filepath.IsAbs(m.MountPoint) {
			continue
		}
		name, err := r.nameOf(m.MajorMinorVer)
		if err != nil || seen[name] {
			continue
		}
		seen[name] = true
		same := false
		disk := name
		for i, d := range r.expandOpt(name, m.MajorMinorVer, "direct", map[string]bool{}, false) {
			same = same || mine[d.Name]
			if i == 1 && d.Role == "parent" {
				disk = d.Name // a partition's disk
			}
		}
		if !same && !seen["disk:"+disk] {
			seen["disk:"+disk] = true
			out = append(out, disk+" at "+m.MountPoint)
		}
	}
	return out
}
