package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// hangingFio writes a stand-in for fio that answers --version and
// --enghelp, then hangs on a job; with ignoreInt it ignores SIGINT too.
func hangingFio(t *testing.T, ignoreInt bool) string {
	t.Helper()
	trap := ""
	if ignoreInt {
		trap = "trap '' INT\n"
	}
	bin := filepath.Join(t.TempDir(), "fio")
	script := fmt.Sprintf("#!/bin/sh\ncase \"$1\" in\n--version) echo fio-3.33; exit 0;;\n--enghelp=*) exit 0;;\nesac\n%swhile :; do sleep 1; done\n", trap)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// A fio that never ends is stopped past the test's runtime and a margin,
// and the result says so; one that ignores SIGINT is killed.
func TestStuckFioIsStopped(t *testing.T) {
	spec := result.TestSpec{Name: "r", RW: "read", BlockSize: 4096, IODepth: 1, NumJobs: 1, IOEngine: "psync", RuntimeS: 1, Direct: true}
	for _, ignoreInt := range []bool{false, true} {
		t.Run(fmt.Sprintf("ignores SIGINT %v", ignoreInt), func(t *testing.T) {
			t.Parallel() // each waits out its own hanging fio
			var got []result.Result
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := Run(ctx, Config{Suite: result.Suite{Name: "s", Tests: []result.TestSpec{spec}}, Dir: t.TempDir(), FioBinary: hangingFio(t, ignoreInt),
				NoPrecondition: true, SizeBytes: 64 << 20, BoundMargin: time.Second},
				func(r result.Result) error { got = append(got, r); return nil }, nil)
			took := time.Since(start)
			if ctx.Err() != nil {
				t.Fatalf("the run was still going after %s: fio was never stopped", took)
			}
			if !errors.Is(err, ErrTestsFailed) || len(got) != 1 || got[0].Status != "failed" || !strings.Contains(got[0].Error, "past its bound") {
				t.Fatalf("err %v, results %+v", err, got)
			}
			if ignoreInt != strings.Contains(got[0].Error, "killed") {
				t.Errorf("error %q: killed should be said when fio ignored SIGINT", got[0].Error)
			}
			// runtime 1 s + margin 1 s, then 1 s of grace to stop.
			if took > 15*time.Second {
				t.Errorf("stopped after %s", took)
			}
			t.Logf("stopped after %s: %s", took.Round(100*time.Millisecond), got[0].Error)
		})
	}
}

// The waits are checked against the runtime a test will really have:
// --runtime 2 makes a 5 s thinktime run past it, and the run is refused
// before fio runs a test.
func TestWaitsCheckedAfterOverrides(t *testing.T) {
	suite, err := SuiteFromJobFile("t.fio", "[t]\nruntime=60\ntime_based\nthinktime=5s\n")
	if err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), Config{Suite: suite, Dir: t.TempDir(), RuntimeS: 2, NoPrecondition: true, SizeBytes: 64 << 20,
		FioBinary: hangingFio(t, false)}, func(result.Result) error { t.Error("a test ran"); return nil }, nil)
	var se *SpecError
	if !errors.As(err, &se) || se.Field != "thinktime" || se.Hint() == "" {
		t.Fatalf("err = %v, want thinktime refused", err)
	}
}
