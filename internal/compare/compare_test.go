package compare_test

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b) }

// Expected values computed independently: t and df by the textbook
// formulas, p by Simpson integration of Student's t density (and, for the
// first, matching the worked example on Wikipedia's Welch page: t 2.46,
// df 24.99, p 0.021).
func TestWelchKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		a, b      []float64
		t, df, p  float64
		sig, data bool
	}{
		{a: []float64{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4},
			b: []float64{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4},
			t: 2.4553563983, df: 24.9885292902, p: 0.02137800146, sig: true, data: true},
		{a: []float64{1000, 1010, 990}, b: []float64{1100, 1120, 1090, 1105}, t: 12.1935824612, df: 4.9250573541, p: 7.24141175e-05, sig: true, data: true},
		{a: []float64{1000, 1100}, b: []float64{1010, 1090}, t: 0, df: 1.9080590238, p: 1, sig: false, data: true},
		{a: []float64{1000}, b: []float64{1010, 1090}},
		{a: []float64{5, 5}, b: []float64{5, 5}},
	} {
		w := compare.WelchTest(tc.a, tc.b)
		if w.Enough != tc.data {
			t.Errorf("%v vs %v: enough %v", tc.a, tc.b, w.Enough)
			continue
		}
		if !w.Enough {
			if w.Verdict() != "not enough data" {
				t.Errorf("verdict %q", w.Verdict())
			}
			continue
		}
		if math.Abs(w.T-tc.t) > 1e-6 || !near(w.DF, tc.df, 1e-6) || !near(w.P, tc.p, 1e-4) || w.Significant != tc.sig {
			t.Errorf("%v vs %v: got t %.10f df %.10f p %.10g sig %v", tc.a, tc.b, w.T, w.DF, w.P, w.Significant)
		}
	}
}

func res(run, test string, iops float64, hist map[uint64]uint64, p99 float64) result.Result {
	return result.Result{Schema: result.SchemaV1, RunID: run, Status: "ok", Test: result.TestSpec{Name: test},
		Read: &result.DirResult{IOPS: iops, BWBytes: iops * 4096, Hist: result.HistogramOf(hist), Lat: result.Latency{P99Ns: p99}}}
}

func operands() []compare.Operand {
	// A: three repeats. The first two have histograms whose merge puts
	// p99 at 2023424 ns, although one repeat's own p99 is 995328 ns
	// (averaging percentiles would give something else again).
	a := []result.Result{
		res("a", "randread", 1000, map[uint64]uint64{995328: 90, 2023424: 10}, 2023424),
		res("a", "randread", 1010, map[uint64]uint64{995328: 100}, 995328),
		res("a", "randread", 990, map[uint64]uint64{995328: 100}, 995328),
		res("a", "only-in-a", 10, map[uint64]uint64{995328: 1}, 995328),
	}
	b := []result.Result{
		res("b", "randread", 1100, map[uint64]uint64{501760: 100}, 501760),
		res("b", "randread", 1120, map[uint64]uint64{501760: 100}, 501760),
		res("b", "randread", 1090, map[uint64]uint64{501760: 100}, 501760),
		res("b", "randread", 1105, map[uint64]uint64{501760: 100}, 501760),
	}
	c := []result.Result{res("c", "randread", 2000, map[uint64]uint64{995328: 100}, 995328)}
	failed := res("c", "randread", 1, nil, 0)
	failed.Status = "failed"
	c = append(c, failed)
	return []compare.Operand{{Name: "run a", Results: a}, {Name: "run b <b>", Results: b}, {Name: "c", Results: c}}
}

