package units

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// notFormatters are functions outside units that turn a number into text
// but print no rate, size, duration, latency or count for people: machine
// formats other programs read, names and sentences. Each is keyed by file
// and name, so a formatter of the same name elsewhere is still found.
var notFormatters = map[string]string{
	"internal/fio/convert.go:errnoText":              "an errno's name",
	"internal/diskstats/resolve.go:majmin":           "a device number as the kernel writes it",
	"internal/watch/cgroup.go:procCgroup":            "a process's cgroup path",
	"internal/promhist/promtest/promtest.go:tail":    "the last lines of a log",
	"internal/etcdmetrics/etcdtest/etcdtest.go:tail": "the last lines of a log",
	"internal/runner/options.go:formatFioTime":       "a time in fio's job-file syntax",
	"internal/report/compare_render.go:testNote":     "the significance test's note, with its alpha",
	"internal/headroom/rules.go:constant":            "a PromQL expression of a constant series",
	"internal/promhist/analyze.go:sinceFlag":         "a duration in the syntax --since and --step read",
	"benchmarks/headroom/server.go:inst":             "a generated node exporter instance name",
	"benchmarks/headroom/server.go:dev":              "a generated device name",
	"internal/runner/runner.go:note":                 "a sentence on writeback",
	"internal/report/html.go:color":                  "a chart colour",
	"internal/etcdmetrics/hist.go:formatLe":          "a Prometheus le label value",
	"internal/limits/price.go:above":                 "a price band's words",
}

// numberFormatters returns the unexported functions in src that take a
// number first (and only numbers and words) and return text: the shape of
// a private copy of a units formatter.
func numberFormatters(t *testing.T, fset *token.FileSet, name string, src any) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	numeric := map[string]bool{"float64": true, "float32": true, "int": true, "int64": true, "uint64": true, "int32": true, "uint32": true, "time.Duration": true}
	var found []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Type.Results == nil || ast.IsExported(fn.Name.Name) || len(fn.Type.Params.List) == 0 {
			continue
		}
		text := func(e ast.Expr) string {
			switch x := e.(type) {
			case *ast.Ident:
				return x.Name
			case *ast.SelectorExpr:
				if p, ok := x.X.(*ast.Ident); ok {
					return p.Name + "." + x.Sel.Name
				}
			}
			return ""
		}
		results := 0
		stringsOnly := true
		for _, r := range fn.Type.Results.List {
			n := max(len(r.Names), 1)
			results += n
			stringsOnly = stringsOnly && text(r.Type) == "string"
		}
		if !stringsOnly || results > 2 {
			continue
		}
		if !numeric[text(fn.Type.Params.List[0].Type)] {
			continue
		}
		nums, others := 0, 0
		for _, p := range fn.Type.Params.List {
			n := max(len(p.Names), 1)
			switch ty := text(p.Type); {
			case numeric[ty]:
				nums += n
			case ty == "string":
			default:
				others += n
			}
		}
		if nums > 0 && others == 0 {
			found = append(found, fn.Name.Name)
		}
	}
	return found
}

// TestNoPrivateFormatters keeps units the one formatter: a function
// elsewhere that turns numbers into text is a copy of one of its
// formatters, which drifts from it (a byte-for-byte copy of FormatRate
// once did).
func TestNoPrivateFormatters(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var copies []string
	seen := map[string]bool{}
	eachSourceFile(t, root, []string{"internal/units"}, func(path, rel string) {
		for _, name := range numberFormatters(t, fset, path, nil) {
			key := rel + ":" + name
			if _, ok := notFormatters[key]; ok {
				seen[key] = true
				continue
			}
			copies = append(copies, key)
		}
	})
	sort.Strings(copies)
	for _, c := range copies {
		t.Errorf("%s formats numbers outside internal/units: call units (add the format there, with a test) or, if it prints no rate, size, duration, latency or count, list it in notFormatters", c)
	}
	for key := range notFormatters {
		if !seen[key] {
			t.Errorf("notFormatters lists %s, which is gone: take it out", key)
		}
	}
}

// TestNoPrivateFormattersFinds checks that the scan finds the shapes a copy
// takes, and passes over what is not one.
func TestNoPrivateFormattersFinds(t *testing.T) {
	src := `package x

import "time"

func mbps(bw float64) string { return "" }
func formatFigure(v float64, unit string) string { return "" }
func duration(s float64) (string, string) { return "", "" }
func dur(d time.Duration) string { return "" }
func (w writer) sizeText(n int64) string { return "" }
func label(m map[string]string) string { return "" }
func parse(s string) (float64, error) { return 0, nil }
func name(s string) string { return s }
func clip(s string, n int) string { return s }
func Exported(v float64) string { return "" }
`
	got := numberFormatters(t, token.NewFileSet(), "x.go", src)
	want := []string{"mbps", "formatFigure", "duration", "dur", "sizeText"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("found %q, want %q", got, want)
	}
}
