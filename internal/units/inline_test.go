package units

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// inlineFigure is a floating-point verb written straight before a rate,
// latency or size unit in a format string: "%.0f IOPS", "%.2f ms",
// "%g GiB". Such a figure skips units' rounding, separators and its
// refusal of NaN and infinities, and drifts from every other place that
// prints the same figure ("2993 IOPS" a line above "2,993 IOPS").
var inlineFigure = regexp.MustCompile(`%[-+# 0]*[0-9]*(\.[0-9]+)?[fFgGeE] ?(IOPS|IO/s|[kKMGT]i?B(/s)?|B/s|ms|µs|us|ns)\b`)

// inlineFigures lists the format strings in src (one Go file) that print
// a rate, latency or size figure inline.
func inlineFigures(t *testing.T, fset *token.FileSet, name string, src any) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		if m := inlineFigure.FindString(s); m != "" {
			p := fset.Position(lit.Pos())
			out = append(out, p.Filename+":"+strconv.Itoa(p.Line)+": "+strconv.Quote(m))
		}
		return true
	})
	return out
}

// Issue 38: units is the one formatter of the figures people read, in
// format strings too: no Go file of iolens outside internal/units prints
// a rate, latency or size with a verb of its own. The benchmark programs
// (benchmarks/) are passed over: they print their own measurements (the
// CPU time of a render, a heap's growth) for the developers who run them.
func TestNoInlineFigureFormats(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var found []string
	files := 0
	eachSourceFile(t, root, []string{"internal/units", "benchmarks"}, func(path, _ string) {
		files++
		for _, x := range inlineFigures(t, fset, path, nil) {
			found = append(found, strings.TrimPrefix(x, root+"/"))
		}
	})
	if files < 200 {
		t.Fatalf("read %d files: the walk is broken", files)
	}
	sort.Strings(found)
	for _, x := range found {
		t.Errorf("%s: print the figure through units (IOPS, MBps, Latency, IOSize, ...), not a verb of its own", x)
	}
}

// The scan finds each shape of an inline figure, and passes over what
// is not one.
func TestInlineFiguresFinds(t *testing.T) {
	src := "package x\n\nimport \"fmt\"\n\nvar _ = []string{\n" +
		`fmt.Sprintf("read %.0f IOPS", 1.0),` + "\n" +
		`fmt.Sprintf(" %.1f MB/s", 1.0),` + "\n" +
		`fmt.Sprintf("p99 %.3gms", 1.0),` + "\n" +
		`fmt.Sprintf("%g GiB cache", 1.0),` + "\n" +
		`fmt.Sprintf("%8.2f µs", 1.0),` + "\n" +
		`fmt.Sprintf("%.0f%%", 1.0),` + "\n" +
		`fmt.Sprintf("%s IOPS", "1"),` + "\n" +
		`fmt.Sprintf("%.0f s", 1.0),` + "\n" +
		`fmt.Sprintf("%d MiB", 1),` + "\n" +
		`fmt.Sprintf("%.0f msgs", 1.0),` + "\n" +
		"}\n"
	got := inlineFigures(t, token.NewFileSet(), "x.go", src)
	if len(got) != 5 {
		t.Errorf("found %d: %q; want the first 5 lines", len(got), got)
	}
}

func TestStated(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Stated(256, "GiB"), "256 GiB"}, {Stated(0.5, "KiB"), "0.5 KiB"}, {Stated(32767, "GiB"), "32767 GiB"},
		{Stated(math.NaN(), "GiB"), "-"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// eachSourceFile calls fn with the path, and the path relative to root,
// of every non-test Go file of the tree under root, past the
// directories skip names (relative to root) and those no build reads.
func eachSourceFile(t *testing.T, root string, skip []string, fn func(path, rel string)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "vendor", "node_modules":
				return filepath.SkipDir
			}
			if slices.Contains(skip, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			fn(path, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
