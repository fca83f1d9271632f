package store

import (
	"context"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// Issue 39.1: a run stopped part way lists as interrupted, one with failed
// tests as partial, whether its results came one at a time (a run saving
// as it goes, then the marked result saved again) or all at once.
func TestListStatus(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	done := []result.Result{mkResult("20240501-120000-aaaaaa", 1, nil, 1000), mkResult("20240501-120000-aaaaaa", 2, nil, 900)}
	part := []result.Result{mkResult("20240502-120000-bbbbbb", 1, nil, 1000), mkResult("20240502-120000-bbbbbb", 2, nil, 0)}
	part[1].Status, part[1].Error = "failed", "fio: exit status 1"
	cut := []result.Result{mkResult("20240503-120000-cccccc", 1, nil, 3500), mkResult("20240503-120000-cccccc", 2, nil, 3400)}
	for _, rs := range [][]result.Result{done, part, cut} {
		for _, r := range rs {
			if _, err := s.Save(ctx, []result.Result{r}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The plan marks its last result when Ctrl-C comes, and saves it again.
	cut[1].Notes = append(cut[1].Notes, result.NoteInterrupted)
	if st, err := s.Save(ctx, cut[1:]); err != nil || st.Updated != 1 {
		t.Fatalf("saving the marked result again: %+v %v", st, err)
	}
	runs, err := s.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]result.RunStatus{
		"20240501-120000-aaaaaa": {State: result.RunComplete},
		"20240502-120000-bbbbbb": {State: result.RunPartial, Reason: "1 of 2 tests failed"},
		"20240503-120000-cccccc": {State: result.RunInterrupted, Reason: "stopped part way; 2 tests kept"},
	}
	if len(runs) != len(want) {
		t.Fatalf("%d runs", len(runs))
	}
	for _, r := range runs {
		if r.Status != want[r.ID] {
			t.Errorf("%s: %+v, want %+v", r.ID, r.Status, want[r.ID])
		}
	}
	// Removing the mark (the result saved again without it) takes the
	// status back.
	cut[1].Notes = nil
	if _, err := s.Save(ctx, cut[1:]); err != nil {
		t.Fatal(err)
	}
	runs, _ = s.List(ctx, ListOptions{})
	for _, r := range runs {
		if r.ID == "20240503-120000-cccccc" && r.Status.State != result.RunComplete {
			t.Errorf("after the mark went: %+v", r.Status)
		}
	}
}

// A database written before schema 4 learns, on migration, which of its
// runs were interrupted, from the records.
func TestMigrateMarksInterrupted(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/h.db"
	old, err := openAt(ctx, path, Options{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	r := mkResult("20240501-120000-aaaaaa", 1, nil, 1000)
	r.Notes = []string{result.NoteInterrupted}
	gz, err := encodeRecord(&r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.db.Exec(`INSERT INTO runs(id, started_at, suite, target_kind, target_path, device, hostname) VALUES (?,?,?,?,?,?,?)`,
		r.RunID, r.Start.UnixMilli(), r.Suite, r.Target.Kind, r.Target.Path, r.Target.Device, r.Host.Hostname); err != nil {
		t.Fatal(err)
	}
	if _, err := old.db.Exec(`INSERT INTO results(run_id, rkey, idx, repeat, test, status, record_gz) VALUES (?,?,?,?,?,?,?)`,
		r.RunID, recordKey(&r), r.Index, r.Repeat, r.Test.Name, r.Status, gz); err != nil {
		t.Fatal(err)
	}
	old.Close()
	// Read only at version 3: no mark kept, so no claim either way beyond
	// the counts.
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.List(ctx, ListOptions{}); err != nil {
		t.Fatalf("read-only list of a version 3 database: %v", err)
	}
	ro.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.List(ctx, ListOptions{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%v %v", runs, err)
	}
	if runs[0].Status.State != result.RunInterrupted || runs[0].Interrupted != 1 {
		t.Errorf("migrated: %+v", runs[0])
	}
}
