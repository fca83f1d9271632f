package diagnosis

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

// failWith turns r into a test that failed as the runner records it.
func failWith(r *result.Result, errText, stderr string) {
	r.Status, r.Error, r.FioStderr = "failed", errText, stderr
	r.Read, r.Write, r.Sync, r.Findings = nil, nil, nil, nil
}

// The quick suite on a disk whose reads fail (unreadable sectors): every
// read test failed with EIO, the writes and fsync passed. The verdict
// opens with the errors, names the tests and the offsets fio gave, and
// the kernel's record after them; the JSON carries them.
func TestIOErrorsFirst(t *testing.T) {
	rs := readFixture(t, "quick-3000iops-80MBps.ndjson")
	reads := 0
	for i := range rs {
		r := &rs[i]
		if strings.Contains(r.Test.RW, "read") {
			reads++
			off := []string{"68157440", "1048576"}[reads%2]
			failWith(r, "fio job "+r.Test.Name+" failed with error 5 (EIO): fio: io_u error on file /mnt/t: Input/output error: read offset="+off+", buflen=4096",
				"fio: io_u error on file /mnt/t: Input/output error: read offset="+off+", buflen=4096\nfio: pid=12, err=5/file:io_u.c:1889, func=io_u error, error=Input/output error")
		}
	}
	if reads < 2 {
		t.Fatalf("fixture has %d read tests", reads)
	}
	rs[len(rs)-1].Notes = append(rs[len(rs)-1].Notes, result.NoteKernel+"I/O error, dev loop7, sector 133120 op 0x0:(READ) flags 0x4000 phys_seg 1 prio class 0")
	analysis.Annotate(rs)
	d := Build(rs, Options{})
	if len(d.Verdict) < 2 {
		t.Fatalf("verdict %q", d.Verdict)
	}
	first := d.Verdict[0]
	for _, want := range []string{"IO errors", fmt.Sprintf("%d of %d tests", reads, len(rs)), "reads at offsets", "68,157,440", "1,048,576"} {
		if !strings.Contains(first, want) {
			t.Errorf("first verdict line %q lacks %q", first, want)
		}
	}
	if !strings.HasPrefix(d.Verdict[1], "kernel: I/O error, dev loop7") {
		t.Errorf("second line %q: want the kernel's record", d.Verdict[1])
	}
	e := d.IOErrors
	if e == nil || e.Tests != reads || e.Of != len(rs) || len(e.Failed) != reads || len(e.Failed[0].Ops) != 1 || e.Failed[0].Ops[0].Op != "read" {
		t.Fatalf("io errors %+v", e)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), fmt.Sprintf(`"io_errors":{"tests":%d`, reads)) || !strings.Contains(string(b), `"offset_bytes":68157440`) {
		t.Errorf("JSON lacks the errors: %s", b)
	}
	if len(d.ToChange) == 0 || !strings.Contains(d.ToChange[0], "IO errors") {
		t.Errorf("advice %q: want the IO errors first", d.ToChange)
	}
}

// A test that failed for another reason (space, a refused option) is no
// IO error: no such line, and none in the JSON.
func TestIOErrorsOnlyFromIO(t *testing.T) {
	for _, c := range []struct{ err, stderr string }{
		{"fio job randread-4k-qd1 failed with error 28 (ENOSPC)", "fio: io_u error on file /mnt/t: No space left on device: write offset=4096, buflen=4096"},
		{"the file system refused O_DIRECT", ""},
		{"bound: fio ran past 40 s and was stopped", ""},
	} {
		rs := readFixture(t, "quick-3000iops-80MBps.ndjson")
		failWith(&rs[0], c.err, c.stderr)
		d := Build(rs, Options{})
		if d.IOErrors != nil || len(d.Verdict) > 0 && strings.Contains(d.Verdict[0], "IO error") {
			t.Errorf("%q: io errors %+v, verdict %q", c.err, d.IOErrors, d.Verdict)
		}
	}
}
