package emulate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"golang.org/x/sys/unix"
)

// StateSchema versions the state file.
const StateSchema = "iolens.emulate/v1"

// File names inside a disk's state directory.
const (
	stateName      = "state.json"
	backingName    = "disk.img"
	mountName      = "mnt"
	eventsName     = "events.ndjson"
	statusName     = "status.json"
	controllerLog  = "controller.log"
	defaultRootDir = "/var/lib/iolens/emulate"
	// markerName is the file create writes first into a disk's directory:
	// nothing is deleted from a directory without it.
	markerName = ".iolens-emulated-disk"
	// ramMountName is the tmpfs of a disk whose backing file is in RAM.
	ramMountName = "ram"
	// maxStateBytes bounds what is read of state.json and status.json.
	maxStateBytes = 1 << 20
)

// marker is the content of a disk's marker file.
func marker(name string) string { return "iolens emulated disk " + name + "\n" }

// DefaultDir is where emulated disks keep their state: $IOLENS_EMULATE_DIR
// or /var/lib/iolens/emulate.
func DefaultDir() string {
	if d := os.Getenv("IOLENS_EMULATE_DIR"); d != "" {
		return d
	}
	return defaultRootDir
}

// Disk is an emulated disk, as recorded in its state file.
type Disk struct {
	Schema string `json:"schema"`
	Name   string `json:"name"`
	// Dir is the disk's state directory; everything but the loop device
	// and the cgroup lives in it.
	Dir string `json:"dir"`
	// Mount is the file system to test; EventLog the controller's NDJSON
	// event log.
	Mount    string `json:"mount"`
	EventLog string `json:"event_log"`
	Backing  string `json:"backing"`
	// Device is the loop device (/dev/loopN); MajMin its "major:minor".
	Device   string `json:"device"`
	MajMin   string `json:"majmin"`
	DirectIO bool   `json:"direct_io"`
	// Cgroup is the cgroup directory whose processes are throttled.
	Cgroup        string `json:"cgroup"`
	CgroupVersion int    `json:"cgroup_version"`
	CgroupMount   string `json:"cgroup_mount"`
	// ControllerPID is the controller daemon's pid (0 when the controller
	// runs inside the creating process); ControllerStart its start time in
	// clock ticks since boot, so a reused pid is never signalled.
	ControllerPID   int    `json:"controller_pid"`
	ControllerStart uint64 `json:"controller_start"`
	// LatencyMount is where the latency layer (a FUSE file system) serves
	// the backing file to the loop device, when the disk has one; FusePID
	// and FuseStart identify the daemon serving it (0 when it runs in the
	// creating process).
	LatencyMount string    `json:"latency_mount,omitempty"`
	FusePID      int       `json:"fuse_pid,omitempty"`
	FuseStart    uint64    `json:"fuse_start,omitempty"`
	Spec         Spec      `json:"spec"`
	Created      time.Time `json:"created"`

	inproc *inprocController
	infuse *latencyServer
	// partial: the state file is missing (a crash early in create).
	partial bool
}

func (d *Disk) cg() cgroup {
	return cgroup{Hierarchy: Hierarchy{Version: d.CgroupVersion, Mount: d.CgroupMount}, Dir: d.Cgroup}
}

// root is the state root the disk lives in.
func (d *Disk) root() string { return filepath.Dir(d.Dir) }

// loopBackingFile is what the loop device reads and writes: the latency
// layer's file when there is one, else the backing file itself.
func (d *Disk) loopBackingFile() string {
	if d.LatencyMount != "" {
		return filepath.Join(d.LatencyMount, latencyFileName)
	}
	return d.Backing
}

// CommandPrefix returns argv to put before a command so it runs inside the
// disk's cgroup: a shell moves itself there, then execs the command. Use it
// as runner.Config.CommandPrefix.
func (d *Disk) CommandPrefix() []string {
	procs := d.cg().procsFile()
	if d.Cgroup == "" {
		// No cgroup of its own (a broken disk): a path that does not
		// exist, so the shell fails instead of running the command
		// uncapped or writing where it stands.
		procs = filepath.Join(d.Dir, "no-cgroup", "cgroup.procs")
	}
	return []string{"/bin/sh", "-c", `echo $$ > "$0" && exec "$@"`, procs}
}

