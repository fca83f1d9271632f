package emulate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/iolens/iolens/internal/realio"
)

// validState is a state file as create writes it, for the disk called
// name under root.
func validState(root, name string) Disk {
	d := derived(root, name)
	d.Spec = Spec{Name: name, Dir: root, Limits: Limits{ReadIOPS: 100, WriteIOPS: 100}}.withDefaults()
	d.Created = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return *d
}

// plantDisk makes root/name look like a disk of iolens's: the marker and
// the given state.
func plantDisk(t *testing.T, root, name string, state any) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeMarker(dir, name); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, stateName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRemoveAllLeavesForeignDirectories: 'mkdir -p D/photos; iolens
// emulate rm --all --state-dir D' removed photos. A directory without
// iolens's marker is not a disk: rm --all leaves it, with or without
// --force.
func TestRemoveAllLeavesForeignDirectories(t *testing.T) {
	root := t.TempDir()
	photos := filepath.Join(root, "photos")
	if err := os.Mkdir(photos, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(photos, "cat.jpg"), []byte("cat"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A marker for another name does not count either.
	other := filepath.Join(root, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, markerName), []byte(marker("photos")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		removed, err := RemoveAll(context.Background(), root, force)
		if err != nil || len(removed) > 0 {
			t.Errorf("RemoveAll(force=%v) = %v, %v; want nothing removed and no error", force, removed, err)
		}
	}
	for _, p := range []string{filepath.Join(photos, "cat.jpg"), other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if ds, err := List(root); err != nil || len(ds) != 0 {
		t.Errorf("List = %d disks, %v; want none", len(ds), err)
	}
	if _, err := OpenIn(root, "photos"); !errors.Is(err, ErrNotFound) {
		t.Errorf("OpenIn(photos) = %v, want ErrNotFound", err)
	}
}

// TestRemoveAllSkipsStatelessDisk: a marked disk without a state file is
// not taken by --all: the error names it and says how to remove it.
func TestRemoveAllSkipsStatelessDisk(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "half")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeMarker(dir, "half"); err != nil {
		t.Fatal(err)
	}
	removed, err := RemoveAll(context.Background(), root, true)
	var h interface{ Hint() string }
	if len(removed) > 0 || err == nil || !errors.As(err, &h) || !strings.Contains(h.Hint(), "emulate rm half") {
		t.Errorf("RemoveAll = %v, %v; want it refused with a hint to remove it by name", removed, err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Error(err)
	}
}

// TestUnsafeStateRoot: a state directory others can write to, or that
// another user owns, is refused before anything in it is read.
func TestUnsafeStateRoot(t *testing.T) {
	root := t.TempDir()
	plantDisk(t, root, "d1", validState(root, "d1"))
	if _, err := OpenIn(root, "d1"); err != nil {
		t.Fatalf("a safe root refused: %v", err)
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenIn(root, "d1"); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("OpenIn in a world-writable root: %v", err)
	}
	if _, err := List(root); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("List of a world-writable root: %v", err)
	}
	if _, err := RemoveAll(context.Background(), root, true); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("RemoveAll in a world-writable root: %v", err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// The disk's own directory counts too.
	if err := os.Chmod(filepath.Join(root, "d1"), 0o775); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenIn(root, "d1"); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("OpenIn of a group-writable disk directory: %v", err)
	}
	if err := os.Chmod(filepath.Join(root, "d1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(root, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenIn(root, "d1"); !errors.Is(err, ErrUnsafeDir) {
			t.Errorf("OpenIn in a root owned by another user: %v", err)
		}
		_ = os.Chown(root, 0, 0)
	}
}

// TestHostileStateFile: an edited state file names another directory,
// mount, cgroup and process. Teardown touches none of them: it removes the
// disk's own directory and nothing else.
func TestHostileStateFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: teardown refuses to start without it")
	}
	root := t.TempDir()
	victim := t.TempDir()
	keep := filepath.Join(victim, "keep")
	if err := os.WriteFile(keep, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	vmnt := filepath.Join(victim, "mnt")
	if err := os.Mkdir(vmnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", vmnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	realio.Cleanup(t, func() { _ = unix.Unmount(vmnt, unix.MNT_DETACH) })
	vcg := filepath.Join(victim, "cgroup") // an empty directory the old teardown removed
	if err := os.Mkdir(vcg, 0o755); err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	realio.Cleanup(t, func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	pid := sleeper.Process.Pid
	start := procStart(pid)

	st := validState(root, "evil")
	st.Dir, st.Mount, st.Backing, st.EventLog = victim, vmnt, keep, keep
	st.Cgroup, st.CgroupVersion, st.CgroupMount = vcg, 1, victim
	st.ControllerPID, st.ControllerStart = pid, start
	st.LatencyMount, st.FusePID, st.FuseStart = vmnt, pid, start
	st.Device = "/dev/../dev/sda"
	dir := plantDisk(t, root, "evil", st)

	d, err := OpenIn(root, "evil")
	if err != nil {
		t.Fatal(err)
	}
	if d.Dir != dir || d.Mount != filepath.Join(dir, mountName) || d.Cgroup != "" || d.Device != "" || d.LatencyMount != "" {
		t.Errorf("paths taken from the state file: dir %s mount %s cgroup %q device %q latency %q", d.Dir, d.Mount, d.Cgroup, d.Device, d.LatencyMount)
	}
	if c := d.Status().Controller; c == "running" {
		t.Errorf("a sleep process passes for the controller: %s", c)
	}
	// A Disk value edited in memory is held to its derived paths too.
	forged := *d
	forged.Dir, forged.Mount, forged.Backing = victim, vmnt, keep
	if err := forged.ForceDestroy(context.Background()); err == nil {
		t.Error("teardown of a disk whose directory is not root/name went ahead")
	}
	if err := d.ForceDestroy(context.Background()); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the disk's own directory is left: %v", err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "precious" {
		t.Errorf("the victim's file: %q, %v", b, err)
	}
	if !isMountPoint(vmnt) {
		t.Error("the victim's mount was unmounted")
	}
	if _, err := os.Stat(vcg); err != nil {
		t.Errorf("the victim's directory named as cgroup: %v", err)
	}
	if procStart(pid) != start {
		t.Error("the process named as controller was killed")
	}
}

// TestDaemonIdentity: only a process with the daemon's command line for
// this disk, started when recorded, is taken for (and signalled as) the
// disk's daemon.
func TestDaemonIdentity(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	cmd := exec.Command(exe, daemonArgs("controller", root, "d1")...)
	cmd.Env = append(os.Environ(), "IOLENS_TEST_SLEEP=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	realio.Cleanup(t, func() { _ = cmd.Process.Kill(); <-exited })
	pid := cmd.Process.Pid
	var start uint64
	for i := 0; i < 100 && !isDaemon(pid, start, "controller", root, "d1"); i++ {
		time.Sleep(10 * time.Millisecond) // until exec has replaced the command line
		start = procStart(pid)
	}
	if !isDaemon(pid, start, "controller", root, "d1") {
		t.Fatal("the daemon is not recognised")
	}
	for what, ok := range map[string]bool{
		"other disk":   isDaemon(pid, start, "controller", root, "d2"),
		"other root":   isDaemon(pid, start, "controller", root+"x", "d1"),
		"other kind":   isDaemon(pid, start, "latency", root, "d1"),
		"other start":  isDaemon(pid, start+1, "controller", root, "d1"),
		"init":         isDaemon(1, procStart(1), "controller", root, "d1"),
		"no such pid":  isDaemon(1<<22+1, 1, "controller", root, "d1"),
		"negative pid": isDaemon(-1, 1, "controller", root, "d1"),
	} {
		if ok {
			t.Errorf("%s: taken for the daemon", what)
		}
	}
	// stopDaemon leaves it alone when anything differs, and ends it when
	// all matches.
	if err := stopDaemon(context.Background(), pid, start, "controller", root, "d2"); err != nil {
		t.Fatal(err)
	}
	if procStart(pid) != start {
		t.Fatal("stopDaemon signalled a daemon of another disk")
	}
	if err := stopDaemon(context.Background(), pid, start, "controller", root, "d1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Error("the daemon was not stopped")
	}
}

func FuzzDecodeState(f *testing.F) {
	root := "/var/lib/iolens/emulate"
	good, _ := json.Marshal(validState(root, "d1"))
	f.Add(good)
	hostile := validState(root, "d1")
	hostile.Dir, hostile.Mount, hostile.Backing = "/", "/", "/etc/passwd"
	hostile.Cgroup, hostile.CgroupVersion, hostile.CgroupMount = "/sys/fs/cgroup", 2, "/sys/fs/cgroup"
	hostile.ControllerPID, hostile.ControllerStart = 1, 1
	hostile.Device, hostile.MajMin = "/dev/sda", "8:0"
	hostile.Spec.Dir = "/"
	hostile.Spec.Latency = &Latency{Read: Dist{Median: time.Millisecond, Pct: 99, Tail: 4 * time.Millisecond}}
	b, _ := json.Marshal(hostile)
	f.Add(b)
	f.Add([]byte(`{"schema":"iolens.emulate/v1","name":"d1","spec":{"name":"d1","size_bytes":1e300}}`))
	f.Add([]byte(`{"schema":"iolens.emulate/v1","name":"../x","spec":{"name":"../x"}}`))
	f.Add([]byte(`{"schema":"iolens.emulate/v1","name":"d1","controller_pid":-5,"spec":{"name":"d1","tick_ns":100000000,"latency":{"read":{"median_ns":-1}}}}`))
	f.Add([]byte(`[]`))
	dev := validState(root, "d1")
	dev.Spec.ThrottleAt, dev.Spec.Channels = ThrottleDevice, 4
	dev.Spec.Limits = Limits{TotalIOPS: 2500, TotalBPS: 125e6}
	dev.Spec.Latency = &Latency{Read: Dist{Hit: time.Millisecond, Miss: 8 * time.Millisecond, HitRatio: 0.7}, Write: Fixed(time.Millisecond)}
	b, _ = json.Marshal(dev)
	f.Add(b)
	f.Add([]byte(`{"schema":"iolens.emulate/v1","name":"d1","spec":{"name":"d1","throttle_at":"device","channels":300,"tick_ns":100000000}}`))
	f.Add([]byte(`{"schema":"iolens.emulate/v1","name":"d1","cgroup":"/sys/fs/cgroup/blkio/iolens-emulate/../../x","cgroup_version":1,"cgroup_mount":"/sys/fs/cgroup/blkio"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeState(b, root, "d1")
		if err != nil {
			return
		}
		dir := filepath.Join(root, "d1")
		backing := filepath.Join(dir, backingName)
		if d.Spec.RAM {
			backing = filepath.Join(dir, ramMountName, backingName)
		}
		if d.Dir != dir || d.Mount != filepath.Join(dir, mountName) || d.Backing != backing ||
			d.EventLog != filepath.Join(dir, eventsName) || d.Spec.Dir != root || d.Name != "d1" {
			t.Fatalf("paths not derived: %+v", d)
		}
		if d.LatencyMount != "" && d.LatencyMount != filepath.Join(dir, latencyMountName) {
			t.Fatalf("latency mount %q", d.LatencyMount)
		}
		if d.Spec.ThrottleAt == ThrottleDevice && (d.Spec.Latency == nil || d.LatencyMount == "") {
			t.Fatalf("a device throttle without its layer: %+v", d.Spec)
		}
		if d.Device != "" && !loopRE.MatchString(d.Device) {
			t.Fatalf("device %q", d.Device)
		}
		if d.Cgroup != "" && !strings.HasPrefix(d.Cgroup, d.CgroupMount+"/"+cgroupParent+"/d1-") {
			t.Fatalf("cgroup %q under %q", d.Cgroup, d.CgroupMount)
		}
		if err := d.Spec.withDefaults().Validate(); err != nil {
			t.Fatalf("an invalid spec accepted: %v", err)
		}
	})
}

// TestStateFIFO: a state.json (or status.json, or event log) that is a
// FIFO hung 'emulate status' and 'emulate ls' in open(2). It is refused
// at once, as a bad state, and rm by name still finds the disk's parts.
func TestStateFIFO(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "fifo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeMarker(dir, "fifo"); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, stateName), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := OpenIn(root, "fifo"); !errors.Is(err, ErrBadState) || !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenIn with a FIFO state: %v", err)
		}
		if disks, err := List(root); len(disks) != 0 || !errors.Is(err, ErrBadState) {
			t.Errorf("List with a FIFO state: %v %v", disks, err)
		}
		if d, err := OpenForRemoval(root, "fifo"); err != nil || d.Dir != dir {
			t.Errorf("OpenForRemoval with a FIFO state: %v", err)
		}
		for _, f := range []string{eventsName, statusName} {
			p := filepath.Join(dir, f)
			if err := unix.Mkfifo(p, 0o644); err != nil {
				t.Error(err)
				continue
			}
			if _, err := ReadEventFile(p); !errors.Is(err, ErrNotRegular) {
				t.Errorf("ReadEventFile of a FIFO: %v", err)
			}
			if _, err := openEventLog(p); !errors.Is(err, ErrNotRegular) {
				t.Errorf("openEventLog of a FIFO: %v", err)
			}
		}
		// A FIFO marker is no marker.
		other := filepath.Join(root, "other")
		if err := os.Mkdir(other, 0o755); err != nil {
			t.Error(err)
		} else if err := unix.Mkfifo(filepath.Join(other, markerName), 0o644); err != nil {
			t.Error(err)
		} else if hasMarker(other, "other") {
			t.Error("a FIFO passes for the marker")
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("reading a disk whose files are FIFOs hangs")
	}
}

// TestWriteAtomicFIFO: the state is written through a new file, never a
// fixed temporary name that could be a FIFO (writing one blocks until a
// reader comes).
func TestWriteAtomicFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, stateName)
	for _, n := range []string{p + ".tmp", filepath.Join(dir, "."+stateName+".tmp")} {
		if err := unix.Mkfifo(n, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- writeAtomic(p, []byte("{}")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("writeAtomic blocks on a FIFO")
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "{}" {
		t.Errorf("state: %q %v", b, err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("state mode: %v %v", fi, err)
	}
}
