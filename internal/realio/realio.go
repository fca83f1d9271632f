// Package realio keeps tests that time real IO on this machine from
// overlapping. go test runs packages in parallel, and a developer may run
// two clones' tests at once; on a small machine two loop-device tests at
// once starve each other's IO and the timings they check (a stall's start,
// a cap's rate) stop meaning anything. Tests that measure call Exclusive
// (or Real) first.
package realio

import (
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// MachineLock is what Exclusive locks: the root directory, which every
// process of the machine (in this mount namespace) sees as the same inode,
// whatever its working directory or clone. An flock leaves no file behind
// and goes with the process. Benchmark scripts take it with flock(1).
const MachineLock = "/"

// Exclusive waits until no other holder of the machine lock is running, in
// any package or clone, and holds it until t ends. Under -short it skips
// the test: the short run (make test-unit) does no real IO.
func Exclusive(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: real IO")
	}
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

// Lock takes an exclusive flock on path, waiting for other holders, and
// returns its release and how long it waited.
func Lock(path string) (release func(), waited time.Duration, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
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
	if testing.Short() {
		t.Skip("-short: real loop devices and IO")
	}
	if unavailable != "" {
		t.Skip(unavailable)
	}
	Exclusive(t)
}
