package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// holdLock takes the database's write lock from another connection, as a
// second iolens saving a long import would, until release is called.
func holdLock(t *testing.T, path string) (release func()) {
	t.Helper()
	ctx := context.Background()
	name, err := dsn(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", name)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if done {
			return
		}
		done = true
		conn.ExecContext(ctx, `ROLLBACK`)
		conn.Close()
		db.Close()
	}
	t.Cleanup(release)
	return release
}

// openShortWait opens a database whose statements give up on a held lock
// after 50 ms instead of 10 s.
func openShortWait(t *testing.T) *Store {
	t.Helper()
	s, err := OpenWith(context.Background(), filepath.Join(t.TempDir(), "h.db"), Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func storedTests(t *testing.T, s *Store, run string) []string {
	t.Helper()
	rs, err := s.Results(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rs {
		names = append(names, r.Test.Name)
	}
	return names
}

// The lost save: a lock held longer than the busy timeout used to set a
// flag that silently dropped every later result of the run, even once the
// lock was free.
func TestKeeperKeepsResultsWhileLocked(t *testing.T) {
	ctx := context.Background()
	s := openShortWait(t)
	k := NewKeeper(s, KeeperOptions{})
	const run = "20240501-120000-aaaaaa"
	release := holdLock(t, s.Path())
	for i := 1; i <= 2; i++ {
		err := k.Add(ctx, mkResult(run, i, nil, 100))
		var pe *PendingError
		if !errors.As(err, &pe) || pe.Pending != i || !Retryable(err) {
			t.Fatalf("add %d under a held lock: %v, want a retryable *PendingError with %d waiting", i, err, i)
		}
	}
	release()
	if err := k.Add(ctx, mkResult(run, 3, nil, 100)); err != nil {
		t.Fatalf("add once the lock is free: %v", err)
	}
	if got := strings.Join(storedTests(t, s, run), ","); got != "randread-4k-1,randread-4k-2,randread-4k-3" {
		t.Fatalf("stored %s, want all three results", got)
	}
	sum := k.Finish(ctx)
	if sum.Saved != 3 || len(sum.Lost) != 0 {
		t.Fatalf("summary %+v", sum)
	}
}

func TestKeeperFinishRetriesUntilTheLockIsFree(t *testing.T) {
	ctx := context.Background()
	s := openShortWait(t)
	k := NewKeeper(s, KeeperOptions{Wait: 20 * time.Second, Pause: 20 * time.Millisecond})
	const run = "20240501-120000-aaaaaa"
	release := holdLock(t, s.Path())
	for i := 1; i <= 2; i++ {
		if err := k.Add(ctx, mkResult(run, i, nil, 100)); err == nil {
			t.Fatal("saved under a held lock")
		}
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		release()
	}()
	sum := k.Finish(ctx)
	if sum.Saved != 2 || len(sum.Lost) != 0 {
		t.Fatalf("summary %+v, want both saved", sum)
	}
	if n := len(storedTests(t, s, run)); n != 2 {
		t.Fatalf("%d stored", n)
	}
}

func TestKeeperFinishListsWhatWasLost(t *testing.T) {
	ctx := context.Background()
	s := openShortWait(t)
	k := NewKeeper(s, KeeperOptions{Wait: 300 * time.Millisecond, Pause: 20 * time.Millisecond})
	const run = "20240501-120000-aaaaaa"
	if err := k.Add(ctx, mkResult(run, 1, nil, 100)); err != nil {
		t.Fatal(err)
	}
	holdLock(t, s.Path())
	k.Add(ctx, mkResult(run, 2, nil, 100))
	k.Add(ctx, mkResult(run, 3, nil, 100))
	start := time.Now()
	sum := k.Finish(ctx)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Finish took %s with a 300 ms wait", d)
	}
	if sum.Saved != 1 || len(sum.Lost) != 2 {
		t.Fatalf("summary %+v, want 1 saved and 2 lost", sum)
	}
	for i, l := range sum.Lost {
		if l.RunID != run || l.Index != i+2 || l.Test != mkResult(run, i+2, nil, 0).Test.Name || !Retryable(l.Err) {
			t.Errorf("lost %d: %+v (%v)", i, l, l.Err)
		}
	}
	if got := sum.Lost[0].String(); got != "randread-4k-2 #1 (test 2 of run 20240501-120000-aaaaaa)" {
		t.Errorf("lost named %q", got)
	}
}

// Interrupted: one more attempt, no minute of retries.
func TestKeeperFinishInterrupted(t *testing.T) {
	s := openShortWait(t)
	k := NewKeeper(s, KeeperOptions{Wait: time.Hour})
	holdLock(t, s.Path())
	ctx, cancel := context.WithCancel(context.Background())
	k.Add(ctx, mkResult("20240501-120000-aaaaaa", 1, nil, 100))
	cancel()
	start := time.Now()
	if sum := k.Finish(ctx); len(sum.Lost) != 1 {
		t.Fatalf("summary %+v", sum)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Finish after Ctrl-C took %s", d)
	}
}

// A result that can never be stored is lost at once, named, and does not
// hold back the results after it.
func TestKeeperRecordError(t *testing.T) {
	ctx := context.Background()
	s := openShortWait(t)
	k := NewKeeper(s, KeeperOptions{})
	bad := mkResult("", 1, nil, 100)
	var re *RecordError
	if err := k.Add(ctx, bad); !errors.As(err, &re) || Retryable(err) {
		t.Fatalf("add without a run id: %v", err)
	}
	if err := k.Add(ctx, mkResult("20240501-120000-aaaaaa", 2, nil, 100)); err != nil {
		t.Fatal(err)
	}
	sum := k.Finish(ctx)
	if sum.Saved != 1 || len(sum.Lost) != 1 || sum.Lost[0].Index != 1 {
		t.Fatalf("summary %+v", sum)
	}
}

// Each result is written once: Finish has nothing left to write, so it
// does not even need the lock.
func TestKeeperWritesEachResultOnce(t *testing.T) {
	ctx := context.Background()
	s := openShortWait(t)
	k := NewKeeper(s, KeeperOptions{Wait: 200 * time.Millisecond})
	for i := 1; i <= 3; i++ {
		if err := k.Add(ctx, mkResult("20240501-120000-aaaaaa", i, nil, 100)); err != nil {
			t.Fatal(err)
		}
	}
	holdLock(t, s.Path())
	if sum := k.Finish(ctx); sum.Saved != 3 || len(sum.Lost) != 0 {
		t.Fatalf("summary %+v", sum)
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM results`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d results, %v", n, err)
	}
}

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{errors.New("disk I/O error"), false},
		{&RecordError{Err: errors.New("no run id")}, false},
	} {
		if got := Retryable(tc.err); got != tc.want {
			t.Errorf("Retryable(%v) = %v", tc.err, got)
		}
	}
}
