package k8s

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/iolens/iolens/"

// deps is every package of the module that pkg (a path under the module)
// imports, directly or not, its tests left out: what 'go list -deps'
// lists.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
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
	walk(pkg)
	delete(seen, pkg)
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// The cluster driver sits low: it creates, runs, gates and cleans up,
// and what renders, reports, plans, analyses or watches sits above it
// (internal/agent, internal/clusterwatch, internal/compare,
// internal/metrics, the CLI). It may use only the record, hints, units,
// the catalog and what those use.
func TestK8sImportsNothingAbove(t *testing.T) {
	forbidden := []string{"report", "plan", "sink", "pipeline", "metrics", "watch", "diagnosis", "compare", "analysis", "runner"}
	allowed := []string{"result", "hint", "units", "limits", "termtext"}
	got := deps(t, "internal/k8s")
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
	if cli := deps(t, "internal/cli"); !slices.Contains(cli, "internal/report") || !slices.Contains(cli, "internal/k8s") {
		t.Errorf("deps of internal/cli %v lack report or k8s: the walk is broken", cli)
	}
}
