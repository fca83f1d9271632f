package cli

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every command that runs tests goes through the one recipe, so every
// option of it is on each: the report format, the NDJSON copy, the
// page, the history and the live metrics, and quiet progress.
func TestRunCommandsShareTheRecipesOptions(t *testing.T) {
	root := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	for _, path := range []string{"run", "diagnose", "k8s run", "k8s diagnose", "k8s node-check"} {
		c, _, err := root.Find(strings.Fields(path))
		if err != nil || c.Name() != strings.Fields(path)[len(strings.Fields(path))-1] {
			t.Fatalf("%s: %v", path, err)
		}
		for _, name := range []string{"output", "out", "html", "no-save", "db", "metrics-addr", "quiet"} {
			if c.Flags().Lookup(name) == nil {
				t.Errorf("iolens %s has no --%s", path, name)
			}
		}
	}
}

// k8s run's --html goes through the output checks before the cluster is
// asked anything: a page over the job file it reads is refused.
func TestK8sRunHTMLChecked(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "job.fio")
	_, stderr, code := execute(t, "k8s", "--kubeconfig", filepath.Join(dir, "kubeconfig"), "run", "--storage-class", "fast", "--job", job, "--html", job)
	if code != 2 || !strings.Contains(stderr, "--html") || strings.Contains(stderr, "unknown flag") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// A run's diagnosis is built once, by its pipeline: the commands that
// run tests, and the recipe that writes their reports, revise nothing
// and build no diagnosis of their own (the reports build none either:
// report's TestReportsBuildNothing).
func TestRunsDiagnoseOnce(t *testing.T) {
	for _, f := range []string{"run.go", "diagnose.go", "recipe.go", "k8s.go", "k8s_diagnose.go"} {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok {
					switch name := x.Name + "." + sel.Sel.Name; name {
					case "analysis.Revise", "analysis.Annotate", "diagnosis.Of", "diagnosis.Saved", "diagnosis.Replay", "diagnosis.Build":
						t.Errorf("%s calls %s: the pipeline built the run's diagnosis", f, name)
					}
				}
			}
			return true
		})
	}
}
