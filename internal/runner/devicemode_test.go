package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
	"golang.org/x/sys/unix"
)

// allocated is how much of a sparse image file is written.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// A device run measures the device: job sections with size=, the
// fdatasync test and reads all run on it, the result names it as the
// target, and reads run with --readonly. (They once ran in $TMPDIR, on
// another disk, credited to the device: its image stayed empty.)
func TestDeviceRunStaysOnDevice(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("needs fio")
	}
	// The lock first: a test that times out waiting for it must not
	// have attached a loop device its cleanup never detaches.
	realio.Exclusive(t)
	dev := loopDevice(t, 128<<20)
	img := backingFile(t, dev)
	suite, err := SuiteFromJobFile("d.fio", "[w]\nrw=write\nbs=1m\nsize=16m\ndirect=1\nioengine=libaio\n[r]\nrw=read\nbs=1m\nsize=8m\ndirect=1\n")
	if err != nil {
		t.Fatal(err)
	}
	fsync := fsyncTest("fdatasync-2300", 0)
	fsync.SizeBytes = 1 << 20
	suite.Tests = append(suite.Tests, fsync)
	before := allocated(t, img)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var got []result.Result
	err = Run(context.Background(), Config{Suite: suite, Device: dev, Destructive: true, WritebackCap: -1},
		func(r result.Result) error { got = append(got, r); return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d results", len(got))
	}
	for _, r := range got {
		if r.Status != "ok" || !strings.Contains(r.FioJob, "filename="+dev+"\n") || strings.Contains(r.FioJob, ".dat") {
			t.Errorf("%s: %s %s, job:\n%s", r.Test.Name, r.Status, r.Error, r.FioJob)
		}
		if r.Target.Kind != "device" || r.Target.Path != dev || !strings.Contains(r.Target.SizeReason, "own region of "+dev) {
			t.Errorf("%s: target %+v", r.Test.Name, r.Target)
		}
		if reads := !r.Test.Writes(); reads != contains(r.FioArgs, "--readonly") {
			t.Errorf("%s: fio args %v", r.Test.Name, r.FioArgs)
		}
	}
	if grew := allocated(t, img) - before; grew < 16<<20 {
		t.Errorf("the device's image grew by %d bytes: the 16 MiB write did not reach it", grew)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("left in TMPDIR: %v", ents)
	}
}

// A test larger than the device is refused before anything runs, saying
// by how much: size=500g on a 128 MiB device.
func TestDeviceTooSmallRefused(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("needs fio")
	}
	dev := loopDevice(t, 128<<20)
	for _, job := range []string{"[w]\nrw=write\nsize=500g\n", "[w]\nfilename=x\nrw=write\nsize=500g\n", "[w]\nrw=write\nsize=1m\noffset=127m\nnumjobs=2\noffset_increment=1m\n"} {
		suite, err := SuiteFromJobFile("big.fio", job)
		if err != nil {
			t.Fatal(err)
		}
		bin, calls := countingFio(t, "../fio/testdata/randread_4k_qd8.jsonplus.json")
		err = Run(context.Background(), Config{Suite: suite, Device: dev, Destructive: true, FioBinary: bin},
			func(result.Result) error { t.Error("a test ran"); return nil }, nil)
		var re *RegionError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), dev) || !strings.Contains(err.Error(), "128.0 MiB") || hintOf(err) == "" {
			t.Errorf("%q: err = %v", job, err)
		}
		if b, _ := os.ReadFile(calls); len(b) > 0 {
			t.Errorf("fio ran: %s", b)
		}
	}
	// --size larger than the device is refused too.
	bin, _ := countingFio(t, "../fio/testdata/randread_4k_qd8.jsonplus.json")
	err := Run(context.Background(), Config{Suite: result.Suite{Name: "s", Tests: []result.TestSpec{t1()}}, Device: dev, SizeBytes: 1 << 30, FioBinary: bin},
		func(result.Result) error { t.Error("a test ran"); return nil }, nil)
	if !strings.Contains(errString(err), "128.0 MiB") {
		t.Errorf("--size 1g on a 128 MiB device: %v", err)
	}
}

func t1() result.TestSpec {
	return result.TestSpec{Name: "r", RW: "randread", BlockSize: 4096, IODepth: 1, NumJobs: 1, IOEngine: "psync", RuntimeS: 1}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// On a mounted device only reads run, and every one of them, a job
// section of its own size included, runs on the device with fio's
// --readonly, as the note says.
func TestMountedDeviceReadsAreReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fio on a loop device")
	}
	_, dev := loopFS(t)
	suite, err := SuiteFromJobFile("r.fio", "[r]\nrw=randread\nsize=8m\nruntime=1\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []result.Result
	var notes []string
	err = Run(context.Background(), Config{Suite: suite, Device: dev},
		func(r result.Result) error { got = append(got, r); return nil },
		func(e Event) {
			if e.Kind == EventInfo {
				notes = append(notes, e.Message)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "fio runs with --readonly") {
		t.Errorf("no note: %q", notes)
	}
	if len(got) != 1 || got[0].Status != "ok" || !contains(got[0].FioArgs, "--readonly") || !strings.Contains(got[0].FioJob, "filename="+dev+"\n") {
		t.Fatalf("results: %+v", got)
	}
}

// A device named by a relative path (here a symlink in the working
// directory) is the device: fio runs in the scratch directory, where the
// same relative name would be a new file, measured instead of the device.
func TestDeviceRelativePath(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("needs fio")
	}
	realio.Exclusive(t)
	dev := loopDevice(t, 128<<20)
	img := backingFile(t, dev)
	suite, err := SuiteFromJobFile("d.fio", "[w]\nrw=write\nbs=1m\nsize=16m\ndirect=1\nioengine=libaio\n")
	if err != nil {
		t.Fatal(err)
	}
	wd := t.TempDir()
	if err := os.Symlink(dev, filepath.Join(wd, "disk")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	t.Setenv("TMPDIR", t.TempDir())
	before := allocated(t, img)
	var got []result.Result
	err = Run(context.Background(), Config{Suite: suite, Device: "disk", Destructive: true, WritebackCap: -1},
		func(r result.Result) error { got = append(got, r); return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Status != "ok" {
		t.Fatalf("results: %+v", got)
	}
	if grew := allocated(t, img) - before; grew < 16<<20 {
		t.Errorf("the device's image grew by %d bytes: the 16 MiB write did not reach it; job:\n%s", grew, got[0].FioJob)
	}
}
