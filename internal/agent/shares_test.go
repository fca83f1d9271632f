package agent

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// The agent runs what a local run runs and reports nothing itself: its
// results are framed onto the pod's log and diagnosed where they land.
// So it builds no diagnosis (its sinks have no Diagnose, it names no
// diagnosis), and it takes --until-steady's rule from the pipeline
// rather than writing it again (it names no analysis.SteadyStop).
func TestAgentBuildsNoDiagnosisAndSharesTheSteadyRule(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "agent.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	sharesRule := false
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok {
				switch name := x.Name + "." + n.Sel.Name; {
				case x.Name == "diagnosis", name == "analysis.SteadyStop":
					t.Errorf("agent.go names %s", name)
				case name == "pipeline.UntilSteady":
					sharesRule = true
				}
			}
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Diagnose" {
				t.Errorf("agent.go gives a sink Diagnose: a diagnosis it would discard")
			}
		}
		return true
	})
	if !sharesRule {
		t.Error("agent.go does not take --until-steady's rule from pipeline.UntilSteady")
	}
}
