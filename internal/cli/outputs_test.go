package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
)

// readCopy decodes an NDJSON copy of results.
func readCopy(t *testing.T, path string) []result.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no NDJSON copy: %v", err)
	}
	if !bytes.HasPrefix(b, []byte(`{"schema":`)) {
		t.Fatalf("%s is not NDJSON: %.60q", path, b)
	}
	rs, err := report.ReadFiles([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func isPage(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no HTML page: %v", err)
	}
	if !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) || !bytes.Contains(b, []byte(`id="verdict"`)) {
		t.Errorf("%s is not the HTML report", path)
	}
}

// --out is always the NDJSON copy and --html the page; the old
// -o html --out FILE still writes the page, with a note.
func TestOutAndHTMLFlags(t *testing.T) {
	fixture := filepath.Join("..", "analysis", "testdata", "etcd_fdatasync.json")
	for _, cmd := range []string{"report", "analyze"} {
		t.Run(cmd, func(t *testing.T) {
			dir := t.TempDir()
			cp, page := filepath.Join(dir, "copy.ndjson"), filepath.Join(dir, "page.html")
			stdout, stderr, code := execute(t, cmd, fixture, "--out", cp, "--html", page)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if rs := readCopy(t, cp); len(rs) != 1 || rs[0].Test.Name == "" {
				t.Errorf("copy holds %d results, want the one read", len(rs))
			}
			isPage(t, page)
			if strings.Contains(stdout, "<html") || !strings.Contains(stdout, "fdatasync") {
				t.Errorf("standard output is not the text report:\n%s", stdout)
			}

			// The old spelling: the page in FILE, nothing on stdout, a note.
			old := filepath.Join(dir, "old.html")
			stdout, stderr, code = execute(t, cmd, fixture, "-o", "html", "--out", old)
			if code != 0 || stdout != "" || !strings.Contains(stderr, "deprecated: use --html FILE") {
				t.Errorf("-o html --out: exit %d, stdout %d bytes, stderr %q", code, len(stdout), stderr)
			}
			isPage(t, old)

			// -o html alone still writes the page to standard output.
			stdout, _, code = execute(t, cmd, fixture, "-o", "html")
			if code != 0 || !strings.HasPrefix(stdout, "<!DOCTYPE html>") {
				t.Errorf("-o html: exit %d, %.40q", code, stdout)
			}

			if _, stderr, code := execute(t, cmd, fixture, "--out", cp, "--html", cp); code != 2 || !strings.Contains(stderr, "same file") {
				t.Errorf("same file for both: exit %d, %s", code, stderr)
			}
		})
	}
	// report's --out used to take any format's report: it says where
	// that goes now.
	dir := t.TempDir()
	cp := filepath.Join(dir, "c.ndjson")
	stdout, stderr, code := execute(t, "report", fixture, "-o", "md", "--out", cp)
	if code != 0 || !strings.Contains(stdout, "| test |") || !strings.Contains(stderr, "the md report goes to standard output") {
		t.Errorf("report -o md --out: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	if rs := readCopy(t, cp); len(rs) != 1 {
		t.Errorf("copy holds %d results", len(rs))
	}
}

// saved writes results as an NDJSON file.
func saved(t *testing.T, path string, rs ...result.Result) string {
	t.Helper()
	var buf bytes.Buffer
	for i := range rs {
		b, err := result.Marshal(&rs[i])
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompareOutAndHTML(t *testing.T) {
	dir := t.TempDir()
	mk := func(run string, qd int, iops float64) result.Result {
		return result.Result{Schema: result.SchemaV1, RunID: run, Suite: "s", Index: 1, Repeat: 1, Status: "ok",
			Test: result.TestSpec{Name: "randread-4k", RW: "randread", BlockSize: 4096, IODepth: qd, Direct: true, RuntimeS: 20},
			Read: &result.DirResult{IOPS: iops, BWBytes: iops * 4096, Lat: result.Latency{N: 100, MeanNs: 1e6, P99Ns: 2e6}}}
	}
	a := saved(t, filepath.Join(dir, "a.ndjson"), mk("a", 1, 1000))
	b := saved(t, filepath.Join(dir, "b.ndjson"), mk("b", 8, 8000))
	cp, page := filepath.Join(dir, "copy.ndjson"), filepath.Join(dir, "cmp.html")
	stdout, stderr, code := execute(t, "compare", a, b, "--out", cp, "--html", page)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if rs := readCopy(t, cp); len(rs) != 2 {
		t.Errorf("copy holds %d results, want both operands'", len(rs))
	}
	isPage(t, page)
	// The two files ran the same test name at different depths: the text
	// says so before anything else.
	if !strings.HasPrefix(stdout, "WARNING: ") || !strings.Contains(stdout, "queue depth differs: A 1; B 8 (in randread-4k)") {
		t.Errorf("no mismatch warning first:\n%s", stdout)
	}
	p, _ := os.ReadFile(page)
	if !bytes.Contains(p, []byte(`id="warnings"`)) {
		t.Errorf("page has no warning")
	}
	old := filepath.Join(dir, "old.html")
	stdout, stderr, code = execute(t, "compare", a, b, "-o", "html", "--out", old)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "deprecated") {
		t.Errorf("-o html --out: exit %d, stdout %d bytes, stderr %q", code, len(stdout), stderr)
	}
	isPage(t, old)
}

// run: --out appends the NDJSON copy as results complete, --html writes
// the page, and the old -o html --out FILE still writes the page.
func TestRunOutAndHTML(t *testing.T) {
	needFio(t)
	base := t.TempDir()
	job := filepath.Join(base, "j.fio")
	os.WriteFile(job, []byte("[global]\nioengine=libaio\ndirect=1\nsize=16m\nruntime=1\n[rr]\nrw=randread\nbs=4k\n"), 0o644)
	cp, page := filepath.Join(base, "r.ndjson"), filepath.Join(base, "r.html")
	stdout, stderr, code := execute(t, "run", "--job", job, "--out", cp, "--html", page, "--size", "32M", "--no-save", "-q", base)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if rs := readCopy(t, cp); len(rs) != 1 || rs[0].Test.Name != "rr" {
		t.Errorf("copy: %d results", len(rs))
	}
	isPage(t, page)
	if !strings.Contains(stdout, "Verdict") {
		t.Errorf("no text report on stdout:\n%s", stdout)
	}
	old := filepath.Join(base, "old.html")
	stdout, stderr, code = execute(t, "run", "--job", job, "-o", "html", "--out", old, "--size", "32M", "--no-save", "-q", base)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "deprecated") {
		t.Fatalf("exit %d, stdout %d bytes\n%s", code, len(stdout), stderr)
	}
	isPage(t, old)
}
