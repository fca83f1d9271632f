package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// Issue 39.7: fio's own output, read back, is not headed "iolens -".
func TestHeaderOfFioOutput(t *testing.T) {
	var b bytes.Buffer
	writeHeader(&b, result.Result{Suite: "fio", RunID: "fio:r.json"})
	if first := strings.SplitN(b.String(), "\n", 2)[0]; first != "read by iolens  suite fio  run fio:r.json" {
		t.Errorf("header %q", first)
	}
	b.Reset()
	writeHeader(&b, result.Result{Suite: "quick", RunID: "r", Host: result.Host{IolensVersion: "v0.3.0"}})
	if first := strings.SplitN(b.String(), "\n", 2)[0]; first != "iolens v0.3.0  suite quick  run r" {
		t.Errorf("header %q", first)
	}
}

// Issue 39.7: what a plan could not establish travels as a note on
// whichever result followed it; the Notes list it under no test (the
// report says it once, under "Not established").
func TestNotesLeaveRunNotes(t *testing.T) {
	var b bytes.Buffer
	writeNotes(&b, []result.Result{{Test: result.TestSpec{Name: "randwrite-4k-qd4"},
		Notes: []string{result.NoteNotEstablished + "read 1 MiB curve: no time left in the budget", result.NoteInterrupted, "tmpfs: measures memory"}}})
	got := b.String()
	if strings.Contains(got, "not established") || strings.Contains(got, "interrupted") || !strings.Contains(got, "randwrite-4k-qd4: tmpfs: measures memory") {
		t.Errorf("notes:\n%s", got)
	}
}
