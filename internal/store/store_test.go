package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// result builds a small but complete record.
func mkResult(run string, idx int, labels map[string]string, iops float64) result.Result {
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(idx) * time.Minute)
	if t, err := time.Parse("20060102-150405", run[:min(len(run), 15)]); err == nil {
		start = t.Add(time.Duration(idx) * time.Minute)
	}
	return result.Result{
		Schema: result.SchemaV1, RunID: run, Suite: "quick", Index: idx, Repeat: 1,
		Test:   result.TestSpec{Name: fmt.Sprintf("randread-4k-%d", idx), RW: "randread", BlockSize: 4096, IODepth: 8, NumJobs: 1, Direct: true},
		Target: result.Target{Kind: "dir", Path: "/mnt/data", Device: "vdb", Labels: labels},
		Host:   result.Host{Hostname: "node-1"}, Start: start, End: start.Add(time.Minute), Status: "ok",
		Read: &result.DirResult{IOPS: iops, BWBytes: iops * 4096, Lat: result.Latency{P99Ns: 1e6 * float64(idx)},
			Hist: result.HistogramOf(map[uint64]uint64{100000: 10, 200000: 5})},
		FioSeries: []result.FioSample{{T: 1, ReadIOPS: iops}}, Devices: []result.DeviceSeries{}, System: []result.SystemSample{},
	}
}

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "sub", "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMigrateFromEmpty(t *testing.T) {
	s := openTemp(t)
	v, err := s.Version(context.Background())
	if err != nil || v != CurrentVersion {
		t.Fatalf("version %d, %v; want %d", v, err, CurrentVersion)
	}
	// Opening again is a no-op.
	s2, err := Open(context.Background(), s.Path())
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
}

// TestMigrateFromEveryVersion stores a result under each earlier schema,
// with that version's own SQL, then opens with the current code.
func TestMigrateFromEveryVersion(t *testing.T) {
	ctx := context.Background()
	for _, m := range migrations[:len(migrations)-1] {
		t.Run(fmt.Sprintf("v%d", m.Version), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "h.db")
			old, err := openAt(ctx, path, Options{}, m.Version)
			if err != nil {
				t.Fatal(err)
			}
			if v, _ := old.Version(ctx); v != m.Version {
				t.Fatalf("at version %d, want %d", v, m.Version)
			}
			r := mkResult("20240501-120000-aaaaaa", 1, map[string]string{"storage-class": "premium", "cluster": "c1"}, 1000)
			gz, err := encodeRecord(&r)
			if err != nil {
				t.Fatal(err)
			}
			// Version 1 columns exist in every version.
			if _, err := old.db.Exec(`INSERT INTO runs(id, started_at, suite, target_kind, target_path, device, hostname) VALUES (?,?,?,?,?,?,?)`,
				r.RunID, r.Start.UnixMilli(), r.Suite, r.Target.Kind, r.Target.Path, r.Target.Device, r.Host.Hostname); err != nil {
				t.Fatal(err)
			}
			if _, err := old.db.Exec(`INSERT INTO results(run_id, rkey, idx, repeat, test, status, record_gz) VALUES (?,?,?,?,?,?,?)`,
				r.RunID, recordKey(&r), r.Index, r.Repeat, r.Test.Name, r.Status, gz); err != nil {
				t.Fatal(err)
			}
			// From version 3 on, a writer kept the headline figures beside
			// the record.
			if m.Version >= 3 {
				if _, err := old.db.Exec(`UPDATE results SET (`+headlineCols+`) = (?,?,?,?,?,?,?,?,?,?)`, headlineOf(&r).args()...); err != nil {
					t.Fatal(err)
				}
			}
			// From version 2 on, a writer indexed the labels as it saved.
			for k, v := range r.Target.Labels {
				if m.Version < 2 {
					break
				}
				if _, err := old.db.Exec(`INSERT INTO result_labels(result_id, key, value) SELECT id, ?, ? FROM results`, k, v); err != nil {
					t.Fatal(err)
				}
			}
			old.Close()

			// Read-only: a schema the read queries know is read as it is;
			// an older one is migrated first.
			ro, err := OpenReadOnly(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			wantRO := m.Version
			if m.Version < minReadVersion {
				wantRO = CurrentVersion
			}
			if v, _ := ro.Version(ctx); v != wantRO {
				t.Errorf("read-only open: at version %d, want %d", v, wantRO)
			}
			if runs, err := ro.List(ctx, ListOptions{}); err != nil || len(runs) != 1 {
				t.Errorf("read-only list: %v %v", runs, err)
			}
			ro.Close()

			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if v, _ := s.Version(ctx); v != CurrentVersion {
				t.Fatalf("after migration at %d, want %d", v, CurrentVersion)
			}
			runs, err := s.List(ctx, ListOptions{})
			if err != nil || len(runs) != 1 {
				t.Fatalf("list: %v %v", runs, err)
			}
			if got := runs[0]; got.Tests != 1 || got.MaxIOPS != 1000 || got.Labels != "cluster=c1,storage-class=premium" {
				t.Errorf("backfilled run %+v", got)
			}
			sel, _ := ParseSelector("storage-class=premium")
			rs, err := s.Select(ctx, sel)
			if err != nil || len(rs) != 1 {
				t.Fatalf("select after migration: %d results, %v", len(rs), err)
			}
		})
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	s := openTemp(t)
	if _, err := s.db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, CurrentVersion+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(context.Background(), s.Path())
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("got %v, want ErrNewerSchema", err)
	}
}

