package pipeline

import (
	"testing"

	"github.com/iolens/iolens/internal/archtest"
)

// The pipeline ends a run with data: the results and their diagnoses.
// It draws nothing, so nothing it imports, directly or not, renders
// (what 'go list -deps ./internal/pipeline' lists).
func TestPipelineImportsNoReport(t *testing.T) {
	got := archtest.Deps(t, "internal/pipeline")
	seen := map[string]bool{}
	for _, p := range got {
		seen[p] = true
	}
	if !seen["internal/diagnosis"] || !seen["internal/runner"] {
		t.Fatalf("the walk missed diagnosis or runner: %v", seen)
	}
	for _, p := range []string{"internal/report", "internal/compare", "internal/cli"} {
		if seen[p] {
			t.Errorf("internal/pipeline depends on %s", p)
		}
	}
}
