package pipeline

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// The pipeline ends a run with data: the results and their diagnoses.
// It draws nothing, so nothing it imports, directly or not, renders
// (what 'go list -deps ./internal/pipeline' lists).
func TestPipelineImportsNoReport(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/iolens/iolens/"
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		bp, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(p)), 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, imp := range bp.Imports {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				walk(rel)
			}
		}
	}
	walk("internal/pipeline")
	if !seen["internal/diagnosis"] || !seen["internal/runner"] {
		t.Fatalf("the walk missed diagnosis or runner: %v", seen)
	}
	for _, p := range []string{"internal/report", "internal/compare", "internal/cli"} {
		if seen[p] {
			t.Errorf("internal/pipeline depends on %s", p)
		}
	}
}
