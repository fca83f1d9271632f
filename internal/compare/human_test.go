package compare_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/store"
)

// single is a run of one 4k random read test at QD32 on an emulated
// disk: 20 s of 250 ms samples, each second's four samples alternating
// around level by spread (so each second's mean is level + step*sec,
// and level at the middle), and a finding of severity sev.
func single(id, disk string, level, step, spread float64, sev string) []result.Result {
	r := result.Result{Schema: result.Schema, RunID: id, Suite: "diagnose", Status: "ok", Repeat: 1, SampleIntervalS: 0.25,
		Start:    time.Date(2026, 11, 26, 17, 47, 0, 0, time.UTC),
		Test:     result.TestSpec{Name: "randread-4k-qd32", RW: "randread", BlockSize: 4096, IODepth: 32, NumJobs: 1, Direct: true, IOEngine: "libaio", RuntimeS: 20},
		Target:   result.Target{Kind: "dir", Path: "/var/lib/iolens/emulate/" + disk + "/mnt", Device: "loop1", Emulated: disk},
		Read:     &result.DirResult{IOPS: level, BWBytes: level * 4096, Lat: result.Latency{N: 1000, MeanNs: 32 / level * 1e9}},
		Findings: []result.Finding{{Kind: result.KindWriteback, Code: result.CodeWritebackTail, Severity: sev, Summary: "a " + sev + " finding of " + disk}}}
	for sec := 0; sec < 21; sec++ {
		mean := level + step*float64(sec-10)
		for q, d := range []float64{-spread, spread, -spread, spread} {
			r.FioSeries = append(r.FioSeries, result.FioSample{T: float64(sec) + 0.25*float64(q+1), ReadIOPS: mean + d})
		}
	}
	return []result.Result{r}
}

// One run a side: the sides are compared by the IOPS of each second of
// their own run, so a 1,344% gain is significant and coloured, a 0.2%
// wobble is not; the operands are named by what they measured, the
// verdicts stand side by side, and the findings run worst first across
// the runs.
func TestCompareSingleRuns(t *testing.T) {
	a := single("20261126-174731-a1279a", "p15", 1000, 1, 20, "info")
	b := single("20261126-180000-b2c3d4", "ultra", 14440, 1, 20, "warn")
	near := single("20261126-181500-c3d4e5", "p15b", 1001, -1, 20, "info")

	// Labels, not ids: the run ids resolve from a real history.
	path := filepath.Join(t.TempDir(), "h.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range [][]result.Result{a, b, near} {
		if _, err := db.Save(context.Background(), rs); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	ops, err := compare.Resolve(context.Background(), []string{a[0].RunID, b[0].RunID, near[0].RunID}, nil,
		func() (*store.Store, error) { return store.Open(context.Background(), path) })
	if err != nil {
		t.Fatal(err)
	}
	if ops[0].Label != "diagnose of emulated p15, 2026-11-26 17:47" {
		t.Errorf("label %q", ops[0].Label)
	}
	c := compareTold(ops)
	// Each side's seconds: the mean of its four 250 ms samples (the
	// spread cancels), 1000 + (s - 10) for s = 0..19, the last second
	// left out as fio's last window is partial.
	x := c.Rows[0].Cells[0]
	if len(x.IOPSWindows) != 20 || x.IOPSWindows[0] != 990 || x.IOPSWindows[19] != 1009 {
		t.Errorf("A's seconds %v", x.IOPSWindows)
	}
	big, small := c.Rows[0].Cells[1], c.Rows[0].Cells[2]
	if big.IOPSTest == nil || big.IOPSTest.Basis != "windows" || big.IOPSChange() != "better" {
		t.Errorf("+1,344%% on one run a side: %+v", big.IOPSTest)
	}
	// A's seconds are 990..1009 (mean 999.5), C's 1011..992 (mean
	// 1001.5), each with sd 5.92: Welch's t = 2 / 1.87 = 1.07 at 38 df,
	// p = 0.29: the 0.2% is within each run's own spread, not coloured.
	if small.IOPSTest == nil || small.IOPSTest.Basis != "windows" || small.IOPSChange() != "same" || small.IOPSTest.P < 0.25 || small.IOPSTest.P > 0.33 {
		t.Errorf("+0.2%% on one run a side: %+v", small.IOPSTest)
	}
	var txt bytes.Buffer
	if err := report.CompareText(&txt, c); err != nil {
		t.Fatal(err)
	}
	out := txt.String()
	for _, want := range []string{
		"[A] diagnose of emulated p15, 2026-11-26 17:47 (20261126-174731-a1279a)",
		"Verdicts side by side", "better (clear)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "no change (noise)") {
		t.Errorf("one run a side is still 'not enough data' for IOPS:\n%s", out)
	}
	// The warning of B comes before A's info.
	if len(c.Findings) < 3 || c.Findings[0].Operand != 1 || c.Findings[0].Severity != "warn" {
		t.Errorf("findings %+v", c.Findings)
	}
	if i, j := strings.Index(out, "[B] WARN"), strings.Index(out, "[A] randread-4k-qd32: a info"); i < 0 || j < 0 || i > j {
		t.Errorf("findings not worst first across runs:\n%s", out)
	}
	// The page: sets named by label, the side-by-side table, and the
	// significant cells coloured.
	p := report.ComparePage(ops, c)
	if !strings.HasPrefix(p.Sets[0].Name, "A: diagnose of emulated p15") || !strings.Contains(p.Title, "emulated ultra") {
		t.Errorf("page names %q, %q", p.Title, p.Sets[0].Name)
	}
	var cls []string
	for _, t := range p.Tables {
		if t.ID == "compare" {
			for _, r := range t.Class {
				cls = append(cls, r[2])
			}
		}
	}
	if strings.Join(cls, ",") != " num,better num,same num" {
		t.Errorf("IOPS cells' classes %q", cls)
	}
}
