package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/iolens/iolens/internal/archtest"
	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
)

// The analysis reads the record only: fio's JSON is decoded once, when a
// result is made, and what the analysis needs of it is in the record.
func TestAnalysisDoesNotReadFioJSON(t *testing.T) {
	fset := token.NewFileSet()
	for _, f := range archtest.SourceFiles(t, ".") {
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "github.com/iolens/iolens/internal/fio" {
				t.Errorf("%s imports internal/fio", f)
			}
		}
	}
}

// One fio file holding a QD sweep (one job per depth, each its own
// group): every depth has its own latency, as fio reports it for that
// job, not one average over the file.
func TestQDSweepLatencyPerJob(t *testing.T) {
	type job = map[string]any
	var jobs []any
	want := map[int]float64{}
	var doc map[string]any
	for i, qd := range []int{1, 2, 4, 8, 16, 32, 64} {
		b, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("qd%d.json", qd)))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		j := doc["jobs"].([]any)[0].(job)
		j["groupid"] = float64(i)
		j["jobname"] = fmt.Sprintf("randread-qd%d", qd)
		jobs = append(jobs, j)
		want[qd] = j["read"].(job)["lat_ns"].(job)["mean"].(float64)
	}
	doc["jobs"] = jobs
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := fio.ReadResults(bytes.NewReader(b), "sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	var ptrs []*result.Result
	for i := range rs {
		ptrs = append(ptrs, &rs[i])
	}
	sw, ok := AnalyzeSweep("randread-4k", ptrs, nil)
	if !ok || len(sw.Points) != 7 {
		t.Fatalf("sweep %+v", sw)
	}
	for _, p := range sw.Points {
		if math.Abs(p.LatMeanNs-want[p.Outstanding]) > 1e-6*want[p.Outstanding] {
			t.Errorf("QD%d: mean latency %.0f ns, fio says %.0f", p.Outstanding, p.LatMeanNs, want[p.Outstanding])
		}
	}
	if sw.LittleMin < 0.8 || sw.LittleMax > 1.2 {
		t.Errorf("Little's law %.2f..%.2f on a sweep where fio kept each queue full", sw.LittleMin, sw.LittleMax)
	}
}

// numjobs without group_reporting: the four jobs are one test that ran
// them at once, not four repeats of a test, and analyze says nothing of
// instability between them.
func TestConcurrentJobsAreNotRepeats(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "fio", "testdata", "fio-3.6_numjobs4.json"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := fio.ReadResults(bytes.NewReader(b), "numjobs4.json")
	if err != nil {
		t.Fatal(err)
	}
	Annotate(rs)
	if len(rs) != 1 {
		t.Fatalf("%d results, want one test", len(rs))
	}
	for _, f := range rs[0].Findings {
		if f.Kind == kindUnstable {
			t.Errorf("finding about repeats: %s", f.Summary)
		}
	}
	// 30000 + 30600 + 29400 + 31000 reads in 30002 ms by the four jobs
	// together (the busiest alone did 1033 IOPS).
	if got := rs[0].Read.IOPS; math.Abs(got-121000.0*1000/30002) > 1e-6 {
		t.Errorf("IOPS = %.1f, want the four jobs' 4033.1", got)
	}
}