func TestSaveListSelectDelete(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	a := []result.Result{
		mkResult("20240501-120000-aaaaaa", 1, map[string]string{"storage-class": "premium"}, 1000),
		mkResult("20240501-120000-aaaaaa", 2, map[string]string{"storage-class": "premium"}, 3000),
	}
	a[1].Status = "failed"
	b := []result.Result{mkResult("20240502-120000-bbbbbb", 1, map[string]string{"storage-class": "standard", "zone": "b"}, 500)}
	st, err := s.Save(ctx, a)
	if err != nil || st.Added != 2 {
		t.Fatalf("save a: %+v %v", st, err)
	}
	if _, err := s.Save(ctx, b); err != nil {
		t.Fatal(err)
	}
	// The same records again add nothing; an import keeps what is stored,
	// a save replaces it.
	changed := append([]result.Result(nil), a...)
	changed[0].Findings = []result.Finding{{Kind: "stall", Severity: "fail"}}
	changed[0].Target.Labels = map[string]string{"storage-class": "premium", "zone": "c"}
	if st, err := s.Import(ctx, changed); err != nil || st.Added != 0 || st.Skipped != 2 {
		t.Fatalf("re-import: %+v %v", st, err)
	}
	if rs, _ := s.Results(ctx, a[0].RunID); len(rs[0].Findings) != 0 {
		t.Fatalf("import replaced a stored record")
	}
	if st, err := s.Save(ctx, changed); err != nil || st.Added != 0 || st.Updated != 2 {
		t.Fatalf("re-save: %+v %v", st, err)
	}
	if rs, _ := s.Results(ctx, a[0].RunID); len(rs[0].Findings) != 1 {
		t.Fatalf("save did not replace the stored record")
	}
	zc, _ := ParseSelector("zone=c")
	if rs, _ := s.Select(ctx, zc); len(rs) != 1 {
		t.Fatalf("labels of the replaced record not re-indexed: %d", len(rs))
	}
	if _, err := s.Save(ctx, a); err != nil {
		t.Fatal(err)
	}
	runs, err := s.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != "20240502-120000-bbbbbb" {
		t.Fatalf("list order: %+v", runs)
	}
	if r := runs[1]; r.Tests != 2 || r.Failed != 1 || r.MaxIOPS != 3000 || r.MaxBWBytes != 3000*4096 || r.MaxP99Ns != 2e6 {
		t.Errorf("headline of run a: %+v", r)
	}
	for sel, want := range map[string]int{
		"storage-class=premium":                2,
		"storage-class!=premium":               1,
		"zone":                                 1,
		"!zone":                                2,
		"storage-class=standard,zone=b":        1,
		"storage-class=standard,zone=a":        0,
		"run=20240501-120000-aaaaaa":           2,
		"suite=quick, storage-class = premium": 2,
	} {
		p, err := ParseSelector(sel)
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		rs, err := s.Select(ctx, p)
		if err != nil || len(rs) != want {
			t.Errorf("select %q: %d results (%v), want %d", sel, len(rs), err, want)
		}
	}
	p, _ := ParseSelector("zone=b")
	if runs, _ := s.List(ctx, ListOptions{Selector: p}); len(runs) != 1 || runs[0].ID != "20240502-120000-bbbbbb" {
		t.Errorf("list with selector: %+v", runs)
	}
	rs, err := s.Results(ctx, "20240501")
	if err != nil || len(rs) != 2 || rs[0].Index != 1 || rs[1].Read.IOPS != 3000 {
		t.Fatalf("results by prefix: %v %v", rs, err)
	}
	if _, err := s.Results(ctx, "2024"); !errors.As(err, new(*AmbiguousError)) {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := s.Results(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	if id, err := s.Delete(ctx, "20240501-120000"); err != nil || id != "20240501-120000-aaaaaa" {
		t.Fatalf("delete: %s %v", id, err)
	}
	var n int
	s.db.QueryRow(`SELECT count(*) FROM result_labels`).Scan(&n)
	if n != 2 {
		t.Errorf("labels left after delete: %d, want 2 (run b's)", n)
	}
	if runs, _ := s.List(ctx, ListOptions{}); len(runs) != 1 {
		t.Errorf("after delete: %+v", runs)
	}
}

func TestParseSelector(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		err  bool
	}{
		{in: "a=b", want: "a=b"},
		{in: "a==b", want: "a=b"},
		{in: " a = b , c!=d ,e,!f", want: "a=b,c!=d,e,!f"},
		{in: "storage-class=managed-premium", want: "storage-class=managed-premium"},
		{in: "a=", want: "a="},
		{in: "", err: true},
		{in: "=b", err: true},
		{in: "a=b,", err: true},
		{in: "a=b=c", err: true},
		{in: "!", err: true},
		{in: "suite", err: true},
	} {
		got, err := ParseSelector(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%q: err %v", tc.in, err)
			continue
		}
		if err == nil && got.String() != tc.want {
			t.Errorf("%q: got %q want %q", tc.in, got.String(), tc.want)
		}
	}
	for s, want := range map[string]bool{"a=b": true, "!x": true, "20240501-1200": false, "results.ndjson": false} {
		if LooksLikeSelector(s) != want {
			t.Errorf("LooksLikeSelector(%q) != %v", s, want)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv(EnvDB, "")
	t.Setenv("XDG_DATA_HOME", "/data")
	if p, _ := DefaultPath(); p != "/data/iolens/history.db" {
		t.Errorf("XDG: %s", p)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	if p, _ := DefaultPath(); p != "/home/u/.local/share/iolens/history.db" {
		t.Errorf("HOME: %s", p)
	}
	t.Setenv(EnvDB, "/x/y.db")
	if p, _ := DefaultPath(); p != "/x/y.db" {
		t.Errorf("env: %s", p)
	}
}

// The helper process: saves runs to the database named by the environment
// until killed, printing a line after each commit.
func TestMain(m *testing.M) {
	if path := os.Getenv("IOLENS_STORE_WRITER"); path != "" {
		os.Exit(writer(path, os.Getenv("IOLENS_STORE_WRITER_ID")))
	}
	os.Exit(m.Run())
}

func writer(path, id string) int {
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	n, _ := strconv.Atoi(os.Getenv("IOLENS_STORE_WRITER_N"))
	for i := 0; n == 0 || i < n; i++ {
		run := fmt.Sprintf("20240501-120000-%s%05d", id, i)
		var rs []result.Result
		for j := 1; j <= 20; j++ {
			r := mkResult(run, j, map[string]string{"writer": id}, float64(j))
			// Bulk, so a kill often lands inside the transaction; less of it
			// when the writer stops by itself.
			samples := 2000
			if n > 0 {
				samples = 200
			}
			r.FioSeries = make([]result.FioSample, samples)
			for k := range r.FioSeries {
				r.FioSeries[k] = result.FioSample{T: float64(k), ReadIOPS: float64(k * j)}
			}
			rs = append(rs, r)
		}
		if _, err := s.Save(ctx, rs); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("saved", run)
	}
	return 0
}

func writerCmd(t *testing.T, path, id string, n int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "IOLENS_STORE_WRITER="+path, "IOLENS_STORE_WRITER_ID="+id, "IOLENS_STORE_WRITER_N="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	return cmd
}

// checkConsistent opens the database the way a user would and checks that
// SQLite finds it intact and that every run has all its 20 results.
func checkConsistent(t *testing.T, path string) []Run {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("opening after the writers: %v", err)
	}
	defer s.Close()
	var ok string
	if err := s.db.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %q %v", ok, err)
	}
	runs, err := s.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		rs, err := s.Results(ctx, r.ID)
		if err != nil || len(rs) != 20 || r.Tests != 20 {
			t.Fatalf("run %s: %d results (%d listed), %v: a save was torn", r.ID, len(rs), r.Tests, err)
		}
	}
	return runs
}

func TestConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	path := filepath.Join(t.TempDir(), "h.db")
	const procs, each = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			cmd := writerCmd(t, path, fmt.Sprint(p), each)
			if out, err := cmd.Output(); err != nil {
				errs <- fmt.Errorf("writer %d: %v (%s)", p, err, out)
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if runs := checkConsistent(t, path); len(runs) != procs*each {
		t.Fatalf("%d runs stored, want %d", len(runs), procs*each)
	}
}

func TestKillDuringSave(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	path := filepath.Join(t.TempDir(), "h.db")
	for round, delay := range []time.Duration{0, 3 * time.Millisecond, 17 * time.Millisecond, 40 * time.Millisecond} {
		cmd := writerCmd(t, path, fmt.Sprint(round), 0)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for a commit or two, then kill at an arbitrary point of
		// the next transaction.
		sc := bufio.NewScanner(out)
		for i := 0; i < 2 && sc.Scan(); i++ {
		}
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	runs := checkConsistent(t, path)
	if len(runs) < 8 {
		t.Fatalf("%d runs survived, want at least the 8 reported committed", len(runs))
	}
}
