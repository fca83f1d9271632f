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
// where go test's default would leave them undone.
func TestCleanupOnInterrupt(t *testing.T) {
	if marker := os.Getenv("IOLENS_REALIO_INTERRUPT_CHILD"); marker != "" {
		Cleanup(t, func() { os.WriteFile(marker, []byte("cleaned"), 0o644) })
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		time.Sleep(10 * time.Second)
		t.Fatal("not interrupted")
	}
	marker := filepath.Join(t.TempDir(), "marker")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCleanupOnInterrupt$", "-test.count=1")
	cmd.Env = append(os.Environ(), "IOLENS_REALIO_INTERRUPT_CHILD="+marker)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("interrupted test binary: %v, want exit 130\n%s", err, out)
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "cleaned" {
		t.Errorf("the cleanup did not run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "realio: interrupt") {
		t.Errorf("no word of the interrupt:\n%s", out)
	}
}
