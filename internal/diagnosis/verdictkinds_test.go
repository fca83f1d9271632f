package diagnosis

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/archtest"
	"github.com/iolens/iolens/internal/result"
)

// kindsRead lists the result.Kind constants the package's non-test
// source reads.
func kindsRead(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, name := range archtest.SourceFiles(t, ".") {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "result" && strings.HasPrefix(sel.Sel.Name, "Kind") {
				seen[sel.Sel.Name] = true
			}
			return true
		})
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// verdictKinds says which findings reach the verdict, and
// docs/architecture.md repeats it: a kind Build starts (or stops) reading
// without saying so here fails.
func TestVerdictKindsAreTheKindsRead(t *testing.T) {
	value := map[string]string{"KindCliff": result.KindCliff, "KindEtcd": result.KindEtcd, "KindLimit": result.KindLimit,
		"KindModel": result.KindModel, "KindStall": result.KindStall}
	var read []string
	for _, name := range kindsRead(t) {
		v, ok := value[name]
		if !ok {
			t.Errorf("the diagnosis reads result.%s: add it to verdictKinds, to this test and to docs/architecture.md", name)
		}
		read = append(read, v)
	}
	listed := slices.Clone(verdictKinds)
	slices.Sort(read)
	slices.Sort(listed)
	if !slices.Equal(read, listed) {
		t.Errorf("the diagnosis reads the kinds %v; verdictKinds says %v", read, listed)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range verdictKinds {
		if !strings.Contains(string(doc), "`"+k+"`") {
			t.Errorf("docs/architecture.md does not name the verdict's kind %q", k)
		}
	}
}
