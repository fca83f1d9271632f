package emulate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/iolens/iolens/internal/hint"
	"golang.org/x/sys/unix"
)

// A state file is input like any other: anyone who can edit it could
// otherwise make root unmount, delete or kill what it names. So every path
// of a disk is derived from the state root and the disk's name, a
// directory is only ever deleted when it carries the marker create wrote
// first, and a pid is only signalled when /proc shows it is that disk's
// own iolens daemon, started when the state file says.

// ErrUnsafeDir is wrapped by the errors about a state directory iolens
// will not trust.
var ErrUnsafeDir = errors.New("unsafe state directory")

// checkOwned refuses a directory that another user owns or that others
// can write to: they could plant a disk, a marker or a state file in it.
// Root's own directories are trusted too (only root could have made
// them). Symlinks are refused where follow is false.
func checkOwned(path string, follow bool) error {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	fi, err := stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &hint.Error{Err: fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, path),
			Advice: "point --state-dir (or $IOLENS_EMULATE_DIR) at a directory of your own"}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%w: cannot read the owner of %s", ErrUnsafeDir, path)
	}
	if uid := uint32(os.Geteuid()); st.Uid != uid && st.Uid != 0 {
		return &hint.Error{Err: fmt.Errorf("%w: %s belongs to uid %d, not to you (uid %d) or root", ErrUnsafeDir, path, st.Uid, uid),
			Advice: "use a state directory of your own: --state-dir DIR"}
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return &hint.Error{Err: fmt.Errorf("%w: %s is writable by others (mode %v)", ErrUnsafeDir, path, fi.Mode().Perm()),
			Advice: "remove their write access (chmod go-w " + path + "), or use another --state-dir"}
	}
	return nil
}

// checkStateRoot vets the state root before anything in it is read.
func checkStateRoot(root string) error { return checkOwned(root, true) }

// hasMarker says whether dir carries the marker of the disk called name.
func hasMarker(dir, name string) bool {
	f, err := openRegular(filepath.Join(dir, markerName), os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 257))
	return err == nil && string(b) == marker(name)
}

// ErrNotRegular is wrapped by the errors about a state directory's file
// that is not a regular file (a FIFO, a device, a symlink).
var ErrNotRegular = errors.New("not a regular file")

// openRegular opens path (os.OpenFile's flag and perm) only if it is a
// regular file, without following a symlink and without blocking: a FIFO
// planted in a state directory would otherwise hang the open, for a
// reader until a writer comes and for a writer until a reader does.
func openRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := unix.Open(path, flag|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENXIO) {
			err = fmt.Errorf("%w (a symlink or a FIFO)", ErrNotRegular)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	// O_NONBLOCK means nothing to a regular file; clear it all the same.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func writeMarker(dir, name string) error {
	f, err := os.OpenFile(filepath.Join(dir, markerName), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(marker(name))
	return errors.Join(err, f.Close())
}

// derived returns the disk called name under root with every path set
// from those two alone.
func derived(root, name string) *Disk {
	dir := diskDir(root, name)
	return &Disk{Schema: StateSchema, Name: name, Dir: dir, Mount: filepath.Join(dir, mountName),
		Backing: filepath.Join(dir, backingName), EventLog: filepath.Join(dir, eventsName)}
}

var loopRE = regexp.MustCompile(`^/dev/loop[0-9]{1,6}$`)

// ErrBadState is wrapped by the errors about a state file iolens refuses.
var ErrBadState = errors.New("invalid state file")

// decodeState parses the state file of the disk called name under root.
// What the file says of paths is not taken: they are derived again, and
// a cgroup, device or pid that does not fit is dropped (the disk then
// shows as broken, and teardown finds its parts by their derived names).
func decodeState(b []byte, root, name string) (*Disk, error) {
	if len(b) > maxStateBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrBadState, len(b), maxStateBytes)
	}
	var d Disk
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadState, err)
	}
	if d.Schema != StateSchema {
		return nil, fmt.Errorf("%w: schema %q, want %q", ErrBadState, d.Schema, StateSchema)
	}
	if d.Name != name || d.Spec.Name != name {
		return nil, fmt.Errorf("%w: it names disk %q, its directory is %q", ErrBadState, d.Name, name)
	}
	want := derived(root, name)
	d.Dir, d.Mount, d.Backing, d.EventLog = want.Dir, want.Mount, want.Backing, want.EventLog
	d.Spec.Dir = root
	if d.Spec.RAM {
		d.Backing = filepath.Join(d.Dir, ramMountName, backingName)
	}
	if d.Spec.ThrottleAt == ThrottleDevice && d.Spec.Latency == nil {
		d.Spec.Latency = &Latency{} // as create writes it: the throttle lives in the layer
	}
	if d.Spec.Latency != nil {
		d.LatencyMount = filepath.Join(d.Dir, latencyMountName)
	} else {
		d.LatencyMount = ""
	}
	if err := d.Spec.withDefaults().Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadState, err)
	}
	if !loopRE.MatchString(d.Device) {
		d.Device, d.MajMin = "", ""
	}
	h := Hierarchy{Version: d.CgroupVersion, Mount: d.CgroupMount}
	if (h.Version != 1 && h.Version != 2) || !filepath.IsAbs(h.Mount) || filepath.Clean(h.Mount) != h.Mount ||
		d.Cgroup != cgroupFor(h, cgroupLeaf(d.Dir, name)).Dir {
		d.Cgroup, d.CgroupVersion, d.CgroupMount = "", 0, ""
	}
	if d.ControllerPID < 0 || d.ControllerPID > 1<<22 {
		d.ControllerPID, d.ControllerStart = 0, 0
	}
	if d.FusePID < 0 || d.FusePID > 1<<22 {
		d.FusePID, d.FuseStart = 0, 0
	}
	return &d, nil
}

// inheritNothing marks every descriptor above stderr close-on-exec, so
// that a daemon started next gets stdin, stdout and stderr only: not what
// this process inherited from its caller (a lock file, a pipe's end),
// which the daemon would otherwise hold open for its whole life. Go opens
// its own files close-on-exec already.
func inheritNothing() {
	if unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// logTail is the end of a daemon's log (at most 2 KiB), for an error.
func logTail(path string) string {
	b, _ := readBounded(path)
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	return string(b)
}

// readBounded reads at most maxStateBytes+1 of path, so a huge file is
// refused without being loaded; anything but a regular file is refused
// without blocking (ErrBadState).
func readBounded(path string) ([]byte, error) {
	f, err := openRegular(path, os.O_RDONLY, 0)
	if errors.Is(err, ErrNotRegular) {
		return nil, fmt.Errorf("%w: %w", ErrBadState, err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxStateBytes+1))
}

// daemonArgs is the command line (after the executable) of a disk's
// daemon of the given kind ("controller" or "latency"); iolens starts
// them with exactly this and checks it before signalling one.
func daemonArgs(kind, root, name string) []string {
	return []string{"emulate", kind, "--state-dir", root, name}
}

// isDaemon says whether pid is the running daemon of kind for the disk
// called name under root: its start time is the one recorded and its
// command line is the one iolens gave it. A pid reused by another
// process, or one a state file was edited to name, fails both.
func isDaemon(pid int, start uint64, kind, root, name string) bool {
	if pid <= 1 || start == 0 || procStart(pid) != start {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	want := daemonArgs(kind, root, name)
	if len(args) != len(want)+1 {
		return false
	}
	for i, w := range want {
		if args[i+1] != w {
			return false
		}
	}
	return true
}
