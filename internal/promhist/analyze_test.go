package promhist

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

func findingsOf(a *Analysis, kind string) []Finding {
	var out []Finding
	for _, n := range a.Nodes {
		for _, f := range n.Findings {
			if f.Kind == kind {
				out = append(out, f)
			}
		}
	}
	return out
}

func logVerdict(t *testing.T, a *Analysis) {
	t.Helper()
	var b strings.Builder
	Text(&b, a, time.UTC)
	t.Log("\n" + b.String())
}

// TestScenario holds the analysis of a synthetic history to what was
// written into it: the stall's times, the flat ceiling's level, the gap,
// and nothing from the counter reset.
func TestScenario(t *testing.T) {
	start := date("2026-03-01T14:00:00Z")
	sc := defaultScenario
	s := sc.synth(start, 600)
	a, _, err := analyzeFake(t, s.build(), Options{From: start, To: start.Add(599 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	logVerdict(t, a)
	if a.StepS != 1 || a.ScrapeIntervalS != 1 {
		t.Errorf("step %g s, scrape interval %g s; want 1 and 1", a.StepS, a.ScrapeIntervalS)
	}
	if len(a.Nodes) != 1 || a.Nodes[0].Instance != "node-1:9100" {
		t.Fatalf("nodes: %+v", a.Nodes)
	}
	n := a.Nodes[0]
	stalls := findingsOf(a, result.KindStall)
	if len(stalls) != 1 {
		t.Fatalf("want one stall, got %d: %+v", len(stalls), stalls)
	}
	st := stalls[0]
	if want := s.at(sc.stallFrom); !st.Start.Equal(want) {
		t.Errorf("stall starts at %s, want %s", st.Start, want)
	}
	if want := s.at(sc.stallTo); !st.End.Equal(want) {
		t.Errorf("stall ends at %s, want %s", st.End, want)
	}
	if len(n.Ceilings) != 1 {
		t.Fatalf("want one ceiling, got %+v", n.Ceilings)
	}
	cl := n.Ceilings[0]
	if cl.Dir != "write" || cl.Code != result.CodeBandwidthCap || math.Abs(cl.BWBytes-50e6) > 0.005*50e6 {
		t.Errorf("ceiling %s %s at %.0f B/s, want a write bandwidth cap at 50e6", cl.Dir, cl.Code, cl.BWBytes)
	}
	if e := cl.Episodes[0]; e.Start.Sub(s.at(sc.capFrom)).Abs() > time.Second || e.End.Sub(s.at(sc.capTo)).Abs() > time.Second {
		t.Errorf("ceiling held %s to %s, want %s to %s", e.Start, e.End, s.at(sc.capFrom), s.at(sc.capTo))
	}
	if len(n.Gaps) != 1 || !n.Gaps[0].From.Equal(s.at(sc.gapFrom-1)) || !n.Gaps[0].To.Equal(s.at(sc.gapTo)) {
		t.Errorf("gaps %+v, want one from %s to %s", n.Gaps, s.at(sc.gapFrom-1), s.at(sc.gapTo))
	}
	// The reset is no spike and no stall: nothing starts near it.
	for _, f := range n.Findings {
		if d := f.Start.Sub(s.at(sc.resetAt)).Abs(); d < 20*time.Second {
			t.Errorf("a finding at the counter reset: %s", f.Summary)
		}
	}
	// Intervals: the grid sits half a second after the scrapes, so the
	// sample at To is the first of the next instant: 598 intervals, less
	// the 61 the gap spans (the one across it is not judged).
	if want := 598 - (sc.gapTo - sc.gapFrom + 1); n.Intervals != want {
		t.Errorf("%d intervals judged, want %d", n.Intervals, want)
	}
}
