package pipeline

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
)

func qdResult(i, qd int, iops float64) result.Result {
	return result.Result{RunID: "r", Status: "ok", Index: i, Repeat: 1, Suite: "s", Target: result.Target{Kind: "dir", Path: "/d"},
		Test: result.TestSpec{Name: "randread-4k-qd" + string(rune('0'+qd)), RW: "randread", BlockSize: 4096, IODepth: qd, NumJobs: 1, Direct: true},
		Read: &result.DirResult{IOPS: iops, BWBytes: iops * 4096, RuntimeMs: 10000, Lat: result.Latency{N: 1000, MeanNs: float64(qd) / iops * 1e9}}}
}

// Feed passes another driver's results through the sink, reads them
// again at the end (a result saved before the whole run was known is
// saved again), and builds no diagnosis: its results may span targets.
func TestFeed(t *testing.T) {
	var saved []string
	snk := &Sink{Collect: true, Keep: keeperFunc(func(_ context.Context, r result.Result) error { saved = append(saved, r.Test.Name); return nil })}
	runErr := errors.New("one target failed")
	out, err := Feed(context.Background(), snk, func(emit func(result.Result) error) error {
		for _, r := range []result.Result{qdResult(1, 8, 8000), qdResult(2, 1, 1000)} {
			if err := emit(r); err != nil {
				return err
			}
		}
		return runErr
	})
	if !errors.Is(err, runErr) || len(out.Results) != 2 || out.Diagnosis() != nil {
		t.Fatalf("err %v, %d results, diagnosis %v", err, len(out.Results), out.Diagnosis())
	}
	// Unanalysed as they came, both have their limits once the run is
	// read as a whole: each is saved again.
	if len(saved) != 4 || len(out.Results[0].Findings) == 0 {
		t.Errorf("saved %v; findings at the end %v", saved, out.Results[0].Findings)
	}
}

// At the end of a suite or a plan the diagnosis is built once, from the
// results read over the whole run, with what the plan could not
// establish; with nothing collected there is none.
func TestOutcomeDiagnosis(t *testing.T) {
	ctx := context.Background()
	built := 0
	count := func(rs []result.Result, unknown []string) diagnosis.Diagnosis {
		built++
		return diagnosis.Of(rs, unknown)
	}
	snk := &Sink{Collect: true, Diagnose: count}
	for _, r := range []result.Result{qdResult(1, 1, 1000), qdResult(2, 8, 8000)} {
		if err := snk.Add(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	out := snk.outcome(ctx, []string{"the burst bucket: no time left"})
	if d := out.Diagnosis(); d == nil || !slices.Contains(d.Unknown, "the burst bucket: no time left") || d.RunID != "r" {
		t.Fatalf("diagnosis %+v", d)
	}
	if built != 1 || len(out.Diagnoses) != 1 {
		t.Errorf("one run on one target: built %d diagnoses, kept %d, want 1", built, len(out.Diagnoses))
	}
	if len(out.Results[1].Findings) == 0 {
		t.Error("the results were not read again at the end")
	}
	if empty := (&Sink{Collect: true, Diagnose: count}).outcome(ctx, nil); empty.Diagnosis() != nil || len(empty.Results) != 0 {
		t.Errorf("nothing collected: %+v", empty)
	}
}

// Results fed from several targets (a Kubernetes run) end with one
// diagnosis of each, each built once, from its own results.
func TestFeedDiagnosesEachTargetOnce(t *testing.T) {
	built := map[string]int{}
	count := func(rs []result.Result, unknown []string) diagnosis.Diagnosis {
		built[rs[0].Target.Path]++
		for _, r := range rs[1:] {
			if r.Target.Path != rs[0].Target.Path {
				t.Errorf("one diagnosis of %s and %s", rs[0].Target.Path, r.Target.Path)
			}
		}
		return diagnosis.Of(rs, unknown)
	}
	snk := &Sink{Collect: true, Diagnose: count}
	out, err := Feed(context.Background(), snk, func(emit func(result.Result) error) error {
		for i, path := range []string{"/a", "/b", "/a", "/b"} {
			r := qdResult(i+1, 1+7*(i/2), 1000+7000*float64(i/2))
			r.Target.Path = path
			if err := emit(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != 2 || built["/a"] != 1 || built["/b"] != 1 || len(out.Diagnoses) != 2 {
		t.Errorf("built %v, %d diagnoses", built, len(out.Diagnoses))
	}
	if d := out.For(out.Results[1:2]); d == nil || d.Target.Path != "/b" {
		t.Errorf("the diagnosis of /b: %+v", d)
	}
}
