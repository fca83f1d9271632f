package emulate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/cli"
	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/realio"
)

// The test binary doubles as iolens when asked, so the CLI, and the
// controller daemon it starts, run for real.
func TestMain(m *testing.M) {
	// TestDaemonIdentity's stand-in for a daemon: it sleeps under the
	// daemon's command line until signalled.
	if os.Getenv("IOLENS_TEST_SLEEP") == "1" {
		ch := make(chan os.Signal, 1)
		signalNotify(ch)
		select {
		case <-ch:
		case <-time.After(60 * time.Second):
		}
		os.Exit(0)
	}
	if os.Getenv("IOLENS_TEST_AS_CLI") == "1" {
		ctx, stop := signalContext()
		streams := cli.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
		err := cli.NewRootCommand(streams).ExecuteContext(ctx)
		interrupted := ctx.Err() != nil
		stop()
		os.Exit(cli.ExitCode(err, interrupted, os.Stderr))
	}
	os.Exit(m.Run())
}

func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signalNotify(ch)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

type iolens struct {
	t    *testing.T
	exe  string
	root string
	// timeout ends a command that runs longer (default 3 minutes).
	timeout time.Duration
}

func (c iolens) run(args ...string) (string, string, int) {
	c.t.Helper()
	// The state dir goes before any "--", or the command would get it.
	argv := append([]string{args[0], "--state-dir", c.root}, args[1:]...)
	if c.timeout == 0 {
		c.timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.exe, argv...)
	cmd.Env = append(os.Environ(), "IOLENS_TEST_AS_CLI=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func needRoot(t *testing.T) {
	realio.Real(t, emulate.Unavailable())
}

func loopsBacking(file string) []string {
	var out []string
	ents, _ := os.ReadDir("/sys/block")
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join("/sys/block", e.Name(), "loop", "backing_file"))
		if strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)") == file {
			out = append(out, e.Name())
		}
	}
	return out
}

func mountedUnder(dir string) bool {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	return strings.Contains(string(b), " "+dir+"/")
}

