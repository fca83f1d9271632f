package hint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// hintErrorPointer reports whether e is the type *hint.Error.
func hintErrorPointer(e ast.Expr) bool {
	st, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := st.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "hint" && sel.Sel.Name == "Error"
}

// hinter reports whether e is the interface hint.Of reads through.
func hinter(e ast.Expr) bool {
	it, ok := e.(*ast.InterfaceType)
	if !ok || it.Methods == nil || len(it.Methods.List) != 1 {
		return false
	}
	m := it.Methods.List[0]
	return len(m.Names) == 1 && m.Names[0].Name == "Hint"
}

func TestHintErrorPointerFound(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\nvar a *hint.Error\nvar b *hint.Other\nvar c hint.Error\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	for _, d := range f.Decls {
		got = append(got, hintErrorPointer(d.(*ast.GenDecl).Specs[0].(*ast.ValueSpec).Type))
	}
	if len(got) != 3 || !got[0] || got[1] || got[2] {
		t.Errorf("found %v, want [true false false]", got)
	}
	f, err = parser.ParseFile(token.NewFileSet(), "y.go", "package y\nvar h interface{ Hint() string }\nvar s interface{ String() string }\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !hinter(f.Decls[0].(*ast.GenDecl).Specs[0].(*ast.ValueSpec).Type) || hinter(f.Decls[1].(*ast.GenDecl).Specs[0].(*ast.ValueSpec).Type) {
		t.Error("hinter does not tell interface{ Hint() string } from another")
	}
}

// One way to carry a hint: a Hint() method, which Of finds through any
// wrapping. An error type with a Hint field instead hides its advice
// from Of (and from every command that prints errors through it), as
// limits' spec and price errors once did.
func TestNoHintFields(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok && hintErrorPointer(vs.Type) {
				t.Errorf("%s: a *hint.Error read by its type misses every other error's hint: read it with hint.Of (and add to it with hint.Wrap)", fset.Position(vs.Pos()))
			}
			if vs, ok := n.(*ast.ValueSpec); ok && hinter(vs.Type) && filepath.Base(filepath.Dir(path)) != "hint" {
				t.Errorf("%s: a variable of interface{ Hint() string } is a copy of hint.Of: call it", fset.Position(vs.Pos()))
			}
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !strings.HasSuffix(ts.Name.Name, "Error") {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fl := range st.Fields.List {
				for _, name := range fl.Names {
					if name.Name == "Hint" {
						t.Errorf("%s: %s has a Hint field: give it a Hint() method instead, which hint.Of reads", fset.Position(name.Pos()), ts.Name.Name)
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
		t.Fatalf("only %d files checked: the walk missed the tree", checked)
	}
}
