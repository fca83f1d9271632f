package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"testing"

	"github.com/iolens/iolens/internal/archtest"
)

// Reports draw the diagnosis they are given: nothing here reads the
// limits again (analysis.Revise) or builds a diagnosis; the run, or the
// replay of saved results, did both once before any report. Reading
// plain fio output gives it the findings a run would have put on it
// (analysis.Annotate, read.go only): that is reading, not drawing.
func TestReportsBuildNothing(t *testing.T) {
	forbidden := map[string]bool{
		"analysis.Revise": true, "analysis.Annotate": true,
		"diagnosis.Build": true, "diagnosis.Of": true, "diagnosis.Saved": true, "diagnosis.Replay": true,
	}
	checked := 0
	for _, f := range archtest.SourceFiles(t, ".") {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			name := pkg.Name + "." + sel.Sel.Name
			if forbidden[name] && !(f == "read.go" && name == "analysis.Annotate") {
				t.Errorf("%s calls %s: a report draws the outcome it is given", f, name)
			}
			return true
		})
	}
	if checked < 10 {
		t.Fatalf("checked %d files: the walk is broken", checked)
	}
}