// TestCLILifecycle: create with a daemon controller, exec with the exit
// status passed on, rm refusing a busy disk, then kill -9 of the
// controller and rm --all leaving nothing behind.
func TestCLILifecycle(t *testing.T) {
	needRoot(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := iolens{t: t, exe: exe, root: t.TempDir()}
	out, errOut, code := c.run("emulate", "create", "life", "--profile", "aws:gp2:100GiB", "--scale", "100", "--size", "256M")
	if code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	for _, want := range []string{"TIME SCALED", "x100", "300 IOPS", "3,000 IOPS for 20 s", "/life/mnt"} {
		if !strings.Contains(out, want) {
			t.Errorf("create output lacks %q:\n%s", want, out)
		}
	}
	d, err := emulate.OpenIn(c.root, "life")
	if err != nil {
		t.Fatal(err)
	}
	realio.Cleanup(t, func() { _ = d.ForceDestroy(context.Background()) })
	if d.ControllerPID == 0 || d.Status().Controller != "running" {
		t.Fatalf("controller not running: %+v", d.Status())
	}

	out, _, code = c.run("emulate", "exec", "life", "--", "sh", "-c", `cat /proc/self/cgroup; test -d "$IOLENS_EMULATE_MOUNT"; exit 7`)
	if code != 7 {
		t.Errorf("exec exit status %d, want 7", code)
	}
	leaf := filepath.Base(d.Cgroup)
	if !strings.Contains(out, leaf) {
		t.Errorf("exec'd command not in the disk's cgroup %s:\n%s", leaf, out)
	}

	// A process in the cgroup: rm refuses, says how to force.
	sleeper := exec.Command(exe, "emulate", "--state-dir", c.root, "exec", "life", "--", "sleep", "60")
	sleeper.Env = append(os.Environ(), "IOLENS_TEST_AS_CLI=1")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	go sleeper.Wait()
	for i := 0; len(d.Status().Procs) == 0; i++ {
		if i > 200 {
			t.Fatal("sleep never entered the cgroup")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, errOut, code = c.run("emulate", "rm", "life")
	if code == 0 || !strings.Contains(errOut, "--force") {
		t.Errorf("rm of a busy disk: %d %s", code, errOut)
	}
	out, _, _ = c.run("emulate", "ls")
	if !strings.Contains(out, "life") || !strings.Contains(out, "running") || !strings.Contains(out, " ok") {
		t.Errorf("ls after a refused rm:\n%s", out)
	}

	// The controller dies hard; ls says so, rm --all still cleans up.
	if err := syscall.Kill(d.ControllerPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := 0; d.Status().Controller == "running"; i++ {
		if i > 200 {
			t.Fatal("controller survived SIGKILL")
		}
		time.Sleep(10 * time.Millisecond)
	}
	out, _, _ = c.run("emulate", "ls")
	if !strings.Contains(out, "controller not running") {
		t.Errorf("ls does not report the dead controller:\n%s", out)
	}
	out, errOut, code = c.run("emulate", "rm", "--all", "--force")
	if code != 0 || !strings.Contains(out, "removed life") {
		t.Fatalf("rm --all: %d %s %s", code, out, errOut)
	}
	if l := loopsBacking(d.Backing); len(l) > 0 {
		t.Errorf("loop devices left: %v", l)
	}
	if mountedUnder(d.Dir) {
		t.Errorf("mount left under %s", d.Dir)
	}
	for _, p := range []string{d.Cgroup, d.Dir} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left", p)
		}
	}
	if ents, _ := os.ReadDir(c.root); len(ents) > 0 {
		t.Errorf("state root not empty: %v", ents)
	}
	// Idempotent: nothing left to remove is not an error.
	if _, errOut, code := c.run("emulate", "rm", "--all"); code != 0 {
		t.Errorf("second rm --all: %d %s", code, errOut)
	}
}

// TestCLIErrors: mistakes get a usage error with a hint.
func TestCLIErrors(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := iolens{t: t, exe: exe, root: t.TempDir()}
	// Should one be accepted after all, as root it makes a disk.
	realio.Cleanup(t, func() { _, _ = emulate.RemoveAll(context.Background(), c.root, true) })
	for _, args := range [][]string{
		{"emulate", "create", "x", "--bw", "25M"},
		{"emulate", "create", "x", "--profile", "azure:P99"},
		{"emulate", "create", "x", "--cache", "writeback"},
		{"emulate", "create", "x", "--iops", "100", "--burst-iops", "50", "--burst-seconds", "10"},
		{"emulate", "rm"},
		{"emulate", "exec", "x", "sh"},
		{"emulate", "create", "x", "--iops", "NaN"},
		{"emulate", "create", "x", "--iops", "-5"},
		{"emulate", "create", "x", "--scale", "Inf"},
		{"emulate", "create", "x", "--latency", "2ms±3ms"},
		{"emulate", "create", "x", "--flush-latency", "p50=4ms,p99=1ms"},
		{"emulate", "create", "x", "--read-latency", "-1ms"},
		{"emulate", "create", "bad", "--iops", "1100", "--bw", "125"},
		{"emulate", "create", "x", "--total-bw", "125"},
		{"emulate", "create", "x", "--throttle-at", "hypervisor"},
		{"emulate", "create", "x", "--total-iops", "3000"},
		{"emulate", "create", "x", "--throttle-at", "device", "--profile", "azure:P4"},
		{"emulate", "create", "x", "--channels", "4"},
		{"emulate", "create", "x", "--channels", "4", "--flush-latency", "1ms"},
		{"emulate", "create", "x", "--channels", "300", "--latency", "1ms"},
		{"emulate", "create", "x", "--channels", "-1", "--latency", "1ms"},
		{"emulate", "create", "x", "--read-latency", "hit=1ms,miss=8ms,hitratio=1"},
		{"emulate", "create", "x", "--write-latency", "hit=8ms,miss=1ms,hitratio=0.5"},
	} {
		_, errOut, code := c.run(args...)
		if code != 2 || !strings.Contains(errOut, "hint:") {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a hint", args, code, errOut)
		}
	}
	_, errOut, code := c.run("emulate", "status", "nope")
	if code != 1 || !strings.Contains(errOut, "emulate ls") {
		t.Errorf("status of a missing disk: %d %q", code, errOut)
	}
	out, _, code := c.run("emulate", "profiles")
	if code != 0 || !strings.Contains(out, "azure:P4") || !strings.Contains(out, "ibm:10iops-tier:300GiB") {
		t.Errorf("profiles: %d %s", code, out)
	}
	var st []emulate.Status
	out, _, _ = c.run("emulate", "ls", "-o", "json")
	if err := json.Unmarshal([]byte(out), &st); err != nil && strings.TrimSpace(out) != "null" {
		t.Errorf("ls -o json: %v: %s", err, out)
	}
}

// TestCLILatency: a disk with a latency layer served by its own daemon;
// status -o json reports the mount path, the caps and the latencies; rm
// leaves no mount, loop device or process behind.
func TestCLILatency(t *testing.T) {
	needRoot(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := iolens{t: t, exe: exe, root: t.TempDir()}
	out, errOut, code := c.run("emulate", "create", "lat", "--iops", "3000", "--latency", "1ms", "--flush-latency", "p50=2ms,p99=8ms", "--size", "256M")
	if code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	d, err := emulate.OpenIn(c.root, "lat")
	if err != nil {
		t.Fatal(err)
	}
	realio.Cleanup(t, func() { _ = d.ForceDestroy(context.Background()) })
	if !strings.Contains(out, "read 1ms, write 1ms, flush p50=2ms,p99=8ms") {
		t.Errorf("create does not describe the latency:\n%s", out)
	}
	out, _, code = c.run("emulate", "status", "lat", "-o", "json")
	var st emulate.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 {
		t.Fatalf("status -o json: %d %v: %s", code, err, out)
	}
	if st.MountPath != filepath.Join(c.root, "lat", "mnt") || st.Caps.ReadIOPS != 3000 || st.Caps.WriteIOPS != 3000 {
		t.Errorf("status: mount %q caps %+v", st.MountPath, st.Caps)
	}
	l := st.Latency
	if l == nil || !l.Serving || l.Read.P50Ns != 1e6 || l.Read.MinNs != 1e6 || l.Flush.P50Ns != 2e6 || l.Flush.P99Ns < 7.99e6 || l.Flush.P99Ns > 8.01e6 {
		t.Fatalf("status latency: %+v", l)
	}
	if len(st.Broken) > 0 {
		t.Errorf("a new disk is broken: %v", st.Broken)
	}
	pid := d.FusePID
	cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if pid == 0 || !strings.Contains(string(cmdline), "latency") {
		t.Fatalf("no latency daemon: pid %d %q", pid, cmdline)
	}
	// The layer is in the IO path: a direct write goes through it.
	out, errOut, code = c.run("emulate", "exec", "lat", "--", "dd", "if=/dev/zero", "of="+filepath.Join(st.MountPath, "f"), "bs=4k", "count=50", "oflag=direct,dsync")
	if code != 0 {
		t.Fatalf("dd: %s %s", out, errOut)
	}
	// The layer's daemon dies hard: ls says so, rm still cleans up.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := 0; d.Status().Latency.Serving; i++ {
		if i > 200 {
			t.Fatal("the latency daemon survived SIGKILL")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if out, _, _ := c.run("emulate", "ls"); !strings.Contains(out, "latency layer not serving") {
		t.Errorf("ls does not report the dead latency layer:\n%s", out)
	}
	out, errOut, code = c.run("emulate", "rm", "lat")
	if code != 0 {
		t.Fatalf("rm: %d %s %s", code, out, errOut)
	}
	if mountedUnder(c.root) {
		t.Error("mounts left under the state root")
	}
	if l := loopsBacking(filepath.Join(c.root, "lat", "lat", "disk")); len(l) > 0 {
		t.Errorf("loop devices left: %v", l)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err != nil {
			break
		}
		if b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); !strings.Contains(string(b), "latency") {
			break
		}
		if i > 100 {
			t.Fatalf("latency daemon %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCLIRmAllLeavesForeignDirectories: the reproduction, as a
// user types it: 'mkdir -p D/photos; iolens emulate rm --all --state-dir
// D' printed "removed photos" and deleted it.
func TestCLIRmAllLeavesForeignDirectories(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := iolens{t: t, exe: exe, root: t.TempDir()}
	photo := filepath.Join(c.root, "photos", "cat.jpg")
	if err := os.MkdirAll(filepath.Dir(photo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(photo, []byte("cat"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"emulate", "rm", "--all"}, {"emulate", "rm", "--all", "--force"}} {
		out, errOut, code := c.run(args...)
		if code != 0 || strings.Contains(out, "removed") {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errOut)
		}
	}
	_, errOut, code := c.run("emulate", "rm", "photos")
	if code == 0 || !strings.Contains(errOut, "marker") {
		t.Errorf("rm photos: exit %d, %q; want a refusal naming the missing marker", code, errOut)
	}
	if b, err := os.ReadFile(photo); err != nil || string(b) != "cat" {
		t.Errorf("photos/cat.jpg: %q, %v", b, err)
	}
}

// TestCLIStateFIFO: 'emulate status' and 'emulate ls' on a disk whose
// state.json is a FIFO hung in open(2), deaf to SIGINT and SIGTERM. They
// now refuse it at once and say how to remove it.
func TestCLIStateFIFO(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := iolens{t: t, exe: exe, root: t.TempDir(), timeout: 15 * time.Second}
	dir := filepath.Join(c.root, "fifo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".iolens-emulated-disk"), []byte("iolens emulated disk fifo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "state.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"emulate", "status", "fifo"}, {"emulate", "ls"}, {"emulate", "events", "fifo"}} {
		start := time.Now()
		_, errOut, code := c.run(args...)
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%v took %v", args, took)
		}
		if code == 0 || !strings.Contains(errOut, "not a regular file") {
			t.Errorf("%v: exit %d, %q; want a refusal naming the FIFO", args, code, errOut)
		}
	}
}

// leftovers lists what a disk under root left behind: entries of the
// state root, mounts under it, loop devices on its files.
func leftovers(root string) []string {
	var out []string
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		out = append(out, "file "+e.Name())
	}
	if mountedUnder(root) {
		out = append(out, "a mount")
	}
	sys, _ := os.ReadDir("/sys/block")
	for _, e := range sys {
		b, _ := os.ReadFile(filepath.Join("/sys/block", e.Name(), "loop", "backing_file"))
		if strings.HasPrefix(strings.TrimSpace(string(b)), root+"/") {
			out = append(out, "loop device "+e.Name())
		}
	}
	return out
}

// TestCLICreateOutputFails: 'emulate create ... | head -1' died of
// SIGPIPE (exit 141) part way, leaving a broken disk. A reader that is
// gone, or an output that cannot be written (/dev/full), now makes create
// undo the disk and fail: nothing is left behind.
func TestCLICreateOutputFails(t *testing.T) {
	needRoot(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	realio.Cleanup(t, func() { _, _ = emulate.RemoveAll(context.Background(), root, true) })
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	for _, c := range []struct {
		name   string
		closed bool // stdout and stderr are pipes whose reader is gone
		args   []string
	}{{"pipe", true, []string{"--latency", "1ms"}}, {"full", false, nil}} {
		cmd := exec.Command(exe, append([]string{"emulate", "create", "out-" + c.name, "--state-dir", root, "--size", "128M"}, c.args...)...)
		cmd.Env = append(os.Environ(), "IOLENS_TEST_AS_CLI=1")
		var err error
		if c.closed {
			r, w, perr := os.Pipe()
			if perr != nil {
				t.Fatal(perr)
			}
			r.Close()
			cmd.Stdout, cmd.Stderr = w, w
			err = cmd.Run()
			w.Close()
		} else {
			var errb strings.Builder
			cmd.Stdout, cmd.Stderr = full, &errb
			err = cmd.Run()
			if !strings.Contains(errb.String(), "nothing left behind") {
				t.Errorf("%s: stderr %q does not say the disk was removed", c.name, errb.String())
			}
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("%s: create ended with %v, want exit status 1", c.name, err)
		}
		if l := leftovers(root); len(l) > 0 {
			t.Errorf("%s: left behind: %v", c.name, l)
		}
	}
}

// TestCLIDaemonDescriptors: the controller kept the caller's fd 3 (a
// lock file) open until 'emulate rm'. The daemons now hold none of the
// caller's descriptors, and their stdin is /dev/null.
func TestCLIDaemonDescriptors(t *testing.T) {
	needRoot(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	lock, err := os.Create(filepath.Join(t.TempDir(), "caller.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	cmd := exec.Command(exe, "emulate", "create", "fds", "--state-dir", root, "--size", "128M", "--latency", "1ms")
	cmd.Env = append(os.Environ(), "IOLENS_TEST_AS_CLI=1")
	cmd.ExtraFiles = []*os.File{lock} // fd 3 in create
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("create: %v: %s", err, out)
	}
	d, err := emulate.OpenIn(root, "fds")
	if err != nil {
		t.Fatal(err)
	}
	realio.Cleanup(t, func() { _ = d.ForceDestroy(context.Background()) })
	for what, pid := range map[string]int{"controller": d.ControllerPID, "latency": d.FusePID} {
		if pid <= 0 {
			t.Fatalf("no %s daemon", what)
		}
		fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range fds {
			target, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
			if target == lock.Name() {
				t.Errorf("the %s daemon holds the caller's %s as fd %s", what, lock.Name(), fd.Name())
			}
			if fd.Name() == "0" && target != "/dev/null" {
				t.Errorf("the %s daemon's stdin is %s", what, target)
			}
		}
	}
}

// TestCLISpaceCheck: a disk larger than the state directory's free space
// (less a reserve) is refused before anything is made, with the size
// that would fit.
func TestCLISpaceCheck(t *testing.T) {
	if r := emulate.Unavailable(); r != "" {
		t.Skip(r)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := iolens{t: t, exe: exe, root: t.TempDir()}
	var st syscall.Statfs_t
	if err := syscall.Statfs(c.root, &st); err != nil {
		t.Fatal(err)
	}
	size := st.Bavail*uint64(st.Bsize) + 1<<30
	_, errOut, code := c.run("emulate", "create", "huge", "--size", strconv.FormatUint(size>>20, 10)+"M")
	if code != 1 || !strings.Contains(errOut, "not enough space") || !strings.Contains(errOut, "--size") {
		t.Errorf("create beyond the free space: exit %d, %q", code, errOut)
	}
	if l := leftovers(c.root); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
}
