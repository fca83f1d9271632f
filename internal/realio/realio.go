// Package realio keeps tests that time real IO on this machine from
// overlapping more than they can bear. go test runs packages in parallel,
// and a developer may run two clones' tests at once; on a small machine
// two loop-device tests at once starve each other's IO and the timings
// they check (a stall's start, a cap's rate) stop meaning anything.
//
// A test that measures the machine (its disk, its CPU, a latency layer
// that the CPU sets the pace of) calls Exclusive (or Real) first and runs
// alone. A test whose figures an emulated disk's caps set, on a disk held
// in RAM with caps far below what the machine does, calls Shared (or
// Capped): it runs beside at most Slots-1 other such tests and never
// beside an Exclusive one.
package realio

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// MachineLock is what Exclusive locks: the root directory, which every
// process of the machine (in this mount namespace) sees as the same inode,
// whatever its working directory or clone. An flock leaves no file behind
// and goes with the process. Benchmark scripts take it with flock(1).
// Shared holders take it shared, so an exclusive holder (a test, or a
// benchmark under 'flock /') waits for them and they wait for it.
const MachineLock = "/"

// SlotsEnv names the variable that sets how many Shared tests may run at
// once (DefaultSlots when unset; 1 runs them one at a time).
const SlotsEnv = "IOLENS_REALIO_SLOTS"

// DefaultSlots is how many Shared tests run at once: two, measured on a
// 2-core machine as not moving a capped figure.
const DefaultSlots = 2

// PassEnv names the variable that splits a run into passes: "exclusive"
// runs the Exclusive tests and skips the Shared ones, "shared" the other
// way round; unset runs both. make test runs the exclusive pass alone,
// then the shared pass (and after it the fuzz targets) beside the
// Kubernetes e2e, which does not move a capped figure.
const PassEnv = "IOLENS_REALIO_PASS"

// The values of PassEnv.
const (
	PassExclusive = "exclusive"
	PassShared    = "shared"
)

// Exclusive waits until no other holder of the machine lock is running, in
// any package or clone, and holds it until t ends. Under -short it skips
// the test: the short run (make test-unit) does no real IO.
func Exclusive(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: real IO")
	}
	inPass(t, PassExclusive)
	exclusiveOn(t, MachineLock)
}

func exclusiveOn(t testing.TB, path string) {
	t.Helper()
	release, waited, err := Lock(path)
	if err != nil {
		t.Fatalf("realio: %v", err)
	}
	if waited > time.Second {
		t.Logf("waited %.0f s for other IO tests to finish", waited.Seconds())
	}
	t.Cleanup(release)
}

// Shared waits for one of the machine's real-IO slots and for no
// Exclusive holder to be running, and holds both until t ends. Under
// -short it skips the test.
func Shared(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: real IO")
	}
	inPass(t, PassShared)
	n, err := Slots(os.Getenv(SlotsEnv))
	if err != nil {
		t.Fatalf("realio: %v", err)
	}
	sharedOn(t, MachineLock, "iolens-realio", n)
}

func sharedOn(t testing.TB, path, slotName string, slots int) {
	t.Helper()
	start := time.Now()
	releaseSlot, err := slot(slotName, slots)
	if err != nil {
		t.Fatalf("realio: %v", err)
	}
	t.Cleanup(releaseSlot)
	release, _, err := lock(path, unix.LOCK_SH)
	if err != nil {
		t.Fatalf("realio: %v", err)
	}
	t.Cleanup(release)
	if waited := time.Since(start); waited > time.Second {
		t.Logf("waited %.0f s for other IO tests to finish", waited.Seconds())
	}
}

// Long marks a test that -short skips but that measures nothing on the
// machine (a large input, a real etcd, iolens as a process with a stub
// fio): it runs in the shared pass only, so a package with tests in both
// passes runs it once, not twice. why says what makes it long.
func Long(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + why)
	}
	inPass(t, PassShared)
}

// inPass skips t when PassEnv names the other pass.
func inPass(t testing.TB, pass string) {
	t.Helper()
	run, err := RunsIn(os.Getenv(PassEnv), pass)
	if err != nil {
		t.Fatalf("realio: %v", err)
	}
	if !run {
		t.Skipf("%s=%s: a %s test, run in the %s pass", PassEnv, os.Getenv(PassEnv), pass, pass)
	}
}

// RunsIn says whether a test of the given pass (PassExclusive or
// PassShared) runs when PassEnv is v.
func RunsIn(v, pass string) (bool, error) {
	switch v {
	case "":
		return true, nil
	case PassExclusive, PassShared:
		return v == pass, nil
	}
	return false, fmt.Errorf("%s=%q: want %s, %s, or unset for both", PassEnv, v, PassExclusive, PassShared)
}

// Slots reads the value of SlotsEnv: empty is DefaultSlots.
func Slots(v string) (int, error) {
	if v == "" {
		return DefaultSlots, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 16 {
		return 0, fmt.Errorf("%s=%q: want a whole number from 1 to 16 (1 runs real-IO tests one at a time)", SlotsEnv, v)
	}
	return n, nil
}

// slot takes one of n machine-wide slots, waiting while all are taken. A
// slot is a name in the abstract unix socket namespace bound by its
// holder: the kernel lets one socket have a name at a time, frees it when
// the holder's process ends, and it leaves no file behind.
func slot(name string, n int) (release func(), err error) {
	for {
		for i := 0; i < n; i++ {
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return nil, fmt.Errorf("slot socket: %w", err)
			}
			err = unix.Bind(fd, &unix.SockaddrUnix{Name: fmt.Sprintf("@%s/slot/%d", name, i)})
			if err == nil {
				return func() { unix.Close(fd) }, nil
			}
			unix.Close(fd)
			if err != unix.EADDRINUSE {
				return nil, fmt.Errorf("slot %d: %w", i, err)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Lock takes an exclusive flock on path, waiting for other holders, and
// returns its release and how long it waited.
func Lock(path string) (release func(), waited time.Duration, err error) {
	return lock(path, unix.LOCK_EX)
}

func lock(path string, how int) (release func(), waited time.Duration, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, time.Since(start), nil
}

// Real is the preamble of a test that times real IO: it skips under
// -short, or with the reason the machine cannot run it when unavailable
// is not empty (emulate.Unavailable's answer, say), and otherwise makes
// the test Exclusive.
func Real(t testing.TB, unavailable string) {
	t.Helper()
	skipUnless(t, unavailable)
	Exclusive(t)
}

// Capped is Real for a test whose figures an emulated disk in RAM sets
// with caps far below what the machine does: it makes the test Shared.
func Capped(t testing.TB, unavailable string) {
	t.Helper()
	skipUnless(t, unavailable)
	Shared(t)
}

func skipUnless(t testing.TB, unavailable string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: real loop devices and IO")
	}
	if unavailable != "" {
		t.Skip(unavailable)
	}
}