// Command builds an exec.Cmd that runs name args inside the disk's cgroup.
func (d *Disk) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	argv := append(d.CommandPrefix(), name)
	return exec.CommandContext(ctx, argv[0], append(argv[1:], args...)...)
}

// Events reads the disk's event log.
func (d *Disk) Events() ([]Event, error) { return ReadEventFile(d.EventLog) }

// Status is what status and ls show about a disk.
type Status struct {
	Disk *Disk `json:"disk"`
	// MountPath is the file system to test.
	MountPath string `json:"mount_path"`
	// Caps are the throttle caps in force: the controller's last
	// snapshot, else the disk's starting caps. 0 means no cap.
	Caps Limits `json:"caps"`
	// Latency is the latency layer's configuration, nil without one.
	Latency *LatencyStatus `json:"latency"`
	// Controller is "running", "stopped" or "in-process".
	Controller string `json:"controller"`
	Mounted    bool   `json:"mounted"`
	LoopOK     bool   `json:"loop_attached"`
	CgroupOK   bool   `json:"cgroup"`
	Procs      []int  `json:"procs"`
	// Model is the controller's last status snapshot, if any.
	Model *State `json:"model,omitempty"`
	// Broken lists what is wrong (after a crash or a reboot).
	Broken []string `json:"broken,omitempty"`
}

// Status inspects the disk's parts.
func (d *Disk) Status() Status {
	st := Status{Disk: d, Controller: "stopped"}
	switch {
	case d.inproc != nil:
		st.Controller = "in-process"
	case d.controllerAlive():
		st.Controller = "running"
	}
	st.Mounted = isMountPoint(d.Mount)
	st.LoopOK = d.Device != "" && loopBacking(d.Device) == d.loopBackingFile()
	st.CgroupOK = d.cg().exists()
	st.Procs, _ = d.cg().procs()
	if b, err := readBounded(filepath.Join(d.Dir, statusName)); err == nil && len(b) <= maxStateBytes {
		if m, err := decodeStatus(b); err == nil {
			st.Model = m
		}
	}
	st.MountPath = d.Mount
	st.Caps = NewModel(d.Spec, time.Now()).Limits()
	if st.Model != nil && st.Controller != "stopped" {
		st.Caps = st.Model.Limits
	}
	if l := d.Spec.Latency; l != nil {
		st.Latency = &LatencyStatus{Mount: d.LatencyMount, Read: describeDist(l.Read), Write: describeDist(l.Write), Flush: describeDist(l.Flush)}
		st.Latency.Serving = isMountPoint(d.LatencyMount)
		if d.FusePID != 0 {
			st.Latency.Serving = st.Latency.Serving && isDaemon(d.FusePID, d.FuseStart, "latency", d.root(), d.Name)
		}
		if !st.Latency.Serving {
			st.Broken = append(st.Broken, "latency layer not serving")
		}
	}
	if !st.Mounted {
		st.Broken = append(st.Broken, "not mounted")
	}
	if !st.LoopOK {
		st.Broken = append(st.Broken, "loop device detached")
	}
	if !st.CgroupOK {
		st.Broken = append(st.Broken, "cgroup missing")
	}
	if st.Controller == "stopped" {
		st.Broken = append(st.Broken, "controller not running")
	}
	return st
}

// Statuses are the disks' statuses, as 'iolens emulate ls -o json' lists
// them (nil for no disks).
func Statuses(disks []*Disk) []Status {
	var st []Status
	for _, d := range disks {
		st = append(st, d.Status())
	}
	return st
}

func diskDir(root, name string) string { return filepath.Join(root, name) }

// LatencyStatus describes a disk's latency layer.
type LatencyStatus struct {
	// Mount is where the layer serves the backing file to the loop device.
	Mount   string     `json:"mount"`
	Serving bool       `json:"serving"`
	Read    DistStatus `json:"read"`
	Write   DistStatus `json:"write"`
	Flush   DistStatus `json:"flush"`
}

