package k8s

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// node-check runs as root with a directory of the node mounted. The
// directory is checked before anything is created, and the agent, which
// runs the tests (job files included), sees only a subdirectory made for
// the run: the node-dir sidecar creates it, marks it, and removes it when
// the kubelet stops the sidecar.

// systemTrees are host directories whose whole tree node-check refuses:
// the kernel's views, the boot files, the system's programs and
// configuration, and the node's Kubernetes state: the kubelet's (every
// pod's volumes and secrets) and the container runtimes' (images and
// containers' writable layers), which a full disk or a stray write would
// take down with every pod of the node.
var systemTrees = []string{"/proc", "/sys", "/dev", "/boot", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr", "/run", "/var/run",
	"/var/lib/kubelet", "/var/lib/containerd", "/var/lib/docker"}

// systemRoots are directories node-check refuses themselves, though a
// subdirectory of theirs (/var/lib/etcd) is what it is for. /mnt is not
// one: clouds mount a VM's local disk there.
var systemRoots = []string{"/", "/var", "/var/lib", "/home", "/root", "/opt", "/srv", "/tmp", "/var/tmp"}

// HostPathError says why a node-check path is refused.
type HostPathError struct {
	Path   string
	Reason string
}

func (e *HostPathError) Error() string { return fmt.Sprintf("--path %q: %s", e.Path, e.Reason) }

// Hint says what node-check wants instead.
func (e *HostPathError) Hint() string {
	return "give the directory of the service to test, such as /var/lib/etcd or a data mount like /mnt/disks/ssd0; node-check works in a subdirectory of its own there"
}

// CheckHostPath refuses node-check paths that are not absolute and clean,
// that are the root or a system directory, or that lie in a system tree.
func CheckHostPath(p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return &HostPathError{Path: p, Reason: "must be absolute"}
	case strings.ContainsAny(p, "\x00\n"):
		return &HostPathError{Path: p, Reason: "contains a control character"}
	case path.Clean(p) != p && path.Clean(p)+"/" != p:
		return &HostPathError{Path: p, Reason: "must be clean (no '..', '.', or repeated slashes)"}
	}
	c := path.Clean(p)
	for _, r := range systemRoots {
		if c == r {
			return &HostPathError{Path: p, Reason: "is the root or a system directory; node-check would mount it as root"}
		}
	}
	for _, r := range systemTrees {
		if c == r || strings.HasPrefix(c, r+"/") {
			return &HostPathError{Path: p, Reason: "lies in " + r + ", a system tree"}
		}
	}
	return nil
}

// NodeDirName is the subdirectory of the host path that a node-check
// target works in: one path element, the same on every call, unique per
// run and target, and never longer than a file name may be.
func NodeDirName(runID, target string) string {
	clean := func(s string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(s) {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	id, t := clean(runID), clean(target)
	if id != strings.ToLower(runID) || len(id) > 40 {
		// A run id with other characters, or a long one, is named by its
		// hash, so that two runs never share a directory.
		h := fnv.New64a()
		h.Write([]byte(runID))
		id = fmt.Sprintf("%016x", h.Sum64())
	}
	if len(t) > 16 {
		t = t[:16]
	}
	return "iolens-" + id + "-" + t
}

// nodeDirMarker marks a directory as the node-dir sidecar's own.
const nodeDirMarker = ".iolens-node-check"

func checkDirName(name string) error {
	if !strings.HasPrefix(name, "iolens-") || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." || len(name) > 80 {
		return fmt.Errorf("directory name %q: not one of iolens's", name)
	}
	return nil
}

// PrepareNodeDir creates parent/name for a node-check target, owned by the
// calling user with mode 0700, and marks it. It refuses a directory that
// is already there: it belongs to someone else.
func PrepareNodeDir(parent, name, runID string) error {
	if err := checkDirName(name); err != nil {
		return err
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s already exists: it is not this run's, and is left alone", dir)
		}
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, nodeDirMarker), []byte(runID+"\n"), 0o600); err != nil {
		_ = os.Remove(dir)
		return fmt.Errorf("marking %s: %w", dir, err)
	}
	return nil
}

// NodeDirReady reports whether PrepareNodeDir has made parent/name.
func NodeDirReady(parent, name string) bool {
	if checkDirName(name) != nil {
		return false
	}
	fi, err := os.Lstat(filepath.Join(parent, name, nodeDirMarker))
	return err == nil && fi.Mode().IsRegular()
}

// CheckNodeDir is the sidecar's startup probe: an error until
// PrepareNodeDir has made parent/name.
func CheckNodeDir(parent, name string) error {
	if !NodeDirReady(parent, name) {
		return fmt.Errorf("%s/%s not ready", parent, name)
	}
	return nil
}

// RemoveNodeDir removes parent/name and what the agent left in it, but
// only when the directory carries the marker PrepareNodeDir wrote and is
// a real directory (not a link to elsewhere).
func RemoveNodeDir(parent, name string) error {
	if err := checkDirName(name); err != nil {
		return err
	}
	dir := filepath.Join(parent, name)
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory; left alone", dir)
	}
	if !NodeDirReady(parent, name) {
		return fmt.Errorf("%s has no iolens marker; left alone", dir)
	}
	return os.RemoveAll(dir)
}

// ServeNodeDir is the node-dir sidecar: it prepares the directory, waits
// until ctx ends (the kubelet stops the sidecar once the agent has ended,
// or when the pod is deleted), then removes it.
func ServeNodeDir(ctx context.Context, parent, name, runID string) error {
	if err := PrepareNodeDir(parent, name, runID); err != nil {
		return err
	}
	<-ctx.Done()
	return RemoveNodeDir(parent, name)
}