func TestCompareMaths(t *testing.T) {
	cmp := compareTold(operands())
	if len(cmp.Rows) != 2 || cmp.Rows[0].Test != "randread" || cmp.Rows[1].Test != "only-in-a" {
		t.Fatalf("rows %+v", cmp.Rows)
	}
	a, b, c := cmp.Rows[0].Cells[0], cmp.Rows[0].Cells[1], cmp.Rows[0].Cells[2]
	// Merged: 300 samples, 290 at 995328 and 10 at 2023424; the 297th
	// sample (99%) is in the upper bucket.
	if a.N != 3 || a.IOPS != 1000 || a.P50Ns != 995328 || a.P99Ns != 2023424 || a.P999Ns != 2023424 || a.Samples != 300 {
		t.Errorf("A %+v", a)
	}
	if a.DiffIOPSPct != nil || a.IOPSTest != nil {
		t.Errorf("A compared with itself")
	}
	// B mean IOPS 1103.75: +10.375%; p99 501760 vs 2023424: -75.3%.
	if b.IOPS != 1103.75 || !near(*b.DiffIOPSPct, 10.375, 1e-9) || !near(*b.DiffP99Pct, (501760.0-2023424)/2023424*100, 1e-9) {
		t.Errorf("B %+v diff %v", b, *b.DiffIOPSPct)
	}
	if !b.IOPSTest.Enough || !b.IOPSTest.Significant || !near(b.IOPSTest.P, 7.24141175e-05, 1e-4) {
		t.Errorf("B IOPS test %+v", b.IOPSTest)
	}
	// C has one successful result: a difference but no test.
	if c.N != 1 || !near(*c.DiffIOPSPct, 100, 1e-9) || c.IOPSTest.Verdict() != "not enough data" {
		t.Errorf("C %+v %+v", c, c.IOPSTest)
	}
	if cmp.Rows[1].Cells[1] != nil || cmp.Rows[1].Cells[2] != nil {
		t.Errorf("only-in-a has cells for B or C")
	}
}

func TestNoHistogramsNoAveragedPercentiles(t *testing.T) {
	cmp := compareTold([]compare.Operand{{Name: "x", Results: []result.Result{res("x", "t", 1, nil, 5e6), res("x", "t", 1, nil, 7e6)}},
		{Name: "y", Results: []result.Result{res("y", "t", 1, nil, 5e6)}}})
	x, y := cmp.Rows[0].Cells[0], cmp.Rows[0].Cells[1]
	if !x.NoPercentiles || x.P99Ns != 0 {
		t.Errorf("x %+v", x)
	}
	if y.NoPercentiles || y.P99Ns != 5e6 || y.DiffP99Pct != nil {
		t.Errorf("y %+v", y)
	}
}

func TestGolden(t *testing.T) {
	cmp := compareTold(operands())
	for _, f := range []string{"text", "md", "csv"} {
		var buf bytes.Buffer
		if err := writeFormat(&buf, f, cmp); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "compare."+f)
		if *update {
			os.MkdirAll("testdata", 0o755)
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s differs from %s:\n%s", f, path, buf.String())
		}
	}
}

// spec'd builds a result of test "t" with the parameters a comparison
// must hold equal.
func specd(run string, iops float64, f func(r *result.Result)) result.Result {
	r := result.Result{Schema: result.SchemaV1, RunID: run, Status: "ok", SampleIntervalS: 1,
		Test:   result.TestSpec{Name: "t", RW: "randread", BlockSize: 4096, IODepth: 32, NumJobs: 1, Direct: true, IOEngine: "libaio", RuntimeS: 20, RampS: 2},
		Target: result.Target{SizeBytes: 1 << 30},
		Read:   &result.DirResult{IOPS: iops, BWBytes: iops * 4096}}
	if f != nil {
		f(&r)
	}
	return r
}

