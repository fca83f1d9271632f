package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Plain fio outputs kept a file per depth read as one sweep, in analyze
// and report alike: each depth's limit reads across the files, and no
// file is "one depth only" while another file holds the next depth.
func TestFioFilesReadAsOneSweep(t *testing.T) {
	var files []string
	for _, qd := range []string{"1", "2", "4", "8", "16"} {
		files = append(files, filepath.Join("..", "analysis", "testdata", "qd"+qd+".json"))
	}
	for _, cmd := range []string{"analyze", "report"} {
		stdout, stderr, code := execute(t, append([]string{cmd, "-o", "ndjson"}, files...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", cmd, code, stderr)
		}
		if strings.Contains(stdout, "one depth only") {
			t.Errorf("%s: a depth read alone although the other files hold the sweep", cmd)
		}
		if n := strings.Count(stdout, "latency binds"); n < 5 {
			t.Errorf("%s: %d depths read as latency-bound across the files, want 5", cmd, n)
		}
	}
}

// --out's NDJSON copy holds the records -o ndjson prints: one record
// set, whichever way it is asked for.
func TestOutCopyIsTheReport(t *testing.T) {
	for _, c := range []struct{ cmd, in string }{
		{"analyze", filepath.Join("..", "result", "testdata", "v1.ndjson")},
		{"report", filepath.Join("..", "diagnosis", "testdata", "quick-3000iops-80MBps.ndjson")},
		{"analyze", filepath.Join("..", "analysis", "testdata", "qd4.json")},
	} {
		out := filepath.Join(t.TempDir(), "copy.ndjson")
		if _, stderr, code := execute(t, c.cmd, "--out", out, c.in); code != 0 {
			t.Fatalf("%s --out: exit %d: %s", c.cmd, code, stderr)
		}
		stdout, stderr, code := execute(t, c.cmd, "-o", "ndjson", c.in)
		if code != 0 {
			t.Fatalf("%s -o ndjson: exit %d: %s", c.cmd, code, stderr)
		}
		copied, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(copied) != stdout {
			t.Errorf("%s %s: --out wrote %d bytes, -o ndjson %d", c.cmd, filepath.Base(c.in), len(copied), len(stdout))
		}
	}
}
