package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/diagnosis"
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

// Issue 39.7: read and write curves with their knee at one depth get one
// "knee QD9" label on the chart, not two drawn on each other.
func TestOneKneeLabelPerDepth(t *testing.T) {
	pts := []diagnosis.CurvePoint{{QD: 1, IOPS: 500, LatNs: 2e6}, {QD: 16, IOPS: 4000, LatNs: 4e6}, {QD: 32, IOPS: 4000, LatNs: 8e6}}
	d := diagnosis.Diagnosis{Curves: []diagnosis.Curve{
		{Dir: "read", IOSizeBytes: 4096, Random: true, State: "plateau", KneeQD: 8.6, CeilingIOPS: 4000, BaseLatNs: 2e6, Sharpness: 8, Points: pts},
		{Dir: "write", IOSizeBytes: 4096, Random: true, State: "plateau", KneeQD: 8.2, CeilingIOPS: 4000, BaseLatNs: 2e6, Sharpness: 8, Points: pts},
	}}
	items := modelCharts(&d, "m")
	if len(items) != 1 || len(items[0].Knees) != 1 || items[0].Knees[0].Label != "fitted knee ≈QD9 (estimated)" {
		t.Errorf("knees %+v", items)
	}
}
