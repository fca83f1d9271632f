package k8s

import (
	"slices"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/archtest"
)

// The cluster driver sits low: it creates, runs, gates and cleans up,
// and what renders, reports, plans, analyses or watches sits above it
// (internal/agent, internal/clusterwatch, internal/compare,
// internal/metrics, the CLI). It may use only the record, hints, units,
// the catalog and what those use.
func TestK8sImportsNothingAbove(t *testing.T) {
	forbidden := []string{"report", "plan", "sink", "pipeline", "metrics", "watch", "diagnosis", "compare", "analysis", "runner"}
	allowed := []string{"result", "hint", "units", "limits", "termtext"}
	got := archtest.Deps(t, "internal/k8s")
	if !slices.Contains(got, "internal/limits") {
		t.Fatalf("deps of internal/k8s %v lack internal/limits: the walk is broken", got)
	}
	for _, p := range got {
		name := strings.TrimPrefix(p, "internal/")
		if slices.Contains(forbidden, name) || !slices.Contains(allowed, name) {
			t.Errorf("internal/k8s depends on %s (allowed: %v)", p, allowed)
		}
	}
	// The same walk sees what the CLI renders with: the check can fail.
	if cli := archtest.Deps(t, "internal/cli"); !slices.Contains(cli, "internal/report") || !slices.Contains(cli, "internal/k8s") {
		t.Errorf("deps of internal/cli %v lack report or k8s: the walk is broken", cli)
	}
}