func TestMismatchedParameters(t *testing.T) {
	for _, tc := range []struct {
		name  string
		b     func(r *result.Result)
		param string
		want  string
	}{
		{"same", nil, "", ""},
		{"runtime", func(r *result.Result) { r.Test.RuntimeS = 60 }, "runtime", "runtime differs: A 20 s; B 60 s (in t)"},
		{"ramp", func(r *result.Result) { r.Test.RampS = 0 }, "ramp", "ramp differs: A 2 s; B 0 s (in t)"},
		{"size of the target", func(r *result.Result) { r.Target.SizeBytes = 4 << 30 }, "file size", "file size differs: A 1.0 GiB; B 4.0 GiB (in t)"},
		{"size of the test", func(r *result.Result) { r.Test.SizeBytes = 22 << 20 }, "file size", "file size differs: A 1.0 GiB; B 22.0 MiB (in t)"},
		{"engine", func(r *result.Result) { r.Test.IOEngine = "io_uring" }, "engine", "engine differs: A libaio; B io_uring (in t)"},
		{"engine of a job file", func(r *result.Result) {
			r.Test.IOEngine = ""
			r.Test.Options = []result.Option{{Key: "ioengine", Value: "psync"}}
		}, "engine", "engine differs: A libaio; B psync (in t)"},
		{"block size", func(r *result.Result) { r.Test.BlockSize = 8192 }, "block size", "block size differs: A 4k; B 8k (in t)"},
		{"queue depth", func(r *result.Result) { r.Test.IODepth, r.Test.NumJobs = 8, 4 }, "queue depth", "queue depth differs: A 32; B 8 x 4 jobs (in t)"},
		{"sample interval", func(r *result.Result) { r.SampleIntervalS = 0.25 }, "sample interval", "sample interval differs: A 1000 ms; B 250 ms (in t)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := []result.Result{specd("a", 1000, nil), specd("a", 1010, nil)}
			b := []result.Result{specd("b", 1100, tc.b)}
			c := compareTold([]compare.Operand{{Name: "a", Results: a}, {Name: "b", Results: b}, {Name: "c"}})
			if tc.param == "" {
				if len(c.Mismatches) != 0 {
					t.Fatalf("mismatches where there are none: %v", c.Mismatches)
				}
				return
			}
			if len(c.Mismatches) != 1 || c.Mismatches[0].Param != tc.param || c.Mismatches[0].String() != tc.want {
				t.Fatalf("got %v, want one %q", c.Mismatches, tc.want)
			}
			// The warning opens the text and Markdown tables.
			var txt, md bytes.Buffer
			report.CompareText(&txt, c)
			report.CompareMarkdown(&md, c)
			if !strings.HasPrefix(txt.String(), "WARNING: ") || !strings.Contains(txt.String(), tc.want) {
				t.Errorf("text:\n%s", txt.String())
			}
			if !strings.Contains(md.String(), "> **Warning:**") {
				t.Errorf("md:\n%s", md.String())
			}
		})
	}
	// Within one operand, values that vary are listed together.
	a := []result.Result{specd("a", 1000, nil), specd("a2", 1000, func(r *result.Result) { r.Test.RuntimeS = 30 })}
	c := compareTold([]compare.Operand{{Name: "a", Results: a}, {Name: "b", Results: []result.Result{specd("b", 1, nil)}}})
	if len(c.Mismatches) != 1 || c.Mismatches[0].Values[0] != "20 s, 30 s" || c.Mismatches[0].Values[1] != "20 s" {
		t.Errorf("varying within an operand: %+v", c.Mismatches)
	}
	// Tests that differ alike share a line.
	var a2, b2 []result.Result
	for _, name := range []string{"t1", "t2", "t3", "t4"} {
		a2 = append(a2, specd("a", 1, func(r *result.Result) { r.Test.Name = name }))
		b2 = append(b2, specd("b", 1, func(r *result.Result) { r.Test.Name, r.Test.RuntimeS = name, 60 }))
	}
	b2[3].Test.RuntimeS = 20
	c = compareTold([]compare.Operand{{Name: "a", Results: a2}, {Name: "b", Results: b2}})
	if len(c.Mismatches) != 1 || c.Mismatches[0].String() != "runtime differs: A 20 s; B 60 s (in t1, t2, t3)" {
		t.Errorf("grouped: %v", c.Mismatches)
	}
	b2[3].Test.RuntimeS = 60
	c = compareTold([]compare.Operand{{Name: "a", Results: a2}, {Name: "b", Results: b2}})
	if len(c.Mismatches) != 1 || c.Mismatches[0].String() != "runtime differs: A 20 s; B 60 s (in all 4 tests)" {
		t.Errorf("everywhere: %v", c.Mismatches)
	}
}

