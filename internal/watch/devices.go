package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/diskstats"
	"github.com/iolens/iolens/internal/result"
)

// sysBlock is the view of /sys a watch needs: names, numbers, parents and
// the rotational flag of block devices.
type sysBlock struct{ root string }

func (sb sysBlock) sys() string {
	if sb.root == "" {
		return "/sys"
	}
	return sb.root
}

// disk returns the whole disk of a partition, or the device itself.
func (sb sysBlock) disk(mm string) (name, diskMM string, ok bool) {
	dir := filepath.Join(sb.sys(), "dev", "block", mm)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", "", false
	}
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		parent := filepath.Dir(real)
		if pmm, err := os.ReadFile(filepath.Join(parent, "dev")); err == nil {
			return filepath.Base(parent), strings.TrimSpace(string(pmm)), true
		}
	}
	return filepath.Base(real), mm, true
}

// family returns, for each device (kernel name and major:minor), the
// devices that carry its IO or whose IO it carries: the disk of a
// partition, the disks under a stacked device (dm, md: its slaves, all
// the way down), and any of the given devices tied to those. Their busy
// time and throttle caps are its own, not another disk's.
func (sb sysBlock) family(devs []result.WatchDeviceInfo) map[string]map[string]bool {
	below := map[string]map[string]bool{}
	for _, d := range devs {
		set := map[string]bool{}
		if disk, _, ok := sb.disk(d.MajMin); ok && disk != d.Name {
			set[disk] = true
		}
		classes := filepath.Join(sb.sys(), "class", "block")
		for _, n := range append([]string{d.Name}, keys(set)...) {
			for _, u := range diskstats.Under(classes, n) {
				set[u] = true
			}
		}
		below[d.Name] = set
	}
	out := map[string]map[string]bool{}
	for _, a := range devs {
		set := map[string]bool{}
		for n := range below[a.Name] {
			set[n] = true
		}
		for _, b := range devs {
			if a.Name == b.Name {
				continue
			}
			tied := below[a.Name][b.Name] || below[b.Name][a.Name]
			for n := range below[b.Name] {
				tied = tied || below[a.Name][n]
			}
			if tied {
				set[b.Name] = true
			}
		}
		out[a.Name] = set
	}
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// info describes a device by kernel name.
func (sb sysBlock) info(name string) (result.WatchDeviceInfo, error) {
	d := result.WatchDeviceInfo{Name: name}
	dir := filepath.Join(sb.sys(), "class", "block", name)
	mm, err := os.ReadFile(filepath.Join(dir, "dev"))
	if err != nil {
		return d, fmt.Errorf("no block device %q in %s/class/block", name, sb.sys())
	}
	d.MajMin = strings.TrimSpace(string(mm))
	// Partitions have no queue directory of their own: ask the disk.
	q := filepath.Join(dir, "queue", "rotational")
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		q = filepath.Join(dir, "..", "queue", "rotational")
	}
	rot, err := os.ReadFile(q)
	d.Parallel = err != nil || strings.TrimSpace(string(rot)) == "0"
	return d, nil
}

// skippedByDefault are devices nobody wants to see unless they ask.
func skippedByDefault(name string) bool {
	for _, p := range []string{"loop", "ram", "zram", "nbd"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// DefaultDevices lists the disks backing a mounted filesystem, as the
// host's init process sees mounts (so that a container given the host's
// /proc sees the host's disks). Partitions give way to their disk, and
// loop and ram devices are skipped. Mounts maps each device to its mount
// points.
func DefaultDevices(procRoot, sysRoot string) ([]string, map[string][]string, error) {
	mounts, err := hostMounts(procRoot)
	if err != nil {
		return nil, nil, err
	}
	sb := sysBlock{sysRoot}
	byDev := map[string][]string{}
	for _, m := range mounts {
		if strings.HasPrefix(m.MajorMinorVer, "0:") {
			continue
		}
		name, _, ok := sb.disk(m.MajorMinorVer)
		if !ok || skippedByDefault(name) {
			continue
		}
		if !contains(byDev[name], m.MountPoint) {
			byDev[name] = append(byDev[name], m.MountPoint)
		}
	}
	names := make([]string, 0, len(byDev))
	for n := range byDev {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, byDev, nil
}

// ResolveArgs turns the command line's DEVICE|DIR arguments into device
// names: a kernel name ("vdb"), a device node ("/dev/vdb") or a directory
// (the disks behind its filesystem, as iolens run finds them).
func ResolveArgs(args []string, procRoot, sysRoot string) ([]string, error) {
	sb := sysBlock{sysRoot}
	var out []string
	add := func(n string) {
		if !contains(out, n) {
			out = append(out, n)
		}
	}
	for _, a := range args {
		if !strings.Contains(a, "/") {
			if _, err := sb.info(a); err != nil {
				return nil, err
			}
			add(a)
			continue
		}
		r := diskstats.Resolver{ProcRoot: procRoot, SysRoot: sysRoot}
		res, err := r.Resolve(a)
		if err != nil {
			return nil, err
		}
		if len(res.Devices) == 0 {
			return nil, fmt.Errorf("%s is on %s (%s), which no block device backs", a, res.Mount.MountPoint, res.Mount.FSType)
		}
		// With a partition the disk carries the limits, so watch the disk.
		// The disk under a loop device's backing file is another story.
		devs := res.Devices
		for i := 0; i < len(devs); i++ {
			if devs[i].Role == "backing" {
				break
			}
			if i+1 < len(devs) && devs[i+1].Role == "parent" {
				add(devs[i+1].Name)
				i++
				continue
			}
			add(devs[i].Name)
		}
	}
	return out, nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
