package cloudmeta

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/iolens/iolens/internal/units"
)

// tree reads the sys and dev trees that tie a cloud disk to a kernel
// device. Every read is small and capped: these are kernel attributes,
// but a fixture or a container's bind mount may hold anything.
type tree struct {
	sys, dev string
}

// maxBlockDevices bounds a directory scan of /sys/block.
const maxBlockDevices = 4096

// kernelName accepts a block device name as the kernel gives it
// ("sdc", "nvme1n1", "vdb", "xvdf", "dm-0").
func kernelName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// link resolves a udev symlink under the dev root (rel such as
// "disk/azure/scsi1/lun2") to the kernel name it points at.
func (t tree) link(rel string) (string, bool) {
	target, err := os.Readlink(filepath.Join(t.dev, rel))
	if err != nil {
		return "", false
	}
	n := filepath.Base(target)
	return n, kernelName(n)
}

// blocks lists /sys/block.
func (t tree) blocks() []string {
	ents, err := os.ReadDir(filepath.Join(t.sys, "block"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if len(out) == maxBlockDevices {
			break
		}
		if kernelName(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// attr reads a small sysfs attribute, trimmed; "" when absent.
func (t tree) attr(parts ...string) string {
	f, err := os.Open(filepath.Join(append([]string{t.sys}, parts...)...))
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// sizeBytes is a block device's size from /sys/block/NAME/size (in 512
// byte sectors whatever the logical block size); 0 when unknown.
func (t tree) sizeBytes(dev string) int64 {
	n, ok := count(t.attr("block", dev, "size"), 1<<53)
	if !ok {
		return 0
	}
	return n * 512
}

// addSize records a disk's size from sysfs when the metadata gave none.
func (t tree) addSize(d *Disk) {
	if d.SizeBytes > 0 || d.Device == "" {
		return
	}
	if b := t.sizeBytes(d.Device); b > 0 {
		d.SizeBytes = b
		d.Facts = append(d.Facts, Fact{Key: "size_bytes", Value: units.Exact(float64(b)), Source: "sysfs /sys/block/" + d.Device + "/size"})
	}
}

// scsiAddress returns a SCSI disk's H:C:T:L address (from the name of
// its device link) and the directory the link resolves to.
func (t tree) scsiAddress(dev string) (hctl [4]int64, real string, ok bool) {
	real, err := filepath.EvalSymlinks(filepath.Join(t.sys, "block", dev, "device"))
	if err != nil {
		return hctl, "", false
	}
	parts := strings.Split(filepath.Base(real), ":")
	if len(parts) != 4 {
		return hctl, "", false
	}
	for i, p := range parts {
		v, ok := count(p, 1<<32)
		if !ok {
			return hctl, "", false
		}
		hctl[i] = v
	}
	return hctl, real, true
}

// vmbusID walks up from a device directory to the Hyper-V VMBus device
// it hangs off and returns that device's device_id ("{f8b3781b-...}"),
// lowercased; "" when there is none within the sys root.
func (t tree) vmbusID(dir string) string {
	root, err := filepath.EvalSymlinks(t.sys)
	if err != nil {
		return ""
	}
	for i := 0; i < 16 && strings.HasPrefix(dir, root+string(filepath.Separator)); i++ {
		if b, err := os.ReadFile(filepath.Join(dir, "device_id")); err == nil && len(b) < 128 {
			return strings.ToLower(strings.TrimSpace(string(b)))
		}
		dir = filepath.Dir(dir)
	}
	return ""
}

// devLink returns "/dev/" + rel for a DeviceHow text.
func devLink(rel string) string { return "/dev/" + rel }
