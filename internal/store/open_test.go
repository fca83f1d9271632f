package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// File names with characters an SQLite URI gives a meaning to: each must
// be the name of the file written, byte for byte.
func TestDSNEscapesThePath(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{
		"we?ird.db",
		"a%20b.db",
		"100%.db",
		"#frag.db",
		"a#b?c=d&e.db",
		"with space.db",
		"données-é😀.db",
		"q?mode=ro.db",
		"x+y;z,w@v:u.db",
		"%3F.db",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Save(ctx, []result.Result{mkResult("20240501-120000-aaaaaa", 1, nil, 100)}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if len(names) != 1 || names[0] != name {
				t.Fatalf("files written %q, want exactly %q", names, name)
			}
			ro, err := OpenReadOnly(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			if runs, err := ro.List(ctx, ListOptions{}); err != nil || len(runs) != 1 {
				t.Fatalf("read back: %v %v", runs, err)
			}
		})
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "nul\x00.db")); err == nil {
		t.Error("a path with a NUL byte was accepted")
	}
}

func TestReadOnlyMissingDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "history.db")
	_, err := OpenReadOnly(context.Background(), path)
	var nd *NoDatabaseError
	if !errors.Is(err, ErrNoDatabase) || !errors.As(err, &nd) || nd.Hint() == "" {
		t.Fatalf("got %v, want a *NoDatabaseError", err)
	}
	if _, err := OpenWith(context.Background(), path, Options{MustExist: true}); !errors.Is(err, ErrNoDatabase) {
		t.Fatalf("must-exist open of a missing database: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a read-only open created %s", filepath.Join(dir, "sub"))
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	r := mkResult("20240501-120000-aaaaaa", 1, nil, 100)
	if _, err := s.Save(ctx, []result.Result{r}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ro, err := OpenReadOnly(ctx, s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Save(ctx, []result.Result{mkResult("20240501-120000-aaaaaa", 2, nil, 1)}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("save on a read-only store: %v", err)
	}
	if _, err := ro.Delete(ctx, r.RunID); !errors.Is(err, ErrReadOnly) {
		t.Errorf("delete on a read-only store: %v", err)
	}
	// Even SQL that slips past the checks cannot write.
	if _, err := ro.db.Exec(`DELETE FROM runs`); err == nil {
		t.Error("the read-only connection wrote")
	}
	if rs, err := ro.Results(ctx, r.RunID); err != nil || len(rs) != 1 {
		t.Fatalf("read: %d %v", len(rs), err)
	}
}

func TestReadOnlyOfNonDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	os.WriteFile(path, nil, 0o644)
	if _, err := OpenReadOnly(context.Background(), path); err == nil {
		t.Error("an empty file opened as a history")
	}
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Error("the read-only open wrote to the file")
	}
}

// Opening a database that is at the current version takes no write lock:
// a reader or a second run starts while another process saves.
func TestOpenCurrentNeedsNoLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	holdLock(t, path)
	for _, ro := range []bool{false, true} {
		s, err := OpenWith(ctx, path, Options{ReadOnly: ro, BusyTimeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatalf("open (read-only %v) while another writer holds the lock: %v", ro, err)
		}
		s.Close()
	}
}