// DistStatus is one latency distribution, as configured and in figures.
type DistStatus struct {
	Spec  string `json:"spec"`
	MinNs int64  `json:"min_ns"`
	P50Ns int64  `json:"p50_ns"`
	P99Ns int64  `json:"p99_ns"`
}

func describeDist(d Dist) DistStatus {
	return DistStatus{Spec: d.String(), MinNs: int64(d.Min()), P50Ns: int64(d.Quantile(0.5)), P99Ns: int64(d.Quantile(0.99))}
}

// cgroupLeaf names a disk's cgroup. The hash of its state directory keeps
// disks of the same name under different state roots apart, and lets a
// teardown find the cgroup of a disk whose state file is lost.
func cgroupLeaf(dir, name string) string {
	sum := sha256.Sum256([]byte(dir))
	return name + "-" + hex.EncodeToString(sum[:4])
}

// Open loads the emulated disk called name from DefaultDir().
func Open(name string) (*Disk, error) { return OpenIn(DefaultDir(), name) }

// ErrNotFound is returned for a disk name with no state.
var ErrNotFound = errors.New("no such emulated disk")

// OpenIn loads the emulated disk called name from the state root dir. The
// root must be the user's (or root's) and not writable by others; the
// disk's directory must carry iolens's marker. A disk whose state file is
// missing (a crash early in create) comes back with its derived paths
// only, so that it can still be removed.
func OpenIn(root, name string) (*Disk, error) {
	notFound := func() error {
		return &hint.Error{Err: fmt.Errorf("%w: %q in %s", ErrNotFound, name, root), Advice: "list them with 'iolens emulate ls'"}
	}
	if !nameRE.MatchString(name) {
		return nil, notFound()
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if err := checkStateRoot(root); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, notFound()
		}
		return nil, err
	}
	dir := diskDir(root, name)
	if err := checkOwned(dir, false); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, notFound()
		}
		return nil, err
	}
	if !hasMarker(dir, name) {
		return nil, &hint.Error{Err: fmt.Errorf("%w: %s is not an iolens emulated disk (no %s marker)", ErrNotFound, dir, markerName),
			Advice: "iolens only touches directories it made; remove it yourself if it is yours"}
	}
	b, err := readBounded(filepath.Join(dir, stateName))
	if errors.Is(err, os.ErrNotExist) {
		d := derived(root, name)
		d.partial = true
		return d, nil
	}
	if err != nil {
		return nil, err
	}
	d, err := decodeState(b, root, name)
	if err != nil {
		return nil, &hint.Error{Err: fmt.Errorf("state of %q: %w", name, err),
			Advice: "remove the disk with 'iolens emulate rm " + name + "': teardown finds its parts by name"}
	}
	d.checkParts()
	return d, nil
}

// OpenForRemoval is OpenIn that falls back to the disk's derived paths
// when its state file is refused, so that a damaged disk can still be
// torn down by name.
func OpenForRemoval(root, name string) (*Disk, error) {
	d, err := OpenIn(root, name)
	if err == nil || !errors.Is(err, ErrBadState) {
		return d, err
	}
	root, aerr := filepath.Abs(root)
	if aerr != nil {
		return nil, aerr
	}
	return derived(root, name), nil
}

// checkParts drops what the state names but this machine does not back
// up: a cgroup hierarchy that is not mounted, a loop device whose backing
// file is another.
func (d *Disk) checkParts() {
	if d.Cgroup != "" {
		hs, _ := FindHierarchies("/proc/self/mountinfo")
		ok := false
		for _, h := range hs {
			ok = ok || h == Hierarchy{Version: d.CgroupVersion, Mount: d.CgroupMount}
		}
		if !ok {
			d.Cgroup, d.CgroupVersion, d.CgroupMount = "", 0, ""
		}
	}
	if d.Device != "" {
		if loopBacking(d.Device) != d.loopBackingFile() {
			d.Device, d.MajMin = "", ""
		} else {
			d.MajMin = strings.TrimSpace(readString(filepath.Join("/sys/block", filepath.Base(d.Device), "dev")))
		}
	}
}

