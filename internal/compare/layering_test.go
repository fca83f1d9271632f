package compare_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/iolens/iolens/internal/archtest"
)

// Issue 38: compare owns its model. The comparison's records are its own
// types, never aliases of another package's, and it sits below report,
// which renders a comparison it is given: compare imports no report,
// directly or not.
func TestCompareOwnsItsModel(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range archtest.Deps(t, "internal/compare") {
		seen[p] = true
	}
	if !seen["internal/diagnosis"] {
		t.Fatalf("compare's imports %v lack internal/diagnosis: the walk is broken", seen)
	}
	if seen["internal/report"] {
		t.Errorf("internal/compare imports internal/report: the comparison is computed below the report that renders it")
	}

	fset := token.NewFileSet()
	types := 0
	for _, name := range archtest.SourceFiles(t, ".") {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				types++
				if ts.Assign.IsValid() {
					t.Errorf("%s: %s is an alias: the comparison's types are compare's own", fset.Position(ts.Pos()), ts.Name.Name)
				}
			}
			return true
		})
	}
	if types < 10 {
		t.Fatalf("found %d types: the walk is broken", types)
	}
}
