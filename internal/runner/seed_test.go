package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
)

func TestChooseSuiteSize(t *testing.T) {
	const G = int64(1 << 30)
	size, reason, err := chooseSuiteSize(10*G, Space{FreeBytes: 80 * G}, 0, "/x")
	if err != nil || size != 10*G || !strings.Contains(reason, "suite's own size, 10.0 GiB") {
		t.Errorf("fits: %d %q %v", size, reason, err)
	}
	_, _, err = chooseSuiteSize(10*G, Space{FreeBytes: 5 * G}, 0, "/x")
	var se *SpaceError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "10.0 GiB") || !strings.Contains(err.Error(), "5.0 GiB is free") || !strings.Contains(se.Hint(), "--size") {
		t.Errorf("too small: %v (hint %q)", err, hintOf(err))
	}
}

// Seed 000's jobs.fio, run as written on a small file: every test runs,
// each says its filename was not used and its size was scaled down, and
// none is time based.
func TestSeed000JobFileRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 8 fio tests")
	}
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("needs fio")
	}
	realio.Exclusive(t)
	b, err := os.ReadFile("testdata/seed000-jobs.fio")
	if err != nil {
		t.Fatal(err)
	}
	suite, err := SuiteFromJobFile("jobs.fio", string(b))
	if err != nil {
		t.Fatal(err)
	}
	var got []result.Result
	err = Run(context.Background(), Config{Suite: suite, Dir: t.TempDir(), SizeBytes: 32 << 20, RuntimeS: 2, WritebackCap: -1},
		func(r result.Result) error { got = append(got, r); return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 8 {
		t.Fatalf("%d results", len(got))
	}
	for _, r := range got {
		notes := strings.Join(r.Notes, "\n")
		if r.Status != "ok" || !strings.Contains(notes, "filename=/tmp/fio-test-file is not used") || !strings.Contains(notes, "size scaled down from 10.0 GiB to 32.0 MiB (set with --size)") {
			t.Errorf("%s: %s %s; notes:\n%s", r.Test.Name, r.Status, r.Error, notes)
		}
		if strings.Contains(r.FioJob, "time_based") || strings.Contains(r.FioJob, "/tmp/fio-test-file") || !strings.Contains(r.FioJob, "size=33554432") {
			t.Errorf("%s: job:\n%s", r.Test.Name, r.FioJob)
		}
		if r.Test.SizeBytes != 32<<20 || len(r.Test.Notes) != 0 {
			t.Errorf("%s: test %+v", r.Test.Name, r.Test)
		}
	}
}

// A seed suite on a file system too small for its file is refused with
// the numbers, and told how to scale down.
func TestSeedSuiteTooBig(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("needs fio")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=300m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	defer func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v: %s", err, out)
		}
	}()
	suite, _ := LookupSuite("ibm-vpc")
	err := Run(context.Background(), Config{Suite: suite, Dir: dir}, func(result.Result) error { return nil }, nil)
	var se *SpaceError
	if !errors.As(err, &se) || se.SuiteSize != 5<<30 || !strings.Contains(err.Error(), "5.0 GiB") || !strings.Contains(se.Hint(), "--size") {
		t.Errorf("err = %v, hint %q", err, hintOf(err))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

func TestSelectTests(t *testing.T) {
	s, err := LookupSuite("aks-2019")
	if err != nil {
		t.Fatal(err)
	}
	one, err := SelectTests(s, []string{"test1-write-4k-qd1-direct"})
	if err != nil || len(one.Tests) != 1 || one.Tests[0].Name != "test1-write-4k-qd1-direct" || one.Name != "aks-2019" {
		t.Fatalf("%+v %v", one, err)
	}
	if all, _ := SelectTests(s, nil); len(all.Tests) != len(s.Tests) {
		t.Error("no names kept fewer tests")
	}
	_, err = SelectTests(s, []string{"test9"})
	var ue *UnknownTestError
	if !errors.As(err, &ue) || !strings.Contains(ue.Hint(), "test8-randwrite-256k-qd16-buffered") {
		t.Errorf("unknown test: %v", err)
	}
}
