package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/iolens/iolens/internal/realio"
)

// A DIR on the root file system while another disk is mounted is named in
// the first line run prints and in the verdict: a mistyped path or a
// volume that is not mounted gives the root disk's answer.
func TestRootDiskInFirstLineAndVerdict(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a loop device")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	needFio(t)
	base := t.TempDir()
	var st, root unix.Stat_t
	if unix.Stat(base, &st) != nil || unix.Stat("/", &root) != nil || st.Dev != root.Dev {
		t.Skip("the test's temporary directory is not on the root file system")
	}
	img := filepath.Join(base, "other.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Skipf("no loop device: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	realio.Cleanup(t, func() { _ = exec.Command("losetup", "-d", dev).Run() })
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs: %v: %s", err, out)
	}
	mnt := filepath.Join(base, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", dev, mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	realio.Cleanup(t, func() { _ = exec.Command("umount", mnt).Run() })
	job := filepath.Join(base, "j.fio")
	if err := os.WriteFile(job, []byte("[r]\nrw=randread\nbs=4k\nruntime=1\ntime_based\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(base, "data")
	stdout, stderr, code := execute(t, "run", "--job", job, "--size", "16M", "--no-save", "--no-metadata", "--create", target)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	first, _, _ := strings.Cut(stderr, "\n")
	other := filepath.Base(dev) + " at " + mnt
	if !strings.Contains(first, "this is the root disk") || !strings.Contains(first, other) {
		t.Errorf("first line: %q", first)
	}
	if !strings.Contains(stdout, "target: this is the root disk") {
		t.Errorf("verdict does not name the root disk:\n%s", stdout)
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("%s, which iolens created, was left behind", target)
	}
}