// Empty or blank run ids name no run, whatever the database holds: a
// prefix of length 0 would match them all.
func TestEmptyRunIDRefused(t *testing.T) {
	ctx := context.Background()
	for _, runs := range []int{1, 2} {
		s := openTemp(t)
		for i := 0; i < runs; i++ {
			id := []string{"20240501-120000-aaaaaa", "20240502-120000-bbbbbb"}[i]
			if _, err := s.Save(ctx, []result.Result{mkResult(id, 1, nil, 100)}); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range []string{"", " ", "\t\n"} {
			if _, err := s.Delete(ctx, id); !errors.Is(err, ErrEmptyID) {
				t.Errorf("%d runs: delete %q: %v, want ErrEmptyID", runs, id, err)
			}
			if _, err := s.Results(ctx, id); !errors.Is(err, ErrEmptyID) {
				t.Errorf("%d runs: results %q: %v, want ErrEmptyID", runs, id, err)
			}
		}
		if got, _ := s.List(ctx, ListOptions{}); len(got) != runs {
			t.Errorf("%d runs stored, %d left", runs, len(got))
		}
	}
}

// A run's summary is kept in SQL as its results are saved one by one,
// without reading back its other records: a damaged record of the run
// does not stop the next save.
func TestSaveDoesNotReadTheRunsRecords(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	const run = "20240501-120000-aaaaaa"
	if _, err := s.Save(ctx, []result.Result{mkResult(run, 1, map[string]string{"zone": "a"}, 100)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`UPDATE results SET record_gz = x'00'`); err != nil {
		t.Fatal(err)
	}
	r2 := mkResult(run, 2, map[string]string{"zone": "b"}, 300)
	r2.Status = "failed"
	if _, err := s.Save(ctx, []result.Result{r2}); err != nil {
		t.Fatalf("save next to a damaged record: %v", err)
	}
	runs, err := s.List(ctx, ListOptions{})
	if err != nil || len(runs) != 1 {
		t.Fatal(runs, err)
	}
	got := runs[0]
	if got.Tests != 2 || got.Failed != 1 || got.MaxIOPS != 300 || got.MaxP99Ns != 2e6 || got.Labels != "zone=a|b" ||
		!got.Start.Equal(time.Date(2024, 5, 1, 12, 1, 0, 0, time.UTC)) {
		t.Errorf("summary %+v", got)
	}
}

// Replacing a result can lower a run's maximum: the summary is then
// recomputed from the results' columns.
func TestSummaryAfterReplace(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	const run = "20240501-120000-aaaaaa"
	a := mkResult(run, 1, map[string]string{"zone": "a"}, 100)
	b := mkResult(run, 2, map[string]string{"zone": "b", "disk": "p30"}, 3000)
	b.Write = &result.DirResult{IOPS: 50, BWBytes: 5e8, Lat: result.Latency{P99Ns: 9e6}}
	if _, err := s.Save(ctx, []result.Result{a, b}); err != nil {
		t.Fatal(err)
	}
	check := func(tests, failed int, iops, bw, p99 float64, labels string) {
		t.Helper()
		runs, err := s.List(ctx, ListOptions{})
		if err != nil || len(runs) != 1 {
			t.Fatal(runs, err)
		}
		r := runs[0]
		if r.Tests != tests || r.Failed != failed || r.MaxIOPS != iops || r.MaxBWBytes != bw || r.MaxP99Ns != p99 || r.Labels != labels {
			t.Errorf("summary %+v\nwant tests %d failed %d iops %g bw %g p99 %g labels %q", r, tests, failed, iops, bw, p99, labels)
		}
	}
	// Read 3000 IOPS, 3000*4096 B/s, p99 2 ms; write 50 IOPS, 500 MB/s, p99 9 ms.
	check(2, 0, 3000, 5e8, 9e6, "disk=p30,zone=a|b")
	b.Read.IOPS, b.Write = 200, nil
	b.Status = "failed"
	b.Target.Labels = map[string]string{"zone": "c"}
	if st, err := s.Save(ctx, []result.Result{b}); err != nil || st.Updated != 1 {
		t.Fatal(st, err)
	}
	check(2, 1, 200, 3000*4096, 2e6, "zone=a|c")
	// A record JSON cannot hold is refused whole, before anything is
	// written, as a *RecordError (retrying it will not help).
	for _, v := range []float64{nanOf(), infOf()} {
		c := mkResult(run, 3, nil, 0)
		c.Read.IOPS = v
		var re *RecordError
		if _, err := s.Save(ctx, []result.Result{a, c}); !errors.As(err, &re) || re.Position != 2 {
			t.Fatalf("save of IOPS %g: %v", v, err)
		}
	}
	check(2, 1, 200, 3000*4096, 2e6, "zone=a|c")
}

func nanOf() float64 { z := 0.0; return z / z }
func infOf() float64 { z := 0.0; return 1 / z }

// history-v2.db was written by iolens before schema 3 (commit d3ace95):
// the four results of history-v2.ndjson, each saved as it completed and
// then the whole run again, as runs did. It must read as it is (read-only,
// left at version 2) and after migration, with the same figures.
func TestReadsSchemaV2Fixture(t *testing.T) {
	ctx := context.Background()
	raw, err := os.ReadFile("testdata/history-v2.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	want := readNDJSON(t, "testdata/history-v2.ndjson")
	// By hand, from the fixture's program.
	wantRuns := []Run{
		{ID: "20240502-093000-bbbbbb", Start: time.Date(2024, 5, 2, 9, 30, 0, 0, time.UTC), Suite: "quick", TargetKind: "dir", TargetPath: "/mnt/data",
			Device: "vdb", Hostname: "node-1", Labels: "storage-class=standard", Tests: 1, MaxIOPS: 500, MaxBWBytes: 500 * 4096, MaxP99Ns: 4e6,
			Status: result.RunStatus{State: result.RunComplete}},
		{ID: "20240501-120000-aaaaaa", Start: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), Suite: "quick", TargetKind: "dir", TargetPath: "/mnt/data",
			Device: "vdb", Hostname: "node-1", Labels: "storage-class=premium,zone=a|b", Tests: 3, Failed: 1, MaxIOPS: 1200, MaxBWBytes: 157286400, MaxP99Ns: 8e6,
			Status: result.RunStatus{State: result.RunPartial, Reason: "1 of 3 tests failed"}},
	}
	readBack := func(s *Store) {
		t.Helper()
		runs, err := s.List(ctx, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != len(wantRuns) {
			t.Fatalf("%d runs", len(runs))
		}
		for i := range runs {
			if runs[i] != wantRuns[i] {
				t.Errorf("run %d:\n got %+v\nwant %+v", i, runs[i], wantRuns[i])
			}
		}
		var got []result.Result
		for _, id := range []string{"20240501", "20240502"} {
			rs, err := s.Results(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, rs...)
		}
		if len(got) != len(want) {
			t.Fatalf("%d results, want %d", len(got), len(want))
		}
		for i := range want {
			gj, _ := json.Marshal(got[i])
			wj, _ := json.Marshal(want[i])
			if !bytes.Equal(gj, wj) {
				t.Errorf("result %d differs:\n%s\n%s", i, gj, wj)
			}
		}
		sel, _ := ParseSelector("zone=b")
		if rs, err := s.Select(ctx, sel); err != nil || len(rs) != 2 {
			t.Errorf("select zone=b: %d %v", len(rs), err)
		}
	}

	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	readBack(ro)
	if v, _ := ro.Version(ctx); v != 2 {
		t.Errorf("a read-only open left the database at version %d", v)
	}
	ro.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.Version(ctx); v != CurrentVersion {
		t.Fatalf("migrated to %d", v)
	}
	readBack(s)
	// The migrated run takes new results into its summary.
	r := want[0]
	r.Index, r.Start = 4, r.Start.Add(-time.Hour)
	r.Read.IOPS = 5000
	r.Target.Labels = map[string]string{"zone": "c"}
	if _, err := s.Save(ctx, []result.Result{r}); err != nil {
		t.Fatal(err)
	}
	runs, _ := s.List(ctx, ListOptions{})
	got := runs[1]
	if got.Tests != 4 || got.MaxIOPS != 5000 || got.Labels != "storage-class=premium,zone=a|b|c" || !got.Start.Equal(r.Start) {
		t.Errorf("after a save into the migrated run: %+v", got)
	}
}

func readNDJSON(t *testing.T, path string) []result.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []result.Result
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		r, err := result.Unmarshal(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out
}

// TestOpenDirectoryPath: a --db that names a directory is refused before
// anything is created.
func TestOpenDirectoryPath(t *testing.T) {
	base := t.TempDir()
	for _, p := range []string{filepath.Join(base, "new-dir") + "/", base} {
		if s, err := Open(context.Background(), p); err == nil || !strings.Contains(err.Error(), "is a directory") {
			if s != nil {
				s.Close()
			}
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "new-dir")); err == nil {
		t.Error("a refused path left a directory behind")
	}
}
