package promhist

import (
	"strings"
	"testing"
	"time"

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
	checkScenario(t, a, s, sc, 0)
	n := a.Nodes[0]
	// Intervals: the grid sits half a second after the scrapes, so the
	// sample at To is the first of the next instant: 598 intervals, less
	// the 61 the gap spans (the one across it is not judged).
	if want := 598 - (sc.gapTo - sc.gapFrom + 1); n.Intervals != want {
		t.Errorf("%d intervals judged, want %d", n.Intervals, want)
	}
}
