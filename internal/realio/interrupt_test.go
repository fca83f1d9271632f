package realio

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A registered cleanup runs once: at the test's end, or when the pending
// ones run first (as on a signal), newest first.
func TestCleanupRunsOnce(t *testing.T) {
	var ran []int
	t.Run("registers", func(t *testing.T) {
		for i := 1; i <= 3; i++ {
			Cleanup(t, func() { ran = append(ran, i) })
		}
		if n := runPending(); n != 3 {
			t.Errorf("%d pending cleanups ran, want 3", n)
		}
	})
	if !slices.Equal(ran, []int{3, 2, 1}) {
		t.Errorf("cleanups ran %v, want [3 2 1]: once each, newest first", ran)
	}
	ran = nil
	t.Run("ends", func(t *testing.T) {
		Cleanup(t, func() { ran = append(ran, 1) })
	})
	if n := runPending(); n != 0 || !slices.Equal(ran, []int{1}) {
		t.Errorf("after the test ended: %d pending ran, cleanups %v; want 0 and [1]", n, ran)
	}
}

// Interrupted, a test binary runs the pending cleanups and exits 130,
// where go test's default would leave them undone: also when its output
// is a pipe nobody reads any more (go test may exit first), and for what
// a test registers after the signal. A second interrupt ends it at once.
func TestCleanupOnInterrupt(t *testing.T) {
	if child := os.Getenv("IOLENS_REALIO_INTERRUPT_CHILD"); child != "" {
		interruptChild(t, child)
		return
	}
	for _, mode := range []string{"once", "closed-pipe", "late", "twice"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestCleanupOnInterrupt$", "-test.count=1")
			cmd.Env = append(os.Environ(), "IOLENS_REALIO_INTERRUPT_CHILD="+mode+":"+dir)
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if mode == "closed-pipe" {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				r.Close()
				defer w.Close()
				cmd.Stdout, cmd.Stderr = w, w
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if mode == "twice" {
				waitFile(t, filepath.Join(dir, "started"))
				cmd.Process.Signal(os.Interrupt)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("interrupted test binary: %v, want an exit status\n%s", err, out.String())
			}
			cleaned := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
			if mode == "twice" {
				if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT || cleaned("cleaned") {
					t.Errorf("interrupted twice: %v, cleanup done %v; want killed by SIGINT halfway through\n%s", err, cleaned("cleaned"), out.String())
				}
				return
			}
			if ee.ExitCode() != 130 || !cleaned("cleaned") {
				t.Errorf("interrupted: %v, cleanup done %v; want exit 130 and the cleanup done\n%s", err, cleaned("cleaned"), out.String())
			}
			if mode == "late" && !cleaned("late") {
				t.Errorf("a cleanup registered after the signal did not run\n%s", out.String())
			}
			if mode == "once" && !strings.Contains(out.String(), "realio: interrupt") {
				t.Errorf("no word of the interrupt:\n%s", out.String())
			}
		})
	}
}

// interruptChild is the test binary TestCleanupOnInterrupt interrupts:
// child is MODE:DIR.
func interruptChild(t *testing.T, child string) {
	mode, dir, _ := strings.Cut(child, ":")
	mark := func(name string) { os.WriteFile(filepath.Join(dir, name), nil, 0o644) }
	Cleanup(t, func() {
		mark("started")
		if mode == "twice" || mode == "late" {
			time.Sleep(time.Second)
		}
		if mode == "twice" {
			time.Sleep(20 * time.Second)
		}
		mark("cleaned")
	})
	if mode != "twice" {
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	} else {
		// The parent's first interrupt; its second comes once the
		// cleanup has started.
		go func() { time.Sleep(100 * time.Millisecond); syscall.Kill(os.Getpid(), syscall.SIGINT) }()
	}
	if mode == "late" {
		time.Sleep(300 * time.Millisecond)
		Cleanup(t, func() { mark("late") })
	}
	time.Sleep(30 * time.Second)
	t.Fatal("not interrupted")
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear", path)
}
