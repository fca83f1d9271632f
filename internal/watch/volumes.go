package watch

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/prometheus/procfs"
)

// Volume is a persistent volume in use on the node, as the cluster
// describes it: enough to find the disk behind it here and to say which
// disk it is expected to be.
type Volume struct {
	// Name is the PersistentVolume's name. The kubelet mounts a pod's
	// volume at /var/lib/kubelet/pods/<uid>/volumes/<plugin>/<name>
	// (with a /mount suffix for CSI).
	Name string
	// Path is the node directory of a local or hostPath volume, which
	// is bind-mounted into the pod rather than mounted by the kubelet.
	Path string
	// Class is its storage class, Expect the catalog disk (or
	// key=value figures) it is expected to be, "" when unknown.
	Class  string
	Expect string
}

// VolumeDevices finds the whole disk behind each volume from the host's
// mount table (init's mountinfo under procRoot): the mount whose path
// holds the volume's name after a volumes/<plugin>/ segment, or, for a
// local or hostPath volume, the mount that holds its path. Volumes not
// mounted on this node, or not on a block device (NFS, tmpfs), are left
// out. The result maps volume names to kernel device names.
func VolumeDevices(procRoot, sysRoot string, vols []Volume) (map[string]string, error) {
	mounts, err := hostMounts(procRoot)
	if err != nil {
		return nil, err
	}
	sb := sysBlock{sysRoot}
	byName := map[string]bool{}
	for _, v := range vols {
		byName[v.Name] = true
	}
	out := map[string]string{}
	device := func(m *procfs.MountInfo) (string, bool) {
		if strings.HasPrefix(m.MajorMinorVer, "0:") {
			return "", false // not a block device
		}
		name, _, ok := sb.disk(m.MajorMinorVer)
		return name, ok
	}
	for _, m := range mounts {
		name := kubeletVolume(m.MountPoint)
		if name == "" || !byName[name] {
			continue
		}
		if dev, ok := device(m); ok {
			out[name] = dev
		}
	}
	for _, v := range vols {
		if _, ok := out[v.Name]; ok || v.Path == "" || !filepath.IsAbs(v.Path) {
			continue
		}
		// The mount holding the path: the longest mount point that is the
		// path or one of its parents (the last one wins at equal length,
		// as a later mount hides an earlier one).
		var best *procfs.MountInfo
		p := filepath.Clean(v.Path)
		for _, m := range mounts {
			mp := filepath.Clean(m.MountPoint)
			if p != mp && !strings.HasPrefix(p, strings.TrimSuffix(mp, "/")+"/") {
				continue
			}
			if best == nil || len(mp) >= len(filepath.Clean(best.MountPoint)) {
				best = m
			}
		}
		if best != nil {
			if dev, ok := device(best); ok {
				out[v.Name] = dev
			}
		}
	}
	return out, nil
}

// kubeletVolume returns the volume name of a kubelet pod volume mount
// point (.../pods/<uid>/volumes/kubernetes.io~csi/<name>/mount), "" for
// other mounts.
func kubeletVolume(mp string) string {
	parts := strings.Split(strings.Trim(mp, "/"), "/")
	for i := 0; i+3 < len(parts); i++ {
		if parts[i] == "pods" && parts[i+2] == "volumes" && strings.Contains(parts[i+3], "~") && i+4 < len(parts) {
			return parts[i+4]
		}
	}
	return ""
}

// hostMounts reads the host's mount table as init sees it, else this
// process's.
func hostMounts(procRoot string) ([]*procfs.MountInfo, error) {
	fs, err := procfs.NewFS(orDefault(procRoot, "/proc"))
	if err != nil {
		return nil, err
	}
	var last error
	for _, pid := range []int{1, 0} {
		var p procfs.Proc
		if pid == 0 {
			p, err = fs.Self()
		} else {
			p, err = fs.Proc(pid)
		}
		if err == nil {
			var ms []*procfs.MountInfo
			if ms, err = p.MountInfo(); err == nil {
				return ms, nil
			}
		}
		last = err
	}
	return nil, fmt.Errorf("reading mounts: %w", last)
}

// NodeExpectations pairs each device with the disk its volumes are
// expected to be. A device that carries volumes of different expected
// disks (local volumes sharing a node disk) gets none: no one disk's
// ceiling is right for it. about says, per device, which volumes it
// carries, for the log.
func NodeExpectations(vols []Volume, devs map[string]string) (expect, about map[string]string) {
	expect, about = map[string]string{}, map[string]string{}
	specs := map[string]map[string]bool{}
	names := map[string][]string{}
	for _, v := range vols {
		dev, ok := devs[v.Name]
		if !ok {
			continue
		}
		if specs[dev] == nil {
			specs[dev] = map[string]bool{}
		}
		specs[dev][v.Expect] = true
		n := "PV " + v.Name
		if v.Class != "" {
			n += " (class " + v.Class + ")"
		}
		names[dev] = append(names[dev], n)
	}
	for dev, s := range specs {
		sort.Strings(names[dev])
		about[dev] = strings.Join(names[dev], ", ")
		if len(s) == 1 {
			for spec := range s {
				if spec != "" {
					expect[dev] = spec
				}
			}
		}
	}
	return expect, about
}
