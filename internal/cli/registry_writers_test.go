package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"testing"

	"github.com/iolens/iolens/internal/archtest"
)

// reportWriters are the exported functions of internal/report that write
// to an io.Writer they take first: the renderers the registries' formats
// call.
func reportWriters(t *testing.T) map[string]bool {
	fset := token.NewFileSet()
	out := map[string]bool{}
	for _, name := range archtest.SourceFiles(t, "../report") {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || len(fn.Type.Params.List) == 0 {
				continue
			}
			if sel, ok := fn.Type.Params.List[0].Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Writer" {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "io" {
					out[fn.Name.Name] = true
				}
			}
		}
	}
	return out
}

// sideDoors lists each place in src (one Go file of the command line)
// that writes output past the registries: a call of one of report's
// writers, or an escaping of its own (termtext's JSON or HTML writers,
// which belong to the formats).
func sideDoors(t *testing.T, name string, src any, writers map[string]bool) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		switch {
		case pkg.Name == "report" && writers[sel.Sel.Name]:
			out = append(out, fset.Position(call.Pos()).String()+": calls report."+sel.Sel.Name+"; write through the format of a registry (writeReport, writeFile)")
		case pkg.Name == "termtext" && (sel.Sel.Name == "NewJSONWriter" || sel.Sel.Name == "NewHTMLWriter"):
			out = append(out, fset.Position(call.Pos()).String()+": escapes with termtext."+sel.Sel.Name+"; the format's own escaping (report.Format.To) does")
		}
		return true
	})
	return out
}

// Issue 38: every output of every command (its -o report, --html,
// --verbose, the NDJSON copies and streams, what it lists) is written by
// a format chosen from a report registry, through that format's own
// escaping: the command line calls no renderer of report directly and
// escapes nothing itself.
func TestEveryOutputThroughARegistry(t *testing.T) {
	writers := reportWriters(t)
	for _, w := range []string{"HTML", "NDJSON", "WriteHTML"} {
		if !writers[w] {
			t.Fatalf("report's writers %v lack %s: the scan is broken", writers, w)
		}
	}
	var found []string
	for _, name := range archtest.SourceFiles(t, ".") {
		found = append(found, sideDoors(t, name, nil, writers)...)
	}
	sort.Strings(found)
	for _, f := range found {
		t.Error(f)
	}
}

// The scan finds a direct renderer and an escaping of the command's own,
// and passes over a registry's format.
func TestSideDoorsFound(t *testing.T) {
	src := `package cli
func f() {
	report.HTML(w, rs)
	termtext.NewHTMLWriter(w)
	format.Write(w, in)
	writeReport(w, format, in)
	report.Results.Lookup("text")
}`
	got := sideDoors(t, "x.go", src, map[string]bool{"HTML": true})
	if len(got) != 2 {
		t.Errorf("found %q, want the first two lines", got)
	}
}
