package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/diskstats"
	"github.com/iolens/iolens/internal/result"
)

// fakeFio writes a stand-in for fio that answers --version and
// --enghelp, and prints the fixture for a job.
func fakeFio(t *testing.T, fixture string) string {
	t.Helper()
	abs, err := filepath.Abs(fixture)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "fio")
	script := fmt.Sprintf("#!/bin/sh\ncase \"$1\" in\n--version) echo fio-3.33; exit 0;;\n--enghelp=*) exit 0;;\nesac\ncat '%s'\n", abs)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// fio 3.33 exits 0 with error 0 and no IO when a job's exec_prerun fails
// (the fixture is its real output). Such a test measured nothing: it is
// reported failed, never ok.
func TestNoIOIsAFailure(t *testing.T) {
	spec := result.TestSpec{Name: "a", RW: "read", BlockSize: 4096, IODepth: 1, NumJobs: 1, IOEngine: "psync", RuntimeS: 1}
	var got []result.Result
	err := Run(context.Background(), Config{Suite: result.Suite{Name: "s", Tests: []result.TestSpec{spec}}, Dir: t.TempDir(),
		FioBinary: fakeFio(t, "testdata/exec_prerun_failed.fio33.json"), NoPrecondition: true, SizeBytes: 64 << 20},
		func(r result.Result) error { got = append(got, r); return nil }, nil)
	if !errors.Is(err, ErrTestsFailed) {
		t.Errorf("run error = %v, want ErrTestsFailed", err)
	}
	if len(got) != 1 || got[0].Status != "failed" || !strings.Contains(got[0].Error, "did no IO") {
		t.Fatalf("results = %+v", got)
	}
}

// The writeback watch ends when dirty memory is back to its level before
// the test, or when the device has received what fio wrote and gone quiet
// while other programs keep the host's dirty memory up, and at the cap
// otherwise, saying so.
func TestWaitWriteback(t *testing.T) {
	const mib = 1 << 20
	busy := []uint64{900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900}
	tests := []struct {
		name   string
		dirty  []uint64  // one per tick, MiB
		dev    []float64 // the device's write rate each tick, MB/s (nil: none)
		wrote  float64   // bytes fio wrote
		capped bool
	}{
		{"drains", []uint64{900, 500, 100, 40, 30, 20}, nil, 0, false},
		{"never drains", busy, nil, 0, true},
		{"dips once", []uint64{900, 10, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900, 900}, nil, 0, true},
		// Others keep 900 MiB dirty; the device got fio's 32 MB in the
		// first seconds and went quiet: the test's writeback is over.
		{"device received it", busy, []float64{20, 12, 0.1, 0, 0, 0}, 32e6, false},
		// Only 20 of fio's 32 MB reached the device: still draining.
		{"device short of it", busy, []float64{10, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 32e6, true},
		// Every byte arrived, but the device still writes fast.
		{"device still writing", busy, []float64{40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40}, 32e6, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each waits out its own clock
			r := &runner{cfg: Config{WritebackCap: 1500 * time.Millisecond}}
			from := time.Now()
			var mu sync.Mutex
			var ticks []diskstats.Tick
			for i, d := range tt.dirty {
				tk := diskstats.Tick{At: from.Add(time.Duration(i+1) * time.Second), System: diskstats.System{DirtyBytes: d * mib}}
				if i < len(tt.dev) {
					tk.Devices = map[string]diskstats.Rates{"vdb": {WriteBWBytes: tt.dev[i] * 1e6}}
				}
				ticks = append(ticks, tk)
			}
			var msgs []string
			end := r.waitWriteback(context.Background(), time.Second, &mu, &ticks, from, 30*mib, tt.wrote, func(m string) { msgs = append(msgs, m) })
			if end.capped != tt.capped {
				t.Errorf("capped = %v, want %v (%+v)", end.capped, tt.capped, end)
			}
			note := end.note(r.cfg.WritebackCap)
			if tt.capped && !strings.Contains(note, "cap was reached") || !tt.capped && !strings.Contains(note, "drained") {
				t.Errorf("note = %q", note)
			}
			if len(msgs) == 0 {
				t.Error("no progress")
			}
		})
	}
}
