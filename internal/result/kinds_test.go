package result

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every finding kind is a constant here: no code outside this package
// makes one up as a string (watch once did: "device", "expect",
// "discovery", "burst"), or compares a finding's kind with a literal that
// would silently stop matching if the constant changed.
func TestFindingKindsAreConstants(t *testing.T) {
	fset := token.NewFileSet()
	kinds := map[string]bool{}
	codes, err := parser.ParseFile(fset, "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range codes.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if strings.HasPrefix(n.Name, "Kind") && i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
						v, _ := strconv.Unquote(lit.Value)
						kinds[v] = true
					}
				}
			}
		}
	}
	if !kinds["stall"] || !kinds["discovery"] {
		t.Fatalf("the kinds were not read from codes.go: %v", kinds)
	}
	literal := func(e ast.Expr) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		v, _ := strconv.Unquote(lit.Value)
		return v, true
	}
	root := filepath.Join("..", "..")
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Base(path) == "codes.go" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.KeyValueExpr:
				// Finding{Kind: "stall"}
				if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Kind" {
					if v, ok := literal(x.Value); ok && kinds[v] {
						t.Errorf("%s: Kind: %q: use the constant in internal/result/codes.go", fset.Position(x.Pos()), v)
					}
				}
			case *ast.BinaryExpr:
				// f.Kind == "stall"
				if x.Op != token.EQL && x.Op != token.NEQ {
					return true
				}
				for _, pair := range [][2]ast.Expr{{x.X, x.Y}, {x.Y, x.X}} {
					if sel, ok := pair[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "Kind" {
						// "device" is also a Target's kind (a run on a raw
						// device), which this cannot tell apart.
						if v, ok := literal(pair[1]); ok && kinds[v] && v != KindDevice {
							t.Errorf("%s: a kind compared with %q: use the constant in internal/result/codes.go", fset.Position(x.Pos()), v)
						}
					}
				}
			case *ast.CallExpr:
				// watch's newFinding(dev, "stall", ...)
				if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "newFinding" && len(x.Args) > 1 {
					if v, ok := literal(x.Args[1]); ok {
						t.Errorf("%s: newFinding with the kind %q: use a constant in internal/result/codes.go", fset.Position(x.Pos()), v)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked", checked)
	}
}
