package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
)

// markInterrupted rewrites the run file p with its last result marked as
// a Ctrl-C leaves it.
func markInterrupted(t *testing.T, p string) {
	t.Helper()
	rs, err := report.ReadFiles([]string{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs[len(rs)-1].Notes = append(rs[len(rs)-1].Notes, result.NoteInterrupted)
	var buf bytes.Buffer
	if err := report.NDJSON(&buf, rs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Issue 39.1: an interrupted run says so wherever runs are listed, and
// compare refuses it unless asked.
func TestInterruptedRunIsListedAndRefused(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	a := writeRun(t, dir, "20240501-120000-aaaaaa", []float64{1000}, nil)
	b := writeRun(t, dir, "20240502-120000-bbbbbb", []float64{3500}, nil)
	markInterrupted(t, b)
	if _, e, code := execute(t, "history", "import", "--db", db, a, b); code != 0 {
		t.Fatalf("import: %s", e)
	}
	out, _, code := execute(t, "history", "--db", db)
	if code != 0 {
		t.Fatal(out)
	}
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "STATUS") {
		t.Errorf("no status column: %s", lines[0])
	}
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "20240502-120000-bbbbbb") && !strings.Contains(l, " interrupted "):
			t.Errorf("the interrupted run: %s", l)
		case strings.HasPrefix(l, "20240501-120000-aaaaaa") && !strings.Contains(l, " complete "):
			t.Errorf("the complete run: %s", l)
		}
	}
	out, _, _ = execute(t, "history", "--db", db, "-o", "json")
	var runs []struct {
		ID     string           `json:"run_id"`
		Status result.RunStatus `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, r := range runs {
		want := map[string]string{"20240501-120000-aaaaaa": result.RunComplete, "20240502-120000-bbbbbb": result.RunInterrupted}[r.ID]
		if r.Status.State != want {
			t.Errorf("json %s: %+v, want %s", r.ID, r.Status, want)
		}
	}

	_, errOut, code := execute(t, "compare", "--db", db, a, b)
	if code == 0 || !strings.Contains(errOut, "interrupted") || !strings.Contains(errOut, "--allow-partial") {
		t.Errorf("compare of an interrupted run: exit %d, %s", code, errOut)
	}
	out, errOut, code = execute(t, "compare", "--db", db, "--allow-partial", a, b)
	if code != 0 || !strings.Contains(out, "[interrupted: stopped part way") {
		t.Errorf("compare --allow-partial: exit %d, %s %s", code, out, errOut)
	}
}

// Issue 39.8: 'iolens help words' says what every glossary word means.
func TestHelpWords(t *testing.T) {
	out, _, code := execute(t, "help", "words")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, term := range report.Glossary {
		if !strings.Contains(out, "\n  "+term.Word+"\n") || !strings.Contains(out, strings.Fields(term.Meaning)[0]) {
			t.Errorf("%s missing:\n%s", term.Word, out)
		}
	}
}
