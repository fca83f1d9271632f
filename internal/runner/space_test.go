package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// countingFio is a stand-in for fio that answers --version and
// --enghelp, and appends a line to the file it returns for every job it
// is asked to run (printing the fixture as its report).
func countingFio(t *testing.T, fixture string) (bin, calls string) {
	t.Helper()
	abs, err := filepath.Abs(fixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, calls = filepath.Join(dir, "fio"), filepath.Join(dir, "calls")
	script := fmt.Sprintf("#!/bin/sh\ncase \"$1\" in\n--version) echo fio-3.33; exit 0;;\n--enghelp=*) exit 0;;\nesac\necho \"$@\" >> '%s'\ncat '%s'\n", calls, abs)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, calls
}

// One extent check covers every file a test touches: size, filesize,
// offset, offset_increment and numjobs, in a file of the test's own or
// in the shared one, all before fio starts. (filesize=, and offsets in a
// test's own file, once filled a file system.)
func TestSpaceCheckedBeforeFio(t *testing.T) {
	for _, tc := range []struct{ name, job string }{
		{"own file, offset_increment x numjobs", "[a]\nrw=write\nsize=1g\nnumjobs=64\noffset_increment=1t\n"},
		{"own file, offset", "[a]\nrw=write\nsize=1m\noffset=1p\n"},
		{"own file, filesize", "[a]\nrw=write\nsize=1m\nfilesize=1p\n"},
		{"own file, offset_align", "[a]\nrw=write\nsize=1m\noffset=1\noffset_align=64m\nnumjobs=64\noffset_increment=1t\n"},
		{"shared file, filesize", "[a]\nfilename=x\nrw=write\nfilesize=1p\n"},
		{"shared file, offset", "[a]\nfilename=x\nrw=write\nsize=1m\noffset=1p\n"},
		{"shared file, offset past its end", "[a]\nfilename=x\nrw=write\noffset=1p\n"},
		{"shared file, offset_increment x numjobs", "[a]\nfilename=x\nrw=write\nnumjobs=64\noffset_increment=1t\n"},
		{"a later section", "[a]\nrw=read\nsize=1m\n[b]\nrw=write\nsize=1m\nfilesize=1p\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			suite, err := SuiteFromJobFile("s.fio", tc.job)
			if err != nil {
				t.Fatal(err)
			}
			bin, calls := countingFio(t, "../fio/testdata/randread_4k_qd8.jsonplus.json")
			dir := t.TempDir()
			err = Run(context.Background(), Config{Suite: suite, Dir: dir, FioBinary: bin, NoPrecondition: true, WritebackCap: -1},
				func(result.Result) error { return nil }, nil)
			var se *SpaceError
			var re *RegionError
			if !errors.As(err, &se) && !errors.As(err, &re) {
				t.Fatalf("err = %v, want the run refused for space", err)
			}
			if hintOf(err) == "" {
				t.Errorf("%v: no hint", err)
			}
			if b, _ := os.ReadFile(calls); len(b) > 0 {
				t.Errorf("fio ran: %s", b)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("left behind: %v", ents)
			}
		})
	}
}

// Where a test's IO goes, as written for fio, stays in the shared file:
// jobs that split it keep to it from their offset, and a job's own size
// is passed as it is.
func TestRegionStaysInFile(t *testing.T) {
	const G = int64(1 << 30)
	r := &runner{cfg: Config{SampleInterval: 1e9}, engine: "libaio", scratch: "/s", sharedFile: "/s/iolens.dat", target: result.Target{SizeBytes: G}}
	for _, tc := range []struct {
		job       string
		size, inc int64
	}{
		{"[a]\nfilename=x\nnumjobs=4\n", G / 4, G / 4},
		{"[a]\nfilename=x\nnumjobs=4\noffset=896m\n", 32 << 20, 32 << 20},
		{"[a]\nfilename=x\nnumjobs=2\nsize=256m\n", 256 << 20, 0},
		{"[a]\nfilename=x\nnumjobs=2\noffset_increment=256m\n", G - 256<<20, 0},
	} {
		suite, err := SuiteFromJobFile("s.fio", tc.job)
		if err != nil {
			t.Fatal(err)
		}
		s := r.effective(suite.Tests[0])
		g, err := r.region(s)
		if err != nil {
			t.Errorf("%q: %v", tc.job, err)
			continue
		}
		if g.size != tc.size || g.inc != tc.inc || g.end > G {
			t.Errorf("%q: size %d inc %d end %d, want size %d inc %d within %d", tc.job, g.size, g.inc, g.end, tc.size, tc.inc, G)
		}
	}
}

// What a test measured is its target: a test of its own file says so,
// with that file's size, not the shared file's.
func TestOwnFileTarget(t *testing.T) {
	suite, err := SuiteFromJobFile("s.fio", "[shared]\nfilename=x\nrw=randread\nruntime=1\n[own]\nrw=randread\nsize=8m\nruntime=1\n")
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := countingFio(t, "../fio/testdata/randread_4k_qd8.jsonplus.json")
	var got []result.Result
	err = Run(context.Background(), Config{Suite: suite, Dir: t.TempDir(), FioBinary: bin, SizeBytes: 64 << 20, NoPrecondition: true, WritebackCap: -1},
		func(r result.Result) error { got = append(got, r); return nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Target.SizeBytes != 64<<20 || got[1].Target.SizeBytes != 8<<20 || !strings.Contains(got[1].Target.SizeReason, "own") {
		for _, r := range got {
			t.Errorf("%s: target %+v", r.Test.Name, r.Target)
		}
	}
}
