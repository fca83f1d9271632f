package diagnosis

import (
	"slices"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// Saved results replay to one diagnosis per run and target, built once
// each, in the order each first appears, a watch log's too (the HTML page
// shows each set's). The results keep their order, their limits read
// over their whole run.
func TestReplay(t *testing.T) {
	quick := readFixture(t, "quick-3000iops-80MBps.ndjson")
	other := slices.Clone(quick)
	for i := range other {
		other[i].Target.Path = "/other"
	}
	watch := result.Result{RunID: "w", Suite: "watch", Status: "ok", Target: result.Target{Kind: "dir", Path: "/w"}}
	// Interleaved: the first target, the watch, the second target, then
	// the rest of the first.
	rs := append([]result.Result{quick[0], watch}, other...)
	rs = append(rs, quick[1:]...)
	var built []string
	out := replayWith(rs, func(g []result.Result, unknown []string) Diagnosis {
		built = append(built, g[0].Target.Path)
		return Saved(g)
	})
	if want := []string{quick[0].Target.Path, "/w", "/other"}; !slices.Equal(built, want) {
		t.Fatalf("built %v, want %v", built, want)
	}
	if len(out.Diagnoses) != 3 || out.Diagnosis() != &out.Diagnoses[0] {
		t.Fatalf("%d diagnoses", len(out.Diagnoses))
	}
	for i := range rs {
		if out.Results[i].Target.Path != rs[i].Target.Path || out.Results[i].Test.Name != rs[i].Test.Name {
			t.Fatalf("result %d is %s on %s, was %s on %s", i, out.Results[i].Test.Name, out.Results[i].Target.Path, rs[i].Test.Name, rs[i].Target.Path)
		}
	}
	if d := out.For(other); d == nil || d.Target.Path != "/other" || len(d.Verdict) == 0 {
		t.Errorf("the second target's diagnosis: %+v", d)
	}
	if d := out.For([]result.Result{watch}); d == nil || d.RunID != "w" {
		t.Errorf("the watch log's diagnosis: %+v", d)
	}
	// The same verdict as one diagnosis of the first target alone.
	alone := Saved(slices.Clone(quick))
	if got := out.For(quick); got == nil || !slices.Equal(got.Verdict, alone.Verdict) {
		t.Errorf("verdict %v, alone %v", got, alone.Verdict)
	}
	// Each target's results in one piece, the common case, replay alike.
	whole := Replay(append(slices.Clone(quick), other...))
	if len(whole.Diagnoses) != 2 || !slices.Equal(whole.Diagnoses[0].Verdict, alone.Verdict) || whole.Diagnoses[1].Target.Path != "/other" {
		t.Errorf("in one piece: %d diagnoses, verdict %v", len(whole.Diagnoses), whole.Diagnosis().Verdict)
	}
	for i := range quick {
		if a, b := whole.Results[i], out.Results[slices.IndexFunc(rs, func(r result.Result) bool {
			return r.Target.Path == quick[i].Target.Path && r.Test.Name == quick[i].Test.Name && r.Repeat == quick[i].Repeat
		})]; len(a.Findings) != len(b.Findings) || a.Test.Name != b.Test.Name {
			t.Errorf("%s: %d findings in one piece, %d interleaved", a.Test.Name, len(a.Findings), len(b.Findings))
		}
	}
	if got := Replay(rs); len(got.Diagnoses) != 3 || !slices.Equal(got.Diagnoses[2].Verdict, out.Diagnoses[2].Verdict) {
		t.Errorf("Replay differs from replayWith Saved")
	}
}
