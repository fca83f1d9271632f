// Package iotest keeps tests that time real IO on this machine from
// overlapping. go test runs packages in parallel; on a small machine two
// packages' loop-device tests at once starve each other's IO and the
// timings they check (a stall's start, a cap's rate) stop meaning
// anything. Tests that measure call Exclusive first.
package iotest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Exclusive waits until no other test of this module that called it is
// running, in any package, and holds that until t ends. The lock is an
// flock on the module's root directory, so it leaves no file behind and
// goes with the process.
func Exclusive(t testing.TB) {
	t.Helper()
	f, err := os.Open(lockPath())
	if err != nil {
		t.Fatalf("iotest: %v", err)
	}
	start := time.Now()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("iotest: lock %s: %v", f.Name(), err)
	}
	if w := time.Since(start); w > time.Second {
		t.Logf("waited %.0f s for other IO tests to finish", w.Seconds())
	}
	t.Cleanup(func() { f.Close() })
}

// lockPath is what Exclusive locks; tests of this package lock their
// own directory.
var lockPath = lockDir

// lockDir is the module root (the directory with go.mod above the test's
// working directory), or the temporary directory.
func lockDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return os.TempDir()
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return os.TempDir()
		}
		dir = parent
	}
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
