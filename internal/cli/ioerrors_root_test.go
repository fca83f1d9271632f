package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/realio"
)

// diagnoseFailing runs 'iolens diagnose' on a fresh emulated disk with
// faults, as a user would (-o json, --html), and returns its diagnosis,
// the page, stderr and the exit status.
func diagnoseFailing(t *testing.T, name string, f emulate.Faults) (diagnosis.Diagnosis, string, string, int) {
	t.Helper()
	if testing.Short() {
		t.Skip("real IO on an emulated disk: not under -short")
	}
	// Nothing checked is a figure: the caps, far below the machine's,
	// keep the disk from taking the CPU the tests beside it need.
	realio.Capped(t, emulate.Unavailable("fio"))
	ctx := context.Background()
	d, err := emulate.Create(ctx, emulate.Spec{Name: name, Dir: t.TempDir(), SizeBytes: 1 << 30, RAM: true, Faults: &f,
		Limits: emulate.Limits{ReadIOPS: 4000, WriteIOPS: 4000, ReadBPS: 100e6, WriteBPS: 100e6}})
	if err != nil {
		t.Fatalf("emulate: %v", err)
	}
	realio.Cleanup(t, func() {
		if err := d.ForceDestroy(context.Background()); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	page := filepath.Join(t.TempDir(), "d.html")
	t.Setenv(EnvNoMetadata, "1")
	stdout, stderr, code := execute(t, "diagnose", d.Mount, "--budget", "60s", "--size", "256M", "--no-save", "-q", "-o", "json", "--html", page)
	var dg diagnosis.Diagnosis
	if err := json.Unmarshal([]byte(stdout), &dg); err != nil {
		t.Fatalf("diagnose -o json (exit %d, %s): %v", code, stderr, err)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exit %d, verdict:\n%s\nstderr: %s", code, strings.Join(dg.Verdict, "\n"), stderr)
	return dg, string(html), stderr, code
}

// checkIOErrorsFirst: the errors open the verdict in the JSON and the
// page, the exit status is a failed check's, and the kernel's own log is
// quoted where this host lets a test read it.
func checkIOErrorsFirst(t *testing.T, dg diagnosis.Diagnosis, html, stderr string, code, least int) {
	t.Helper()
	if code != 4 {
		t.Errorf("exit %d, want 4 (a failed check)", code)
	}
	if !strings.Contains(stderr, "the disk returned IO errors") {
		t.Errorf("stderr does not say why it failed: %s", stderr)
	}
	e := dg.IOErrors
	if e == nil || e.Tests < least {
		t.Fatalf("io errors %+v, want at least %d tests", e, least)
	}
	if len(dg.Verdict) == 0 || !strings.HasPrefix(dg.Verdict[0], "IO errors: the disk returned IO errors in ") {
		t.Errorf("first verdict line %q", dg.Verdict)
	}
	if !strings.Contains(html, "IO errors: the disk returned IO errors in ") {
		t.Error("the page does not say the IO errors")
	}
	if _, err := os.Stat("/dev/kmsg"); err == nil && len(e.Kernel) == 0 {
		t.Errorf("no kernel record, with /dev/kmsg readable: %+v", e)
	}
}

// A disk with unreadable sectors past its first 64 MiB: every read test
// fails with EIO (the test file reaches them), the writes pass.
func TestDiagnoseReadErrors(t *testing.T) {
	dg, html, stderr, code := diagnoseFailing(t, "dg-badsect", emulate.Faults{ReadErrorFrom: 64 << 20, ReadErrorTo: 1 << 30})
	checkIOErrorsFirst(t, dg, html, stderr, code, 2)
	reads := 0
	for _, f := range dg.IOErrors.Failed {
		for _, o := range f.Ops {
			// fdatasync's own file is new: its blocks and the file
			// system's metadata it makes the kernel read back may lie in
			// the unreadable range, so its write can fail too.
			if o.Op != "read" && f.Test != "fdatasync-2300" {
				t.Errorf("%s: a failed %s on a disk whose writes pass", f.Test, o.Op)
			}
			reads++
		}
	}
	if reads == 0 || !strings.Contains(dg.Verdict[0], "reads at offsets") {
		t.Errorf("no failed read offsets: %+v", dg.IOErrors)
	}
	if dg.Disk.Read != nil {
		t.Errorf("a read figure from failed reads: %+v", dg.Disk.Read)
	}
}

// A disk that fails all IO one second in five: the tests that span a
// second down fail, and the verdict opens with them however few figures
// are left.
func TestDiagnoseIntermittentErrors(t *testing.T) {
	dg, html, stderr, code := diagnoseFailing(t, "dg-flaky", emulate.Faults{DownEvery: 5 * time.Second, DownFor: time.Second})
	checkIOErrorsFirst(t, dg, html, stderr, code, 1)
}

// A failed check exits 4 and says its own words, not --fail-on's.
func TestCheckFailedExit(t *testing.T) {
	var b strings.Builder
	if code := ExitCode(checkFailed("the disk returned IO errors in 3 of 9 tests"), false, &b); code != 4 {
		t.Errorf("exit %d, want 4", code)
	}
	if got := b.String(); got != "iolens: error: the disk returned IO errors in 3 of 9 tests\n" {
		t.Errorf("printed %q", got)
	}
}
