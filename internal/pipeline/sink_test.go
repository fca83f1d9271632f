package pipeline

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

type keeperFunc func(context.Context, result.Result) error

func (f keeperFunc) Add(ctx context.Context, r result.Result) error { return f(ctx, r) }

type encoderFunc func(*result.Result) error

func (f encoderFunc) Encode(r *result.Result) error { return f(r) }

// Every stage sees the result in order: the expectation's findings
// before the analysis, both before the history and the copies, and the
// collection gets what the copies got.
func TestStagesInOrder(t *testing.T) {
	var order []string
	var saved, written result.Result
	var buf bytes.Buffer
	s := Sink{
		Expect: func(r *result.Result) {
			order = append(order, "expect")
			r.Findings = append(r.Findings, result.Finding{Kind: result.KindCeiling, Code: result.CodeDiskIOPS})
		},
		Analysis: analysis.NewSession(result.Suite{Tests: []result.TestSpec{{Name: "t"}}}, 1),
		Keep: keeperFunc(func(_ context.Context, r result.Result) error {
			order = append(order, "keep")
			saved = r
			return errors.New("locked")
		}),
		Warn: func(r *result.Result, err error) { order = append(order, "warn:"+err.Error()) },
		Out: []Encoder{result.NewEncoder(&buf), encoderFunc(func(r *result.Result) error {
			order = append(order, "out")
			written = *r
			return nil
		})},
		Collect: true,
	}
	r := result.Result{RunID: "r", Index: 1, Repeat: 1, Status: "ok", Test: result.TestSpec{Name: "t", RW: "randread", BlockSize: 4096, IODepth: 1},
		Read: &result.DirResult{IOPS: 1000, BWBytes: 4096e3, Lat: result.Latency{N: 10, MeanNs: 1e6}}}
	if err := s.Add(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ","); got != "expect,keep,warn:locked,out" {
		t.Errorf("order %s", got)
	}
	codes := func(r result.Result) (out []string) {
		for _, f := range r.Findings {
			out = append(out, f.Code)
		}
		return
	}
	// The analysis added its limit finding after the expectation's.
	if got := strings.Join(codes(saved), ","); !strings.HasPrefix(got, result.CodeDiskIOPS+",") || !strings.Contains(got, result.CodeLatency) {
		t.Errorf("saved findings %s", got)
	}
	if strings.Join(codes(written), ",") != strings.Join(codes(saved), ",") || len(s.Results()) != 1 {
		t.Error("the copies and the collection differ from what was saved")
	}
	if !strings.Contains(buf.String(), `"code":"disk-iops"`) {
		t.Errorf("NDJSON copy: %.200s", buf.String())
	}
}

// A copy that cannot be written stops the run; nothing is collected.
func TestOutErrorStops(t *testing.T) {
	s := Sink{Out: []Encoder{encoderFunc(func(*result.Result) error { return errors.New("disk full") })}, Collect: true}
	err := s.Add(context.Background(), result.Result{Test: result.TestSpec{Name: "t"}})
	if err == nil || !strings.Contains(err.Error(), "disk full") || len(s.Results()) != 0 {
		t.Errorf("err %v, %d collected", err, len(s.Results()))
	}
}

// At the end of a run, each result's limit is read again over the whole
// run, and a result whose findings changed is saved again: the history
// holds what the report says.
func TestReviseSavesWhatChanged(t *testing.T) {
	mk := func(i, qd int, iops float64) result.Result {
		return result.Result{RunID: "r", Status: "ok", Index: i, Repeat: 1,
			Test: result.TestSpec{Name: "randread-4k-qd" + string(rune('0'+qd)), RW: "randread", BlockSize: 4096, IODepth: qd, NumJobs: 1, Direct: true},
			Read: &result.DirResult{IOPS: iops, BWBytes: iops * 4096, RuntimeMs: 10000, Lat: result.Latency{N: 1000, MeanNs: float64(qd) / iops * 1e9}}}
	}
	var saved []string
	s := Sink{Analysis: analysis.NewPlanSession(), Collect: true,
		Keep: keeperFunc(func(_ context.Context, r result.Result) error { saved = append(saved, r.Test.Name); return nil })}
	ctx := context.Background()
	// QD8 first, alone: one depth, its limit unknown; then QD1 makes the
	// curve latency-bound, which QD8's saved record must then say.
	for _, r := range []result.Result{mk(1, 8, 8000), mk(2, 1, 1000)} {
		if err := s.Add(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	saved = nil
	s.Revise(ctx)
	if len(saved) != 1 || saved[0] != "randread-4k-qd8" {
		t.Errorf("saved again %v, want QD8 alone (QD1 said the whole run's model already)", saved)
	}
	for _, f := range s.Results()[0].Findings {
		if f.Kind == result.KindLimit && f.Code != result.CodeLatency {
			t.Errorf("QD8 after the run: %s %s", f.Code, f.Summary)
		}
	}
}

// Issue 39.1: a run stopped between two tests marks its last result as
// interrupted, saved again so that the history lists the run as such;
// one whose cut test was marked where it ended is left as it is.
func TestMarkInterrupted(t *testing.T) {
	var saved []result.Result
	s := Sink{Keep: keeperFunc(func(_ context.Context, r result.Result) error { saved = append(saved, r); return nil }), Collect: true}
	ctx := context.Background()
	for i := 1; i <= 2; i++ {
		r := result.Result{RunID: "r", Index: i, Repeat: 1, Status: "ok", Test: result.TestSpec{Name: "t"}}
		if err := s.Add(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	s.markInterrupted(ctx)
	if len(saved) != 3 || !saved[2].Interrupted() || saved[2].Index != 2 {
		t.Fatalf("saved %d, the last %+v", len(saved), saved[len(saved)-1])
	}
	if st := result.StatusOfResults(s.Results()); st.State != result.RunInterrupted {
		t.Errorf("status %v", st)
	}
	s.markInterrupted(ctx)
	if len(saved) != 3 || len(s.Results()[1].Notes) != 1 {
		t.Errorf("marked twice: %d saves, notes %q", len(saved), s.Results()[1].Notes)
	}
}
