package pipeline

import (
	"context"
	"errors"
	"slices"
	"testing"

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
	if !errors.Is(err, runErr) || len(out.Results) != 2 || out.Diagnosis != nil {
		t.Fatalf("err %v, %d results, diagnosis %v", err, len(out.Results), out.Diagnosis)
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
	snk := &Sink{Collect: true}
	for _, r := range []result.Result{qdResult(1, 1, 1000), qdResult(2, 8, 8000)} {
		if err := snk.Add(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	out := snk.outcome(ctx, true, []string{"the burst bucket: no time left"})
	if out.Diagnosis == nil || !slices.Contains(out.Diagnosis.Unknown, "the burst bucket: no time left") || out.Diagnosis.RunID != "r" {
		t.Fatalf("diagnosis %+v", out.Diagnosis)
	}
	if len(out.Results[1].Findings) == 0 {
		t.Error("the results were not read again at the end")
	}
	if empty := (&Sink{Collect: true}).outcome(ctx, true, nil); empty.Diagnosis != nil || len(empty.Results) != 0 {
		t.Errorf("nothing collected: %+v", empty)
	}
}
