package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
)

// writeRun writes a run of two tests x repeats as NDJSON and returns the
// file.
func writeRun(t *testing.T, dir, id string, iops []float64, labels map[string]string) string {
	t.Helper()
	var rs []result.Result
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	if ts, err := time.Parse("20060102-150405", id[:15]); err == nil {
		start = ts
	}
	for ti, name := range []string{"randread-4k", "seqwrite-1m"} {
		for rep, v := range iops {
			r := result.Result{Schema: result.SchemaV1, RunID: id, Suite: "quick", Index: ti + 1, Repeat: rep + 1,
				Test:   result.TestSpec{Name: name, RW: "randread", BlockSize: 4096, IODepth: 8, NumJobs: 1},
				Target: result.Target{Kind: "dir", Path: "/mnt/" + id, Device: "vdb", Labels: labels},
				Host:   result.Host{Hostname: "node"}, Start: start.Add(time.Duration(ti*10+rep) * time.Minute), Status: "ok",
				Read: &result.DirResult{IOPS: v * float64(ti+1), BWBytes: v * 4096, Lat: result.Latency{P99Ns: 2023424},
					Hist: result.HistogramOf(map[uint64]uint64{1003520: 99, 2023424: 1})},
				FioSeries: []result.FioSample{}, Devices: []result.DeviceSeries{}, System: []result.SystemSample{}}
			rs = append(rs, r)
		}
	}
	p := filepath.Join(dir, id+".ndjson")
	var buf bytes.Buffer
	if err := report.NDJSON(&buf, rs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHistoryCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	a := writeRun(t, dir, "20240501-120000-aaaaaa", []float64{1000, 1010, 990}, map[string]string{"storage-class": "premium"})
	b := writeRun(t, dir, "20240502-120000-bbbbbb", []float64{1100, 1120, 1090}, map[string]string{"storage-class": "standard"})

	_, errOut, code := execute(t, "history", "import", "--db", db, "--label", "cluster=west", a, b)
	if code != 0 || !strings.Contains(errOut, "6 results added") {
		t.Fatalf("import: %d %s", code, errOut)
	}
	// Importing again stores nothing new.
	if _, errOut, _ = execute(t, "history", "import", "--db", db, a); !strings.Contains(errOut, "0 results added, 6 already stored") {
		t.Errorf("re-import: %s", errOut)
	}
	out, _, code := execute(t, "history", "--db", db)
	if code != 0 || !strings.Contains(out, "20240502-120000-bbbbbb") || strings.Index(out, "bbbbbb") > strings.Index(out, "aaaaaa") {
		t.Errorf("list (newest first):\n%s", out)
	}
	if !strings.Contains(out, "cluster=west,storage-class=premium") || !strings.Contains(out, "2020") {
		t.Errorf("list labels/headline:\n%s", out)
	}
	out, _, _ = execute(t, "history", "--db", db, "-o", "json", "-l", "storage-class=standard")
	var runs []map[string]any
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 || runs[0]["run_id"] != "20240502-120000-bbbbbb" {
		t.Errorf("json list with selector: %v %s", err, out)
	}
	// Export round trip: the exported records equal the imported ones,
	// plus the import label.
	out, _, code = execute(t, "history", "export", "--db", db, "20240501")
	if code != 0 {
		t.Fatalf("export: %d", code)
	}
	got, err := report.ReadResults(strings.NewReader(out), "export")
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := report.ReadFiles([]string{a}, nil)
	if len(got) != len(orig) {
		t.Fatalf("export: %d results, want %d", len(got), len(orig))
	}
	for i := range orig {
		orig[i].Target.Labels["cluster"] = "west"
		gj, _ := json.Marshal(got[i])
		oj, _ := json.Marshal(orig[i])
		if !bytes.Equal(gj, oj) {
			t.Errorf("record %d changed in the round trip:\n%s\n%s", i, gj, oj)
		}
	}
	out, _, code = execute(t, "history", "show", "--db", db, "20240502", "-o", "md")
	if code != 0 || !strings.Contains(out, "| randread-4k #1 |") {
		t.Errorf("show: %d\n%s", code, out)
	}
	if _, errOut, code = execute(t, "history", "show", "--db", db, "nope"); code != 1 || !strings.Contains(errOut, "iolens history") {
		t.Errorf("show unknown: %d %s", code, errOut)
	}

	// compare: run id, file and selector operands.
	out, _, code = execute(t, "compare", "--db", db, "20240501", b)
	if code != 0 || !strings.Contains(out, "1103 (+10.3%)") || !strings.Contains(out, "better (clear)") {
		t.Errorf("compare id vs file: %d\n%s", code, out)
	}
	out, _, code = execute(t, "compare", "--db", db, "storage-class=premium", "storage-class=standard", "-o", "csv")
	if code != 0 || !strings.Contains(out, "storage-class=standard") || strings.Count(out, "\n") != 5 {
		t.Errorf("compare selectors csv: %d\n%s", code, out)
	}
	html := filepath.Join(dir, "cmp.html")
	if _, errOut, code = execute(t, "compare", "--db", db, "storage-class=premium", "storage-class=standard", "-o", "html", "--out", html); code != 0 {
		t.Fatalf("compare html: %s", errOut)
	}
	page, _ := os.ReadFile(html)
	if !bytes.Contains(page, []byte("Comparison")) || !bytes.Contains(page, []byte("iolens-data")) {
		t.Errorf("compare html page incomplete")
	}
	if _, errOut, code = execute(t, "compare", "--db", db, "20240501", "zone=x"); code != 1 || !strings.Contains(errOut, "matches no saved result") {
		t.Errorf("empty selector: %d %s", code, errOut)
	}
	if _, _, code = execute(t, "compare", "--db", db, "a", "b", "-o", "xml"); code != 2 {
		t.Errorf("bad format: %d", code)
	}

	// Prometheus textfile of the newest run.
	prom := filepath.Join(dir, "iolens.prom")
	if _, errOut, code = execute(t, "export", "prometheus", "--db", db, "--out", prom); code != 0 {
		t.Fatalf("export prometheus: %s", errOut)
	}
	text, _ := os.ReadFile(prom)
	// One series per test over its repeats: the mean of 1100, 1120, 1090.
	if !bytes.Contains(text, []byte(`iolens_test_io_operations_per_second{device="vdb",direction="read",run_id="20240502-120000-bbbbbb",test="randread-4k"} 1103.3333333333333`)) ||
		!bytes.Contains(text, []byte(`iolens_test_results{device="vdb",direction="read",run_id="20240502-120000-bbbbbb",test="randread-4k"} 3`)) {
		t.Errorf("textfile:\n%s", text)
	}
	if bytes.Contains(text, []byte("aaaaaa")) {
		t.Errorf("textfile has the older run without --last")
	}

	if _, errOut, code = execute(t, "history", "rm", "--db", db, "20240501"); code != 0 || !strings.Contains(errOut, "removed run 20240501-120000-aaaaaa") {
		t.Errorf("rm: %d %s", code, errOut)
	}
	out, _, _ = execute(t, "history", "--db", db, "-o", "json")
	if strings.Contains(out, "aaaaaa") {
		t.Errorf("run still listed after rm")
	}
}

func TestHistoryDefaultPathFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("IOLENS_DB", filepath.Join(dir, "env.db"))
	a := writeRun(t, dir, "20240501-120000-cccccc", []float64{1}, nil)
	if _, errOut, code := execute(t, "history", "import", a); code != 0 {
		t.Fatal(errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "env.db")); err != nil {
		t.Errorf("IOLENS_DB not used: %v", err)
	}
	out, _, _ := execute(t, "history")
	if !strings.Contains(out, "cccccc") {
		t.Errorf("list: %s", out)
	}
}

