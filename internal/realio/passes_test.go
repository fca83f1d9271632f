package realio

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// make test's two passes together run every long package: the exclusive
// pass those with a test that runs alone, the shared pass those with a
// shared test and those with no real-IO test that runs alone.
func TestLongPackagesPasses(t *testing.T) {
	root, script := makeScript(t, "long-packages")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on the PATH: %v", err)
	}
	list := func(args ...string) []string {
		t.Helper()
		cmd := exec.Command(script, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GO="+goBin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("long-packages %v: %v", args, err)
		}
		var pkgs []string
		for _, l := range strings.Fields(string(out)) {
			pkgs = append(pkgs, strings.TrimPrefix(l, "github.com/iolens/iolens/"))
		}
		return pkgs
	}
	all, excl, shared := list(), list("--exclusive"), list("--shared")
	union := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(excl), shared...))))
	if !slices.Equal(union, slices.Sorted(slices.Values(all))) {
		t.Errorf("the passes run %v; every long package is %v", union, all)
	}
	for _, c := range []struct {
		pkg          string
		excl, shared bool
	}{
		{"internal/watch", true, false},   // reads the machine's iowait: alone
		{"internal/analysis", true, true}, // model curves alone, capped ground truths shared
		{"internal/report", false, true},  // a browser, no real IO
		{"internal/realio", false, false}, // its tests take no slot of the machine
		{"test/e2e", false, false},        // make e2e runs it
	} {
		if got := slices.Contains(excl, c.pkg); got != c.excl {
			t.Errorf("%s in the exclusive pass: %v, want %v", c.pkg, got, c.excl)
		}
		if got := slices.Contains(shared, c.pkg); got != c.shared {
			t.Errorf("%s in the shared pass: %v, want %v", c.pkg, got, c.shared)
		}
	}
	// The script finds real-IO tests in _test.go files: a call from any
	// other file would be in neither pass's list, its test skipped in both.
	err = filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			filepath.Dir(path) == filepath.Join(root, "internal", "realio") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// (Spelt so that this file does not itself look like a real-IO
		// test to the script.)
		for _, f := range []string{"Exclusive(", "Real(", "Shared(", "Capped("} {
			if strings.Contains(string(b), "realio"+"."+f) {
				t.Errorf("%s calls %s of package realio outside a _test.go file: make test's passes would not see it", path, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(script, "--both").Run(); err == nil {
		t.Error("long-packages --both: exit 0, want a usage error")
	}
}

// makeScript returns the module's root and the path of one of make
// test's scripts, and skips outside the source tree.
func makeScript(t *testing.T, name string) (root, script string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(root, "scripts", name)
	if _, err := os.Stat(script); err != nil {
		t.Skipf("not in the source tree: %v", err)
	}
	return root, script
}
