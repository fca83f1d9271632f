package promhist_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/promhist/promtest"
)

// realPrometheus skips a test that starts Prometheus itself under
// -short, or where it is not installed.
func realPrometheus(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts Prometheus")
	}
	if why := promtest.Unavailable(); why != "" {
		t.Skip(why)
	}
}

// backfilled starts a real Prometheus on the scenario's history, written
// into its TSDB with promtool as backfilling does.
func backfilled(t *testing.T, om string, o promtest.Options) *promtest.Prometheus {
	t.Helper()
	o.DataDir = filepath.Join(t.TempDir(), "data")
	promtest.Backfill(t, om, o.DataDir)
	return promtest.StartPrometheus(t, o)
}

// TestRealPrometheusScenario: the scenario's history through a real
// Prometheus, whose own lookback and staleness answer the queries: the
// same stall, ceiling and gap as the synthetic answers give, and the
// counter reset unseen.
func TestRealPrometheusScenario(t *testing.T) {
	realPrometheus(t)
	start := time.Now().Add(-3 * time.Hour).Truncate(time.Minute)
	om, check := promhist.ScenarioForTest(start)
	p := backfilled(t, om, promtest.Options{})
	c, err := promhist.NewClient(p.URL, promhist.Auth{}, promhist.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := promhist.Analyze(t.Context(), c, promhist.Options{Selector: promhist.Selector{{Name: "instance", Op: "=", Value: "node-1:9100"}},
		From: start, To: start.Add(599 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	check(t, a, time.Second)
}

// TestRealPrometheusMaxSamples: a Prometheus that refuses queries of
// more than 3000 samples: the 600 instants at 1 s of the sum over 8 CPU
// series load 4800, at 2 s 2400. The analysis asks again at the coarser
// step, says so, and still finds what the history holds, to within that
// step.
func TestRealPrometheusMaxSamples(t *testing.T) {
	realPrometheus(t)
	start := time.Now().Add(-3 * time.Hour).Truncate(time.Minute)
	om, check := promhist.ScenarioForTest(start)
	p := backfilled(t, om, promtest.Options{MaxSamples: 3000})
	c, err := promhist.NewClient(p.URL, promhist.Auth{}, promhist.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	a, err := promhist.Analyze(t.Context(), c, promhist.Options{From: start, To: start.Add(599 * time.Second),
		Progress: func(s string) { told = append(told, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if a.StepS != 2 {
		t.Errorf("analysed at step %g s, want 2", a.StepS)
	}
	if len(told) != 1 || !strings.Contains(told[0], "refused") || !strings.Contains(strings.Join(a.Notes, "\n"), "at step 2s") {
		t.Errorf("progress %q, notes %q: want the retry said once, in both", told, a.Notes)
	}
	check(t, a, 2*time.Second)
}
