package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
)

// TestTooManyResults: report, analyze and compare refuse more than
// result.MaxResults results in one go, over every file they are given,
// with exit 1 and a hint that says how to read less at once.
func TestTooManyResults(t *testing.T) {
	realio.Long(t, "reads 100,000 records (seconds)")
	dir := t.TempDir()
	line := []byte(`{"schema":"iolens.result/v3","run_id":"r","suite":"s","test":{"name":"t"},"status":"ok"}` + "\n")
	half := filepath.Join(dir, "half.ndjson")
	if err := os.WriteFile(half, bytes.Repeat(line, result.MaxResults/2+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"report", half, half},
		{"analyze", half, half},
		{"compare", half, half},
	} {
		_, stderr, code := execute(t, args...)
		if code != 1 || !strings.Contains(stderr, "more than 100,000 results in one go") || !strings.Contains(stderr, "split -l 100000") {
			t.Errorf("%s: exit %d, %q; want 1, the bound and how to split", args[0], code, stderr)
		}
	}
	if _, stderr, code := execute(t, "report", half); code != 0 {
		t.Errorf("one half: exit %d, %s", code, stderr)
	}
}
