package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 38: analyze's text is the results registry's text: it opens with
// the run's verdict, before any test's figures, and says a rate the way
// its findings do ("2,683 IOPS" on both lines, never "2683 IOPS").
func TestAnalyzeOpensWithTheVerdict(t *testing.T) {
	etcd := filepath.Join("..", "analysis", "testdata", "etcd_fdatasync.json")
	out, errs, code := execute(t, "analyze", etcd)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	v, test := strings.Index(out, "Verdict\n"), strings.Index(out, "\netcd-fdatasync ")
	if v < 0 || test < 0 || v > test {
		t.Errorf("the verdict (at %d) does not come before the test (at %d):\n%s", v, test, out)
	}
	if !strings.Contains(out, "etcd PASS") || !strings.Contains(out[test:], "write 2,683 IOPS") {
		t.Errorf("no verdict or no figures:\n%s", out)
	}
	if bare := regexp.MustCompile(`\b\d{4,} IOPS`).FindString(out); bare != "" {
		t.Errorf("%q: a rate without its separators:\n%s", bare, out)
	}
}
