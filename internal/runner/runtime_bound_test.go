package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// printingFio writes a stand-in for fio that prints a real fio json+
// output for any job.
func printingFio(t *testing.T) string {
	t.Helper()
	fixture, err := filepath.Abs(filepath.Join("..", "fio", "testdata", "randread_4k_qd8.jsonplus.json"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "fio")
	script := "#!/bin/sh\ncase \"$1\" in\n--version) echo fio-3.33; exit 0;;\n--enghelp=*) exit 0;;\nesac\ncat '" + fixture + "'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// fioOption is the value of key in a job file iolens wrote ("" if absent).
func fioOption(job, key string) (string, bool) {
	for _, l := range strings.Split(job, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(l), "=")
		if k == key {
			return v, true
		}
	}
	return "", false
}

// Issue 34.5: --runtime bounds every test, job files included. A section
// with no runtime= (it stops at its size) ignored --runtime 2s: with
// rate_iops=1 it ran for the hour iolens gives such a test, with
// thinktime=20s or startdelay=300 past any bound. Now fio is given
// --runtime (less the waits, which fio spends outside its runtime), and
// waits that leave no time for IO are refused before fio runs.
func TestRuntimeBoundsJobFiles(t *testing.T) {
	for _, c := range []struct {
		name, section string
		runtime       float64
		// want is fio's runtime in the job iolens writes; refused the
		// option named when the test is refused before fio runs.
		want, refused string
		timeBased     bool
	}{
		{"rate_iops, no runtime", "rw=randread\nsize=16m\nrate_iops=1\n", 2, "2", "", false},
		{"size only", "rw=read\nsize=16m\n", 3, "3", "", false},
		{"time-based, own runtime", "rw=read\nruntime=60\ntime_based\n", 2, "2", "", true},
		{"thinktime within", "rw=randread\nsize=16m\nthinktime=500ms\n", 2, "1500ms", "", false},
		{"startdelay and thinktime within", "rw=randread\nruntime=60\ntime_based\nstartdelay=1\nthinktime=500ms\n", 4, "2500ms", "", true},
		{"thinktime 20s, no runtime", "rw=randread\nsize=16m\nthinktime=20s\n", 2, "", "thinktime", false},
		{"startdelay 300, no runtime", "rw=randread\nsize=16m\nstartdelay=300\n", 2, "", "startdelay", false},
		{"waits that fill the runtime", "rw=randread\nsize=16m\nstartdelay=1\nthinktime=1s\n", 2, "", "startdelay", false},
		{"no --runtime: the job's own", "rw=read\nruntime=7\ntime_based\n", 0, "7", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			suite, err := SuiteFromJobFile("t.fio", "[t]\n"+c.section)
			if err != nil {
				t.Fatal(err)
			}
			var got []result.Result
			err = Run(context.Background(), Config{Suite: suite, Dir: t.TempDir(), RuntimeS: c.runtime, NoPrecondition: true, SizeBytes: 64 << 20,
				FioBinary: printingFio(t)}, func(r result.Result) error { got = append(got, r); return nil },
				nil)
			if c.refused != "" {
				var se *SpecError
				if !errors.As(err, &se) || se.Field != c.refused || len(got) > 0 {
					t.Fatalf("err = %v, %d results; want %s refused before fio runs", err, len(got), c.refused)
				}
				return
			}
			if err != nil || len(got) != 1 {
				t.Fatalf("err = %v, %d results", err, len(got))
			}
			rt, _ := fioOption(got[0].FioJob, "runtime")
			_, tb := fioOption(got[0].FioJob, "time_based")
			if rt != c.want || tb != c.timeBased {
				t.Errorf("fio was given runtime=%s time_based=%v, want %s %v:\n%s", rt, tb, c.want, c.timeBased, got[0].FioJob)
			}
		})
	}
}

