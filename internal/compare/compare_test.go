package compare

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

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
		w := WelchTest(tc.a, tc.b)
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

func operands() []Operand {
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
	return []Operand{{Name: "run a", Results: a}, {Name: "run b <b>", Results: b}, {Name: "c", Results: c}}
}

func TestCompareMaths(t *testing.T) {
	cmp := Compare(operands())
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
	cmp := Compare([]Operand{{Name: "x", Results: []result.Result{res("x", "t", 1, nil, 5e6), res("x", "t", 1, nil, 7e6)}},
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
	cmp := Compare(operands())
	for _, f := range []string{"text", "md", "csv"} {
		var buf bytes.Buffer
		if err := Write(&buf, f, cmp); err != nil {
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