func TestBetterAndWorse(t *testing.T) {
	cmp := compareTold(operands())
	b, c := cmp.Rows[0].Cells[1], cmp.Rows[0].Cells[2]
	// B: IOPS up 10% with p=7e-5: better. Its p99 fell 75%, but A's
	// repeats vary too much for that to be significant (p=0.13).
	if b.IOPSChange() != "better" || b.P99Change() != "same" {
		t.Errorf("B: IOPS %q, p99 %q", b.IOPSChange(), b.P99Change())
	}
	if c.IOPSChange() != "" || cmp.Rows[0].Cells[0].IOPSChange() != "" {
		t.Errorf("no test, yet a change: %q", c.IOPSChange())
	}
	// Worse: the same samples the other way round; for p99 lower is
	// better, so a higher p99 is worse.
	lo, hi := []float64{1000, 1010, 990}, []float64{1100, 1120, 1090, 1105}
	if w := compare.WelchTest(hi, lo); w.Change(true) != "worse" || w.Change(false) != "better" {
		t.Errorf("hi to lo: %q (IOPS), %q (p99)", w.Change(true), w.Change(false))
	}
	var w *compare.Welch
	if w.Change(true) != "" {
		t.Errorf("nil test")
	}
	// The HTML page colours exactly the significant cells.
	p := report.ComparePage(nil, cmp)
	tb := p.Tables[0]
	for i, row := range tb.Rows[:3] { // randread: A, B, C
		cls := tb.Class[i]
		switch {
		case row[1] == "B":
			if cls[2] != "better num" || cls[7] != "better" || cls[5] != "same num" || cls[8] != "same" {
				t.Errorf("B's classes %v", cls)
			}
		case row[1] == "C":
			if cls[2] != " num" || cls[5] != " num" || cls[7] != "" {
				t.Errorf("C has no test, yet classes %v", cls)
			}
		}
	}
}

func TestCostPerMeasuredRate(t *testing.T) {
	// aws:gp3 with 100 GiB: $8.00 a month in the catalog (us-east-1).
	mk := func(run, test string, bs int64, iops float64, disk string) result.Result {
		r := specd(run, iops, func(r *result.Result) { r.Test.Name, r.Test.BlockSize = test, bs })
		r.Read.BWBytes = iops * float64(bs)
		r.Target.Labels = map[string]string{"expect": disk}
		return r
	}
	a := []result.Result{mk("a", "rr", 4096, 3000, "aws:gp3:100GiB"), mk("a", "seq", 1<<20, 119.2, "aws:gp3:100GiB")}
	b := []result.Result{mk("b", "rr", 4096, 3000, "")}
	c := compareTold([]compare.Operand{{Name: "a", Results: a}, {Name: "b", Results: b}})
	x := c.Costs[0]
	if x == nil || c.Costs[1] != nil {
		t.Fatalf("costs %+v", c.Costs)
	}
	// $8 / 3000 IOPS; $8 / (119.2 x 1 MiB = 125.0 MB/s).
	if x.USDPerMonth != 8 || x.IOPS != 3000 || x.IOPSTest != "rr" || !near(x.USDPerIOPS, 8.0/3000, 1e-9) ||
		x.BWTest != "seq" || !near(x.USDPerMBps, 8/(119.2*1048576/1e6), 1e-9) {
		t.Errorf("cost %+v", x)
	}
	var txt bytes.Buffer
	report.CompareText(&txt, c)
	if !strings.Contains(txt.String(), "[A] aws:gp3:100GiB: $8.00 a month (us-east-1, as of 2025-05); $0.0027 per IOPS (3000 IOPS in rr); $0.064 per MB/s (125.0 MB/s in seq)") {
		t.Errorf("text:\n%s", txt.String())
	}
	if p := report.ComparePage(nil, c); len(p.Tables) < 2 || p.Tables[1].ID != "cost" || p.Tables[1].Rows[0][4] != "0.0027" {
		t.Errorf("page tables %+v", p.Tables)
	}
	// Disks that disagree within an operand, or that the catalog does
	// not know, are not priced.
	a[1].Target.Labels["expect"] = "aws:gp2:100GiB"
	b[0].Target.Labels = map[string]string{"expect": "nope:x"}
	if c := compareTold([]compare.Operand{{Name: "a", Results: a}, {Name: "b", Results: b}}); c.Costs[0] != nil || c.Costs[1] != nil {
		t.Errorf("priced anyway: %+v %+v", c.Costs[0], c.Costs[1])
	}
}