// The announcement says what bounds a run: the ramp and runtime of the
// timed tests, and for tests that stop at their size, the bound, never a
// guess that a slow disk would make false.
func TestAnnouncedDuration(t *testing.T) {
	for _, c := range []struct {
		name, job string
		runtime   float64
		want      string
	}{
		{"timed", "[a]\nruntime=2\ntime_based\nramp_time=1\n[b]\nruntime=3\ntime_based\n", 0, "2 tests x 1: about 8s of IO"},
		{"size-bound", "[a]\nsize=16m\n", 0, "1 tests x 1, each stopping at its size, within 60 min"},
		{"mixed", "[a]\nsize=16m\n[b]\nruntime=3\ntime_based\n", 0, "2 tests x 1: about 4s of IO after the test file is written, and 1 stopping at its size within 60 min"},
		{"size-bound under --runtime", "[a]\nsize=16m\nstartdelay=1\n[b]\nsize=16m\n", 5, "2 tests x 1: about 12s of IO"},
		{"buffered writes", "[a]\nrw=write\nsize=16m\nruntime=2\n", 0, "1 tests x 1: about 3s of IO after the test file is written; after each of the 1 buffered write tests, up to 1 s watching the writeback (--writeback-cap)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			suite, err := SuiteFromJobFile("t.fio", c.job)
			if err != nil {
				t.Fatal(err)
			}
			var announced string
			err = Run(context.Background(), Config{Suite: suite, Dir: t.TempDir(), RuntimeS: c.runtime, NoPrecondition: true, SizeBytes: 64 << 20,
				FioBinary: printingFio(t), WritebackCap: time.Second}, func(result.Result) error { return nil },
				func(e Event) {
					if e.Kind == EventInfo && strings.Contains(e.Message, " tests x ") {
						announced = e.Message
					}
				})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(announced, c.want) {
				t.Errorf("announced %q, want %q", announced, c.want)
			}
		})
	}
}

// fioPrinting writes a stand-in for fio that prints fixture for any job.
func fioPrinting(t *testing.T, fixture string) string {
	t.Helper()
	abs, err := filepath.Abs(fixture)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "fio")
	script := "#!/bin/sh\ncase \"$1\" in\n--version) echo fio-3.33; exit 0;;\n--enghelp=*) exit 0;;\nesac\ncat '" + abs + "'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Issue 34.5: a test whose IO all fell within its ramp (ramp_time=300
// with a size done in milliseconds) was reported with fio's rate over
// those milliseconds and a mean latency of 0. It is an error now. The
// fixture is fio 3.33's output of such a job (4 MiB of 4 KiB random
// reads on tmpfs, ramp_time=300, runtime=2): 1,024 IOs, no latency
// sample.
func TestAllIOInRampIsAnError(t *testing.T) {
	for _, c := range []struct {
		name, fixture string
		wantErr       bool
	}{
		{"all in the ramp", filepath.Join("testdata", "ramp_all_io_fio-3.33.jsonplus.json"), true},
		{"measured after the ramp", filepath.Join("..", "fio", "testdata", "randread_4k_qd8.jsonplus.json"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			suite, err := SuiteFromJobFile("t.fio", "[rampall]\nrw=randread\nsize=4m\nramp_time=300\nruntime=2\n")
			if err != nil {
				t.Fatal(err)
			}
			var got []result.Result
			err = Run(context.Background(), Config{Suite: suite, Dir: t.TempDir(), NoPrecondition: true, SizeBytes: 64 << 20,
				FioBinary: fioPrinting(t, c.fixture)}, func(r result.Result) error { got = append(got, r); return nil }, nil)
			if len(got) != 1 {
				t.Fatalf("%d results: %v", len(got), err)
			}
			failed := got[0].Status == "failed" && strings.Contains(got[0].Error, "within its") && strings.Contains(got[0].Error, "ramp_time")
			if failed != c.wantErr {
				t.Errorf("status %s, error %q; want an all-in-the-ramp error: %v", got[0].Status, got[0].Error, c.wantErr)
			}
			if c.wantErr && !errors.Is(err, ErrTestsFailed) {
				t.Errorf("run error %v", err)
			}
		})
	}
}
