package result

import (
	"fmt"
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
		for _, e := range kindLiterals(fset, f, kinds) {
			t.Error(e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked", checked)
	}
}

// literal is the value of a string literal.
func literal(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	v, _ := strconv.Unquote(lit.Value)
	return v, true
}

// findingType reports whether a composite literal builds a finding.
func findingType(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return strings.HasSuffix(x.Name, "Finding")
	case *ast.SelectorExpr:
		return strings.HasSuffix(x.Sel.Name, "Finding")
	}
	return false
}

// kindLiterals lists where f writes a finding's kind or code as a string
// literal instead of a constant of codes.go.
func kindLiterals(fset *token.FileSet, f *ast.File, kinds map[string]bool) []string {
	var errs []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CompositeLit:
			// Finding{Kind: "new-kind", Code: "new-code"}: any literal, a
			// kind codes.go lacks as much as one it has.
			if !findingType(x.Type) {
				return true
			}
			for _, el := range x.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if k, ok := kv.Key.(*ast.Ident); ok && (k.Name == "Kind" || k.Name == "Code") {
					if v, ok := literal(kv.Value); ok {
						errs = append(errs, fmt.Sprintf("%s: %s: %q in a finding: add it to internal/result/codes.go and use the constant", fset.Position(kv.Pos()), k.Name, v))
					}
				}
			}
		case *ast.KeyValueExpr:
			// Finding{Kind: "stall"}
			if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Kind" {
				if v, ok := literal(x.Value); ok && kinds[v] {
					errs = append(errs, fmt.Sprintf("%s: Kind: %q: use the constant in internal/result/codes.go", fset.Position(x.Pos()), v))
				}
			}
		case *ast.BinaryExpr:
			// f.Kind == "stall"
			if x.Op != token.EQL && x.Op != token.NEQ {
				return true
			}
			for _, pair := range [][2]ast.Expr{{x.X, x.Y}, {x.Y, x.X}} {
				if sel, ok := pair[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "Code" {
					// f.Code == "stall-new": codes are constants too.
					if v, ok := literal(pair[1]); ok {
						errs = append(errs, fmt.Sprintf("%s: a code compared with %q: use the constant in internal/result/codes.go", fset.Position(x.Pos()), v))
					}
				}
				if sel, ok := pair[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "Kind" {
					// "device" is also a Target's kind (a run on a raw
					// device), which this cannot tell apart.
					if v, ok := literal(pair[1]); ok && kinds[v] && v != KindDevice {
						errs = append(errs, fmt.Sprintf("%s: a kind compared with %q: use the constant in internal/result/codes.go", fset.Position(x.Pos()), v))
					}
				}
			}
		case *ast.CallExpr:
			// watch's newFinding(dev, "stall", ...)
			if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "newFinding" && len(x.Args) > 1 {
				if v, ok := literal(x.Args[1]); ok {
					errs = append(errs, fmt.Sprintf("%s: newFinding with the kind %q: use a constant in internal/result/codes.go", fset.Position(x.Pos()), v))
				}
			}
		}
		return true
	})
	return errs
}

// The check finds each way a kind or code is made up, and passes over a
// constant and over kinds that are not a finding's.
func TestFindingKindLiteralsFound(t *testing.T) {
	src := `package x

func f(r result.Result, g Finding) {
	_ = result.Finding{Kind: "made-up", Code: result.CodeStall}
	_ = Finding{Kind: KindStall, Code: "made-up-code"}
	_ = WatchFinding{Finding: Finding{Kind: "stall"}}
	if g.Code == "made-up-code" {
	}
	_ = newFinding(dev, "burst", "start")
	_ = result.Target{Kind: "file"}
	_ = units.ValueError{Kind: "size"}
	_ = Finding{Kind: KindCliff, Code: CodeCliff}
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	errs := kindLiterals(fset, f, map[string]bool{"stall": true, "burst": true, "device": true})
	want := []string{`x.go:4:21: Kind: "made-up"`, `x.go:5:31: Code: "made-up-code"`, `x.go:6:36: Kind: "stall" in a finding`,
		`x.go:6:36: Kind: "stall": use`, `x.go:7:5: a code compared`, `x.go:9:6: newFinding with the kind "burst"`}
	if len(errs) != len(want) {
		t.Fatalf("found %d, want %d:\n%s", len(errs), len(want), strings.Join(errs, "\n"))
	}
	for _, w := range want {
		hit := false
		for _, e := range errs {
			hit = hit || strings.HasPrefix(e, w)
		}
		if !hit {
			t.Errorf("%s not found in:\n%s", w, strings.Join(errs, "\n"))
		}
	}
}