func TestRunSavesAndWritesHTML(t *testing.T) {
	needFio(t)
	base := t.TempDir()
	db := filepath.Join(base, "h.db")
	job := filepath.Join(base, "j.fio")
	os.WriteFile(job, []byte("[global]\nioengine=psync\nsize=8m\nruntime=1\ntime_based=1\n[rr]\nrw=randread\nbs=4k\n"), 0o644)
	page := filepath.Join(base, "page.html")
	target := filepath.Join(base, "t")
	os.Mkdir(target, 0o755)
	_, stderr, code := execute(t, "run", "--job", job, "--size", "16M", "-q", "--db", db, "--label", "team=<script>x</script>",
		"--metrics-addr", "127.0.0.1:0", "-o", "html", "--out", page, target)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "metrics on http://127.0.0.1:") || !strings.Contains(stderr, "saved as run") {
		t.Errorf("stderr: %s", stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil || !bytes.Contains(b, []byte("team=&lt;script&gt;x&lt;/script&gt;")) || bytes.Contains(b, []byte("<script>x")) {
		t.Errorf("html page: %v", err)
	}
	out, _, _ := execute(t, "history", "--db", db, "-l", "team=<script>x</script>", "-o", "json")
	var runs []map[string]any
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 || runs[0]["tests"].(float64) != 1 {
		t.Fatalf("saved run: %v %s", err, out)
	}
	// --no-save writes no database.
	db2 := filepath.Join(base, "none.db")
	if _, stderr, code = execute(t, "run", "--job", job, "--size", "16M", "-q", "--no-save", "--db", db2, target); code != 0 {
		t.Fatalf("--no-save: %d %s", code, stderr)
	}
	if _, err := os.Stat(db2); err == nil {
		t.Errorf("--no-save created a database")
	}
}

// listedRuns is the ids 'iolens history -o json' lists.
func listedRuns(t *testing.T, db string) []string {
	t.Helper()
	out, errOut, code := execute(t, "history", "--db", db, "-o", "json")
	if code != 0 {
		t.Fatalf("history: %d %s", code, errOut)
	}
	var runs []struct {
		ID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}

// 'history rm ""' used to match every run: an empty prefix. Empty, blank
// and ambiguous ids are usage errors, checked before anything is removed.
func TestHistoryRefusesEmptyAndAmbiguousIDs(t *testing.T) {
	for _, runs := range [][]string{{"20240501-120000-aaaaaa"}, {"20240501-120000-aaaaaa", "20240502-120000-bbbbbb"}} {
		dir := t.TempDir()
		db := filepath.Join(dir, "h.db")
		for _, id := range runs {
			if _, errOut, code := execute(t, "history", "import", "--db", db, writeRun(t, dir, id, []float64{1}, nil)); code != 0 {
				t.Fatal(errOut)
			}
		}
		for _, args := range [][]string{
			{"rm", ""},
			{"rm", " "},
			{"rm", runs[0], ""},
			{"rm", "2024"},
			{"rm", runs[0], "2024"},
			{"show", ""},
			{"export", ""},
			{"export", "\t"},
		} {
			if len(runs) == 1 && args[len(args)-1] == "2024" {
				continue // a unique prefix when there is one run
			}
			_, errOut, code := execute(t, append(append([]string{"history"}, args...), "--db", db)...)
			if code != 2 || !strings.Contains(errOut, "hint:") {
				t.Errorf("%d runs: history %q: exit %d, want 2 (usage)\n%s", len(runs), args, code, errOut)
			}
			if got := listedRuns(t, db); len(got) != len(runs) {
				t.Fatalf("%d runs: history %q removed runs: %v left", len(runs), args, got)
			}
		}
	}
}

// A negative --limit is refused, not read as "no limit".
func TestHistoryRefusesNegativeLimit(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	_, errOut, code := execute(t, "history", "--db", db, "--limit", "-1")
	if code != 2 || !strings.Contains(errOut, "--limit -1") || !strings.Contains(errOut, "hint:") {
		t.Errorf("history --limit -1: exit %d, want 2 with a hint\n%s", code, errOut)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused history command created the database")
	}
}

// Commands that only read open the database read-only, and rm opens only
// an existing one: a missing database is not created, and they say so.
func TestHistoryReadOnlyMissingDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sub", "none.db")
	out, errOut, code := execute(t, "history", "--db", db)
	if code != 0 || !strings.Contains(out, "no saved runs") || !strings.Contains(errOut, "no history database at "+db) {
		t.Errorf("history on a missing database: %d %q %q", code, out, errOut)
	}
	if out, _, _ := execute(t, "history", "--db", db, "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("json list of a missing database: %q", out)
	}
	for _, args := range [][]string{
		{"history", "show", "20240501"},
		{"history", "export", "20240501"},
		{"compare", "20240501", "20240502"},
		{"export", "prometheus"},
		{"history", "rm", "20240501"},
	} {
		_, errOut, code := execute(t, append(args, "--db", db)...)
		if code != 1 || !strings.Contains(errOut, "no history database at "+db) || !strings.Contains(errOut, "hint:") {
			t.Errorf("%q: %d %s", args, code, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); !os.IsNotExist(err) {
		t.Errorf("a read-only command created %s", filepath.Join(dir, "sub"))
	}
}

// --db names are file names, not URIs.
func TestHistoryDBPathNotEscaped(t *testing.T) {
	for _, name := range []string{"we?ird.db", "a%20b.db", "#x.db", "sp ace é.db"} {
		dir := t.TempDir()
		run := writeRun(t, t.TempDir(), "20240501-120000-aaaaaa", []float64{1}, nil)
		db := filepath.Join(dir, name)
		if _, errOut, code := execute(t, "history", "import", "--db", db, run); code != 0 {
			t.Fatalf("%s: %s", name, errOut)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 || ents[0].Name() != name {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("--db %q wrote %q", name, names)
		}
		if got := listedRuns(t, db); len(got) != 1 {
			t.Errorf("--db %q: listed %v", name, got)
		}
	}
}
