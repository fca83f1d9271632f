package promhist

import (
	"github.com/iolens/iolens/internal/promhist/promtest"
	"math"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// ScenarioForTest is the default scenario from start as OpenMetrics text
// (for backfilling a real Prometheus), and the check of an analysis of
// it, with the times to within tol.
func ScenarioForTest(start time.Time) (string, func(*testing.T, *Analysis, time.Duration)) {
	sc := promtest.DefaultScenario
	s := sc.Synth(start, 600)
	return promtest.OpenMetrics(s.Build()), func(t *testing.T, a *Analysis, tol time.Duration) {
		t.Helper()
		checkScenario(t, a, s, sc, tol)
	}
}

func checkScenario(t *testing.T, a *Analysis, s *promtest.Synth, sc promtest.Scenario, tol time.Duration) {
	t.Helper()
	logVerdict(t, a)
	if len(a.Nodes) != 1 || a.Nodes[0].Instance != s.Instance {
		t.Fatalf("nodes: %+v", a.Nodes)
	}
	n := a.Nodes[0]
	near := func(got, want time.Time) bool { return got.Sub(want).Abs() <= tol }
	stalls := findingsOf(a, result.KindStall)
	if len(stalls) != 1 {
		t.Fatalf("want one stall, got %d: %+v", len(stalls), stalls)
	}
	if st := stalls[0]; !near(st.Start, s.At(sc.StallFrom)) || !near(st.End, s.At(sc.StallTo)) {
		t.Errorf("stall %s to %s, want %s to %s (within %s)", st.Start, st.End, s.At(sc.StallFrom), s.At(sc.StallTo), tol)
	}
	if len(n.Ceilings) != 1 {
		t.Fatalf("want one ceiling, got %+v", n.Ceilings)
	}
	cl := n.Ceilings[0]
	if cl.Dir != "write" || cl.Code != result.CodeBandwidthCap || math.Abs(cl.BWBytes-50e6) > 0.005*50e6 {
		t.Errorf("ceiling %s %s at %.0f B/s, want a write bandwidth cap at 50e6", cl.Dir, cl.Code, cl.BWBytes)
	}
	if e := cl.Episodes[0]; !near(e.Start, s.At(sc.CapFrom)) || !near(e.End, s.At(sc.CapTo)) {
		t.Errorf("ceiling held %s to %s, want %s to %s", e.Start, e.End, s.At(sc.CapFrom), s.At(sc.CapTo))
	}
	if len(n.Gaps) != 1 || !near(n.Gaps[0].From, s.At(sc.GapFrom-1)) || !near(n.Gaps[0].To, s.At(sc.GapTo)) {
		t.Errorf("gaps %+v, want one from %s to %s", n.Gaps, s.At(sc.GapFrom-1), s.At(sc.GapTo))
	}
	for _, f := range n.Findings {
		if d := f.Start.Sub(s.At(sc.ResetAt)).Abs(); d < 20*time.Second {
			t.Errorf("a finding at the counter reset: %s", f.Summary)
		}
	}
}