// List loads every emulated disk under root, sorted by name. Directories
// without iolens's marker are not disks and are passed over.
func List(root string) ([]*Disk, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if err := checkStateRoot(root); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []*Disk
	var errs []error
	for _, e := range ents {
		if !e.IsDir() || !nameRE.MatchString(e.Name()) || !hasMarker(filepath.Join(root, e.Name()), e.Name()) {
			continue
		}
		d, err := OpenIn(root, e.Name())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errors.Join(errs...)
}

func (d *Disk) save() error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(d.Dir, stateName), append(b, '\n'))
}

// writeAtomic replaces path with b through a new file of its own (not a
// fixed name, which could be a FIFO someone made), so readers see the old
// content or the new, whole.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	err = errors.Join(err, f.Chmod(0o644), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// ErrNotRoot is returned when creating or destroying without root.
var ErrNotRoot = errors.New("emulated disks need root")

func needRoot() error {
	if os.Geteuid() != 0 {
		return &hint.Error{Err: ErrNotRoot, Advice: "run as root (sudo): iolens attaches a loop device, mounts a file system and writes cgroup limits"}
	}
	return nil
}

// Unavailable says why emulated disks cannot be made on this machine
// (not root, no block throttle, losetup or mkfs.ext4 missing, or one of
// tools missing), or returns "" when they can. Tests skip with it.
func Unavailable(tools ...string) string {
	if os.Geteuid() != 0 {
		return "needs root (loop devices, mounts, cgroups)"
	}
	if hs, err := FindHierarchies("/proc/self/mountinfo"); err != nil || len(hs) == 0 {
		return fmt.Sprintf("no block throttle here (cgroup v2 io controller or v1 blkio): %v", err)
	}
	for _, tool := range append([]string{"losetup", "mkfs.ext4"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not installed"
		}
	}
	return ""
}

// Progress receives create's steps; nil discards them.
type Progress func(step string)

// Create builds an emulated disk: a sparse backing file, a loop device
// with direct IO, a file system mounted at Disk.Mount, a cgroup whose
// throttle caps the loop device, and the controller. If anything fails,
// or ctx is cancelled, everything made so far is removed.
func Create(ctx context.Context, spec Spec) (*Disk, error) {
	return CreateWithProgress(ctx, spec, nil)
}

