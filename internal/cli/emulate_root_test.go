package cli

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/realio"
)

// Issue 26.11: a user who is not root, asking for an emulated disk (which
// is root's: its mount and its cgroup), is told to run as root, not
// "permission denied"; and completion offers the emulated disks' names.
func TestEmulatedDiskNotRoot(t *testing.T) {
	if why := emulate.Unavailable(); why != "" {
		t.Skip(why)
	}
	state := t.TempDir()
	os.Chmod(state, 0o755)
	t.Setenv("IOLENS_EMULATE_DIR", state)
	t.Setenv("IOLENS_TEST_MAIN", "1") // the controller daemon is this binary, as iolens
	if _, errs, code := execute(t, "emulate", "create", "notroot", "--iops", "500", "--bw", "20MB/s", "--ram", "--size", "64MiB"); code != 0 {
		t.Fatalf("emulate create: exit %d: %s", code, errs)
	}
	realio.Cleanup(t, func() {
		if _, errs, code := execute(t, "emulate", "rm", "--force", "notroot"); code != 0 {
			t.Errorf("emulate rm: exit %d: %s", code, errs)
		}
	})
	out, _, _ := execute(t, "__complete", "run", "--emulated", "no")
	if !strings.Contains(out, "notroot\n") {
		t.Errorf("completion of --emulated does not offer the disk:\n%s", out)
	}
	out, _, _ = execute(t, "__complete", "emulate", "rm", "")
	if !strings.Contains(out, "notroot\n") {
		t.Errorf("completion of emulate rm does not offer the disk:\n%s", out)
	}

	// This test binary, where user nobody can run it.
	bin := filepath.Join(t.TempDir(), "iolens")
	os.Chmod(filepath.Dir(bin), 0o755)
	os.Chmod(filepath.Dir(filepath.Dir(bin)), 0o755) // the test's own directory
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(dst, src)
	src.Close()
	dst.Close()
	for _, c := range []string{"diagnose", "run"} {
		cmd := exec.Command(bin, c, "--emulated", "notroot", "--no-save")
		cmd.Env = append(os.Environ(), "IOLENS_TEST_MAIN=1", "IOLENS_EMULATE_DIR="+state, "HOME=/")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil || !strings.Contains(stderr.String(), "run it as root") || strings.Contains(stderr.String(), "permission denied") {
			t.Errorf("%s --emulated as nobody: %v\n%s", c, err, stderr.String())
		}
	}
}
