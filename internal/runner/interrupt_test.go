package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// Issue 39.1: the test a signal cuts is kept, failed and marked
// interrupted, so that the copies and the history say where the run
// stopped (it used to vanish, and the run listed like a complete one).
func TestCutTestIsKeptAndMarked(t *testing.T) {
	dir := t.TempDir()
	fixture, err := filepath.Abs("testdata/exec_prerun_failed.fio33.json")
	if err != nil {
		t.Fatal(err)
	}
	// The first job answers at once; the second runs until it is stopped.
	bin := filepath.Join(dir, "fio")
	marker := filepath.Join(dir, "started")
	script := fmt.Sprintf("#!/bin/sh\ncase \"$1\" in\n--version) echo fio-3.33; exit 0;;\n--enghelp=*) exit 0;;\nesac\n"+
		"if [ -e '%s' ]; then exec sleep 60; fi\n: > '%s'\ncat '%s'\n", marker, marker, fixture)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := func(name string) result.TestSpec {
		return result.TestSpec{Name: name, RW: "read", BlockSize: 4096, IODepth: 1, NumJobs: 1, IOEngine: "psync", RuntimeS: 1}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []result.Result
	progress := func(e Event) {
		if e.Kind == EventTestStart && e.Index == 2 {
			time.AfterFunc(300*time.Millisecond, cancel)
		}
	}
	start := time.Now()
	err = Run(ctx, Config{Suite: result.Suite{Name: "s", Tests: []result.TestSpec{spec("a"), spec("b"), spec("c")}}, Dir: t.TempDir(),
		FioBinary: bin, NoPrecondition: true, SizeBytes: 64 << 20},
		func(r result.Result) error { got = append(got, r); return nil }, progress)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("run error %v, want context.Canceled", err)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("the cut test ran on for %v", time.Since(start))
	}
	if len(got) != 2 {
		t.Fatalf("%d results, want the first and the cut one", len(got))
	}
	if got[0].Interrupted() {
		t.Errorf("the first test is marked: %q", got[0].Notes)
	}
	if cut := got[1]; cut.Test.Name != "b" || cut.Status != "failed" || !cut.Interrupted() {
		t.Errorf("the cut test: %s %s %q %q", cut.Test.Name, cut.Status, cut.Error, cut.Notes)
	}
	if st := result.StatusOfResults(got); st.State != result.RunInterrupted {
		t.Errorf("status %v", st)
	}
}