// CreateWithProgress is Create reporting each step to progress.
func CreateWithProgress(ctx context.Context, spec Spec, progress Progress) (d *Disk, err error) {
	spec = spec.withDefaults()
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := needRoot(); err != nil {
		return nil, err
	}
	hs, err := FindHierarchies("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("reading mounts: %w", err)
	}
	h, err := PickHierarchy(hs, spec.Cgroup)
	if err != nil {
		return nil, err
	}
	for _, tool := range []string{"losetup", "mkfs." + spec.FS} {
		if _, err := exec.LookPath(tool); err != nil {
			pkg := map[string]string{"losetup": "util-linux", "mkfs.ext4": "e2fsprogs", "mkfs.xfs": "xfsprogs"}[tool]
			return nil, &hint.Error{Err: fmt.Errorf("%s not found", tool), Advice: "install " + pkg}
		}
	}
	if err := os.MkdirAll(spec.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating state root: %w", err)
	}
	root, err := filepath.Abs(spec.Dir)
	if err != nil {
		return nil, err
	}
	if err := checkStateRoot(root); err != nil {
		return nil, err
	}
	spec.Dir = root
	if err := checkSpace(spec, root); err != nil {
		return nil, err
	}
	dir := diskDir(root, spec.Name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, &hint.Error{Err: fmt.Errorf("emulated disk %q already exists", spec.Name),
				Advice: fmt.Sprintf("pick another name, or remove it: iolens emulate rm %s", spec.Name)}
		}
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	// The marker goes first: teardown deletes nothing without it.
	if err := writeMarker(dir, spec.Name); err != nil {
		_ = os.Remove(filepath.Join(dir, markerName))
		_ = os.Remove(dir)
		return nil, fmt.Errorf("marking the state directory: %w", err)
	}
	cg := cgroupFor(h, cgroupLeaf(dir, spec.Name))
	d = derived(root, spec.Name)
	d.Cgroup, d.CgroupVersion, d.CgroupMount = cg.Dir, h.Version, h.Mount
	d.Spec, d.Created = spec, time.Now().UTC()
	if spec.Latency != nil {
		d.LatencyMount = filepath.Join(dir, latencyMountName)
	}
	if spec.RAM {
		d.Backing = filepath.Join(dir, ramMountName, backingName)
	}
	defer func() {
		if err == nil {
			return
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := d.destroy(cctx, true); derr != nil {
			err = errors.Join(err, fmt.Errorf("cleaning up: %w", derr))
		}
		d = nil
	}()
	step := func(name string) error {
		if progress != nil {
			progress(name)
		}
		if spec.hook != nil {
			if err := spec.hook(name); err != nil {
				return err
			}
		}
		return ctx.Err()
	}

	if err := step("state"); err != nil {
		return d, err
	}
	if err := d.save(); err != nil {
		return d, fmt.Errorf("writing state: %w", err)
	}

	if err := step("backing"); err != nil {
		return d, err
	}
	if spec.RAM {
		ram := filepath.Dir(d.Backing)
		if err := os.Mkdir(ram, 0o700); err != nil {
			return d, err
		}
		if err := unix.Mount("tmpfs", ram, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC,
			fmt.Sprintf("size=%d,mode=0700", spec.SizeBytes+(1<<20))); err != nil {
			return d, fmt.Errorf("mounting a tmpfs for the backing file: %w", err)
		}
	}
	f, err := os.OpenFile(d.Backing, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return d, fmt.Errorf("creating backing file: %w", err)
	}
	err = f.Truncate(spec.SizeBytes)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return d, fmt.Errorf("sizing backing file: %w", err)
	}

	if d.LatencyMount != "" {
		if err := step("latency"); err != nil {
			return d, err
		}
		if err := d.startLatency(ctx); err != nil {
			return d, err
		}
		if err := d.save(); err != nil {
			return d, fmt.Errorf("writing state: %w", err)
		}
	}

	if err := step("loop"); err != nil {
		return d, err
	}
	out, err := exec.CommandContext(ctx, "losetup", "--find", "--show", "--direct-io=on", d.loopBackingFile()).CombinedOutput()
	if err != nil {
		return d, fmt.Errorf("losetup: %v: %s", err, strings.TrimSpace(string(out)))
	}
	d.Device = strings.TrimSpace(string(out))
	base := filepath.Base(d.Device)
	mm, err := os.ReadFile(filepath.Join("/sys/block", base, "dev"))
	if err != nil {
		return d, fmt.Errorf("reading %s's device number: %w", d.Device, err)
	}
	d.MajMin = strings.TrimSpace(string(mm))
	d.DirectIO = strings.TrimSpace(readString(filepath.Join("/sys/block", base, "loop", "dio"))) == "1"
	if err := d.save(); err != nil {
		return d, fmt.Errorf("writing state: %w", err)
	}

	if err := step("mkfs"); err != nil {
		return d, err
	}
	// Initialise inode tables and the journal now: ext4's lazy init would
	// write in the background later, unthrottled, and spend the disk's
	// credits behind the tests' back.
	args := []string{"-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", d.Device}
	mountData := ""
	if spec.Faults != nil {
		// A journal write that fails aborts the file system: without one,
		// and with errors=continue, it outlives the faults.
		args = append([]string{"-O", "^has_journal"}, args...)
		mountData = "errors=continue"
	}
	if spec.FS == "xfs" {
		args = []string{"-q", "-f", d.Device}
	}
	if out, err := exec.CommandContext(ctx, "mkfs."+spec.FS, args...).CombinedOutput(); err != nil {
		return d, fmt.Errorf("mkfs.%s: %v: %s", spec.FS, err, strings.TrimSpace(string(out)))
	}

	if err := step("mount"); err != nil {
		return d, err
	}
	if err := os.Mkdir(d.Mount, 0o755); err != nil {
		return d, err
	}
	if err := unix.Mount(d.Device, d.Mount, spec.FS, unix.MS_NOATIME, mountData); err != nil {
		return d, fmt.Errorf("mounting %s on %s: %w", d.Device, d.Mount, err)
	}

	if err := step("cgroup"); err != nil {
		return d, err
	}
	if err := cg.create(); err != nil {
		return d, err
	}
	if err := cg.set(d.MajMin, spec.cgroupLimits(NewModel(spec, time.Now()).Limits())); err != nil {
		return d, err
	}

	if err := step("controller"); err != nil {
		return d, err
	}
	if err := d.startController(ctx); err != nil {
		return d, err
	}
	if err := d.save(); err != nil {
		return d, fmt.Errorf("writing state: %w", err)
	}
	if spec.Faults != nil || spec.Cold != nil {
		if err := d.Arm(); err != nil {
			return d, fmt.Errorf("arming the faults: %w", err)
		}
	}
	if err := step("done"); err != nil {
		return d, err
	}
	return d, nil
}

