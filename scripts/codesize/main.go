// Command codesize counts the size of the module's Go code, tests left
// out (and scripts/): lines of code (neither blank nor comment only), exported names
// (top-level functions, types, variables and constants, and methods),
// and functions of 80 lines or more. With -pkg it lists one package's
// lines of code too.
//
//	go run ./scripts/codesize [-pkg internal/cli] [-long] [DIR]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	pkg := flag.String("pkg", "internal/cli", "also count the lines of code of this directory alone")
	long := flag.Bool("long", false, "list the functions of 80 lines or more")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	var loc, pkgLoc, exported int
	type fn struct {
		name  string
		lines int
	}
	var longFns []fn
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || n == "scripts") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		n := codeLines(fset, f, src)
		loc += n
		rel, _ := filepath.Rel(root, path)
		if filepath.Dir(rel) == filepath.FromSlash(*pkg) {
			pkgLoc += n
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() {
					exported++
				}
				if lines := fset.Position(d.End()).Line - fset.Position(d.Pos()).Line + 1; lines >= 80 {
					name := d.Name.Name
					if d.Recv != nil && len(d.Recv.List) > 0 {
						name = recvName(d.Recv.List[0].Type) + "." + name
					}
					longFns = append(longFns, fn{filepath.ToSlash(filepath.Dir(rel)) + " " + name, lines})
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							exported++
						}
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if id.IsExported() {
								exported++
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("lines of code        %d\n", loc)
	fmt.Printf("  of which %-10s %d\n", *pkg, pkgLoc)
	fmt.Printf("exported names       %d\n", exported)
	fmt.Printf("functions of 80+     %d\n", len(longFns))
	if *long {
		sort.Slice(longFns, func(i, j int) bool { return longFns[i].lines > longFns[j].lines })
		for _, f := range longFns {
			fmt.Printf("  %4d %s\n", f.lines, f.name)
		}
	}
}

// codeLines counts the lines of f that hold code: neither blank nor
// inside a comment only.
func codeLines(fset *token.FileSet, f *ast.File, src []byte) int {
	lines := strings.Split(string(src), "\n")
	comment := make([]bool, len(lines)+1)
	for _, g := range f.Comments {
		for _, c := range g.List {
			from, to := fset.Position(c.Pos()), fset.Position(c.End())
			// A comment owns a line only when nothing else is on it.
			for l := from.Line; l <= to.Line; l++ {
				line := strings.TrimSpace(lines[l-1])
				if l == from.Line && strings.TrimSpace(lines[l-1][:from.Column-1]) != "" {
					continue
				}
				if l == to.Line && strings.TrimSpace(lines[l-1][min(to.Column-1, len(lines[l-1])):]) != "" {
					continue
				}
				comment[l] = line != ""
			}
		}
	}
	n := 0
	for i, l := range lines {
		if strings.TrimSpace(l) != "" && !comment[i+1] {
			n++
		}
	}
	return n
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvName(t.X)
	}
	return "?"
}
