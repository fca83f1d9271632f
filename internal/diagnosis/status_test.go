package diagnosis

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// Issue 39.1: an interrupted run's diagnosis says so in its status, and
// its JSON lists what was not established as a list, never null.
func TestStatusAndNotEstablishedList(t *testing.T) {
	rs := []result.Result{{RunID: "r", Status: "ok", Notes: []string{result.NoteInterrupted}}, {RunID: "r", Status: "failed"}}
	d := Build(rs, Options{})
	if d.Status.State != result.RunInterrupted || !d.Interrupted {
		t.Errorf("status %+v interrupted %v", d.Status, d.Interrupted)
	}
	b, err := json.Marshal(Build(nil, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"not_established":[]`) {
		t.Errorf("not_established is not a list: %s", b)
	}
	if d := Build(rs, Options{Interrupted: true}); d.Status.State != result.RunInterrupted {
		t.Errorf("an interrupted option without the note: %+v", d.Status)
	}
}

// Issue 39.7: results that give no verdict say why, so no report opens
// with an empty Verdict heading.
func TestNoVerdictSaysWhy(t *testing.T) {
	w := &result.DirResult{IOPS: 1000}
	cases := []struct {
		name string
		rs   []result.Result
		want string
	}{
		{"failed", []result.Result{{Status: "failed", Error: "EINVAL"}}, "every test failed"},
		{"buffered", []result.Result{{Status: "ok", Test: result.TestSpec{RW: "write", BlockSize: 4096}, Write: w}}, "page cache"},
		{"mixed", []result.Result{{Status: "ok", Test: result.TestSpec{RW: "randrw", Direct: true, BlockSize: 4096}, Read: w, Write: w}}, "mixed reads and writes"},
	}
	for _, c := range cases {
		d := Build(c.rs, Options{})
		if len(d.Verdict) != 1 || !strings.Contains(d.Verdict[0], c.want) {
			t.Errorf("%s: verdict %q, want one line with %q", c.name, d.Verdict, c.want)
		}
	}
}

// Issue 39.4: "To change" names the direction a line is about when reads
// and writes differ, so two lines never read as a contradiction; a line
// both directions give is said once, plainly.
func TestAdviceNamesTheDirection(t *testing.T) {
	d := Diagnosis{}
	d.Disk.Read = &Direction{IOPSLimit: result.CodeDevice, IOPSState: result.StatePlateau}
	d.Disk.Write = &Direction{IOPSState: result.StateLatency}
	got := strings.Join(advice(&d), "\n")
	if !strings.Contains(got, "reads: the device saturates") || !strings.Contains(got, "writes: more IOs in flight") {
		t.Errorf("advice:\n%s", got)
	}
	d.Disk.Write = &Direction{IOPSLimit: result.CodeDevice, IOPSState: result.StatePlateau}
	if got := advice(&d); len(got) != 1 || strings.HasPrefix(got[0], "reads") {
		t.Errorf("both directions alike: %q", got)
	}
}

// Issue 39.3: every headline figure carries how sure it is, or says why
// it cannot.
func TestEveryFigureSaysHowSure(t *testing.T) {
	if got := figureWords("3,509 IOPS", 0, 0, 3509, result.StatePlateau, result.CodeIOPSCap, 32); !strings.Contains(got, "± not computed: under 3 seconds") {
		t.Errorf("no interval: %q", got)
	}
	if got := figureWords("3,509 IOPS", 3508.9, 3509.1, 3509, result.StatePlateau, result.CodeIOPSCap, 32); !strings.Contains(got, "±<0.1%") {
		t.Errorf("a tiny interval: %q", got)
	}
	if got := figureWords("3,509 IOPS", 3400, 3600, 3509, result.StatePlateau, result.CodeIOPSCap, 32); !strings.Contains(got, "±3.2%") {
		t.Errorf("an interval: %q", got)
	}
}
