package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/archtest"
)

// hintReads are what reading a hint off an error looks like: its Hint
// method, or the fields error types keep their advice in.
var hintReads = map[string]bool{"Hint": true, "Help": true, "Advice": true}

// otherPackageType is the package name and type of *pkg.T, when e is
// that and pkg is one the file imports.
func otherPackageType(e ast.Expr, imports map[string]bool) (string, bool) {
	st, ok := e.(*ast.StarExpr)
	if !ok {
		return "", false
	}
	sel, ok := st.X.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok || !imports[pkg.Name] {
		return "", false
	}
	return pkg.Name + "." + sel.Sel.Name, true
}

// hintByTypeProblems lists each place in src (one Go file of the command
// line) that names another package's error type to read a hint: a type
// assertion to one (never checked either, so a wrong guess panics), or a
// variable errors.As filled whose Hint, Help or Advice is read. hint.Of
// is the one reader.
func hintByTypeProblems(t *testing.T, name string, src any) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]bool{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		n := filepath.Base(p)
		if im.Name != nil {
			n = im.Name.Name
		}
		imports[n] = true
	}
	var out []string
	at := func(n ast.Node) string { return fset.Position(n.Pos()).String() }
	// Variables declared as another package's pointer type, by name,
	// within each function.
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			return true
		}
		typed := map[string]string{}
		filled := map[string]bool{}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ValueSpec:
				if ty, ok := otherPackageType(x.Type, imports); ok {
					for _, id := range x.Names {
						typed[id.Name] = ty
					}
				}
			case *ast.TypeAssertExpr:
				if ty, ok := otherPackageType(x.Type, imports); ok && strings.HasSuffix(ty, "Error") {
					out = append(out, at(x)+": asserts "+ty+"; read its hint with hint.Of")
				}
			case *ast.CallExpr:
				sel, ok := x.Fun.(*ast.SelectorExpr)
				if !ok || len(x.Args) != 2 {
					return true
				}
				if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "errors" || sel.Sel.Name != "As" {
					return true
				}
				if u, ok := x.Args[1].(*ast.UnaryExpr); ok && u.Op == token.AND {
					if id, ok := u.X.(*ast.Ident); ok && typed[id.Name] != "" {
						filled[id.Name] = true
					}
				}
			}
			return true
		})
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || !hintReads[sel.Sel.Name] {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && filled[id.Name] {
				out = append(out, at(sel)+": reads "+sel.Sel.Name+" off "+typed[id.Name]+"; use hint.Of")
			}
			return true
		})
		return false
	})
	return out
}

// Issue 38: the command line reads every hint through hint.Of, never off
// another package's error type (a type assertion that panics when the
// error is wrapped or of another type, or a field a new error type
// lacks).
func TestHintsReadThroughHintOf(t *testing.T) {
	n := 0
	for _, name := range archtest.SourceFiles(t, ".") {
		n++
		for _, p := range hintByTypeProblems(t, name, nil) {
			t.Error(p)
		}
	}
	if n < 20 {
		t.Fatalf("read %d files: the walk is broken", n)
	}
}

// The check itself finds each way of reading a hint by type, and passes
// hint.Of and a type used only to classify an error.
func TestHintByTypeProblems(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       int
	}{
		{"assertion", `return err.(*report.UnknownFormatError).Hint()`, 1},
		{"errors.As then Hint", `var e *store.AmbiguousError
			if errors.As(err, &e) { return e.Hint() }
			return ""`, 1},
		{"errors.As then Help", `var e *watch.ExpectError
			if errors.As(err, &e) { return e.Help }
			return ""`, 1},
		{"hint.Of", `return hint.Of(err)`, 0},
		{"classified, hint through hint.Of", `var e *store.AmbiguousError
			if errors.As(err, &e) { return hint.Of(err) }
			return ""`, 0},
		{"a type of this package", `var u *UsageError
			if errors.As(err, &u) { return u.Help }
			return ""`, 0},
	} {
		src := `package cli
import (
	"errors"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/store"
	"github.com/iolens/iolens/internal/watch"
)
var _, _, _, _ = errors.As, hint.Of, report.Results, store.Open
var _ = watch.ParseExpect
func f(err error) string {
	` + c.body + `
}`
		if got := hintByTypeProblems(t, c.name+".go", src); len(got) != c.want {
			t.Errorf("%s: %d problems %v, want %d", c.name, len(got), got, c.want)
		}
	}
}