// Destroy removes the disk: controller, mount, loop device, cgroup and
// state directory. It refuses while processes remain in the cgroup. It is
// idempotent and works on what a crash left behind.
func (d *Disk) Destroy(ctx context.Context) error { return d.destroy(ctx, false) }

// ForceDestroy is Destroy that first kills the processes left in the
// disk's cgroup.
func (d *Disk) ForceDestroy(ctx context.Context) error { return d.destroy(ctx, true) }

// BusyError says which processes keep a disk in use.
type BusyError struct {
	Name string
	PIDs []int
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("emulated disk %q is in use by %d process(es): %v", e.Name, len(e.PIDs), e.PIDs)
}

// Hint says what to do next.
func (e *BusyError) Hint() string {
	return fmt.Sprintf("stop them, or kill them and remove the disk with: iolens emulate rm --force %s", e.Name)
}

func (d *Disk) destroy(ctx context.Context, force bool) error {
	if err := needRoot(); err != nil {
		return err
	}
	// Whatever the Disk value says, teardown works on the paths derived
	// from the state root and the name, and only on a directory that
	// carries the marker.
	root, name := d.root(), d.Name
	if !nameRE.MatchString(name) || filepath.Clean(d.Dir) != diskDir(root, name) {
		return fmt.Errorf("not removing %q: not an emulated disk's directory", d.Dir)
	}
	own := derived(root, name)
	if _, err := os.Lstat(own.Dir); errors.Is(err, os.ErrNotExist) {
		return nil // already gone
	}
	if err := checkStateRoot(root); err != nil {
		return err
	}
	if err := checkOwned(own.Dir, false); err != nil {
		return err
	}
	if !hasMarker(own.Dir, name) {
		return &hint.Error{Err: fmt.Errorf("not removing %s: it has no %s marker, so iolens did not make it", own.Dir, markerName),
			Advice: "remove it yourself if it is yours"}
	}
	latMount := filepath.Join(own.Dir, latencyMountName)
	cgs := ownCgroups(own.Dir, name)
	for _, cg := range cgs {
		pids, err := cg.procs()
		if err != nil {
			return err
		}
		if len(pids) > 0 && !force {
			return &BusyError{Name: name, PIDs: pids}
		}
		if err := killAll(ctx, cg); err != nil {
			return err
		}
	}
	// Unmount first: if the file system is busy nothing else has changed.
	if isMountPoint(own.Mount) {
		if err := unix.Unmount(own.Mount, 0); err != nil {
			if errors.Is(err, unix.EBUSY) {
				return &hint.Error{Err: fmt.Errorf("unmounting %s: %w", own.Mount, err),
					Advice: "a process outside the emulator uses it (a shell's working directory?); find it with: fuser -vm " + own.Mount}
			}
			return fmt.Errorf("unmounting %s: %w", own.Mount, err)
		}
	}
	var errs []error
	errs = append(errs, d.stopController(ctx))
	ram := filepath.Join(own.Dir, ramMountName)
	for _, dev := range loopsFor([]string{own.Backing, filepath.Join(ram, backingName), filepath.Join(latMount, latencyFileName)}, d.Device) {
		if out, err := exec.CommandContext(ctx, "losetup", "-d", dev).CombinedOutput(); err != nil && loopBacking(dev) != "" {
			errs = append(errs, fmt.Errorf("detaching %s: %v: %s", dev, err, strings.TrimSpace(string(out))))
		}
	}
	// The latency layer goes after the loop device: it serves the loop
	// device's IO until then.
	errs = append(errs, d.stopLatency(ctx, latMount))
	// The backing file's tmpfs goes last: the loop device or the latency
	// layer read it until then.
	if isMountPoint(ram) {
		if err := unix.Unmount(ram, 0); err != nil {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", ram, err))
		}
	}
	for _, cg := range cgs {
		errs = append(errs, cg.remove())
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// Never delete through a mount: if anything is still mounted under the
	// state directory, stop here.
	if m := mountsUnder(own.Dir); len(m) > 0 {
		return fmt.Errorf("not removing %s: %s still mounted", own.Dir, strings.Join(m, ", "))
	}
	if err := os.RemoveAll(own.Dir); err != nil {
		return fmt.Errorf("removing %s: %w", own.Dir, err)
	}
	return nil
}

// ownCgroups are the cgroups of the disk in dir that exist: by their
// derived names, in every throttling hierarchy mounted.
func ownCgroups(dir, name string) []cgroup {
	hs, _ := FindHierarchies("/proc/self/mountinfo")
	var out []cgroup
	for _, h := range hs {
		if c := cgroupFor(h, cgroupLeaf(dir, name)); c.exists() {
			out = append(out, c)
		}
	}
	return out
}

// killAll SIGKILLs the cgroup's processes and waits for them to leave.
func killAll(ctx context.Context, cg cgroup) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids, err := cg.procs()
		if err != nil || len(pids) == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v in %s did not exit after SIGKILL", pids, cg.Dir)
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// RemoveAll destroys every emulated disk under root that carries
// iolens's marker and a valid state file; other directories are left
// alone, and a marked disk whose state is missing or refused is named in
// the error (remove it by name). With force it kills processes still in
// the disks' cgroups.
func RemoveAll(ctx context.Context, root string, force bool) (removed []string, err error) {
	disks, lerr := List(root)
	var errs []error
	if lerr != nil {
		errs = append(errs, lerr)
	}
	for _, d := range disks {
		if d.partial {
			errs = append(errs, &hint.Error{Err: fmt.Errorf("%s: no state file; not removed by --all", d.Name),
				Advice: "remove it by name: iolens emulate rm " + d.Name})
			continue
		}
		if err := d.destroy(ctx, force); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Name, err))
			continue
		}
		removed = append(removed, d.Name)
	}
	return removed, errors.Join(errs...)
}

