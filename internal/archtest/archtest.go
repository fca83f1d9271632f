// Package archtest reads the module's own import graph for the tests
// that hold its layers in place (what sits below what).
package archtest

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Module is the import path prefix of the module's packages.
const Module = "github.com/iolens/iolens/"

// Deps is every package of the module that pkg (a path under the module,
// such as "internal/k8s") imports, directly or not, its tests left out:
// what 'go list -deps' lists, sorted. The module's root is found from
// the test's working directory upwards.
func Deps(t testing.TB, pkg string) []string {
	t.Helper()
	root := moduleRoot(t)
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
			if rel, ok := strings.CutPrefix(imp, Module); ok {
				walk(rel)
			}
		}
	}
	walk(pkg)
	delete(seen, pkg)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("archtest: no go.mod above the test's directory")
		}
		dir = up
	}
}

// SourceFiles is the package's own Go files in dir (relative to the
// test's working directory), its tests left out, sorted: what the tests
// that read a package's source walk. None is a failure: a check that
// reads no file passes whatever the code says.
func SourceFiles(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := files[:0]
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no Go source in %s", dir)
	}
	return out
}