func isMountPoint(p string) bool {
	for _, m := range mountPoints() {
		if m == p {
			return true
		}
	}
	return false
}

func mountsUnder(dir string) []string {
	var out []string
	for _, m := range mountPoints() {
		if m == dir || strings.HasPrefix(m, dir+"/") {
			out = append(out, m)
		}
	}
	return out
}

func mountPoints() []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 {
			out = append(out, unescapeMount(f[4]))
		}
	}
	return out
}

// loopBacking returns the file behind loop device dev, "" if none.
func loopBacking(dev string) string {
	s := strings.TrimSpace(readString(filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file")))
	return strings.TrimSuffix(s, " (deleted)")
}

// loopsFor lists the loop devices attached to one of backing: the
// recorded one and any other (a crash between attach and the state
// write).
func loopsFor(backing []string, recorded string) []string {
	var out []string
	ents, _ := os.ReadDir("/sys/block")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "loop") && contains(backing, loopBacking(e.Name())) {
			out = append(out, "/dev/"+e.Name())
		}
	}
	if loopRE.MatchString(recorded) && contains(backing, loopBacking(recorded)) && !contains(out, recorded) {
		out = append(out, recorded)
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// procStart returns a process's start time (clock ticks since boot),
// 0 if it does not exist or is a zombie.
func procStart(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}
