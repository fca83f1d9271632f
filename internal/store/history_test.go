package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/result"
)

// The commands of the history through the paths they are given: a
// database not there yet lists nothing, an import creates it, lookups
// by prefix, removal.
func TestHistoryCommands(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "h.db")
	var u *hint.UsageError
	if runs, err := ListRuns(ctx, db, "", 0); !errors.Is(err, ErrNoDatabase) || runs == nil || len(runs) != 0 {
		t.Fatalf("no database: %v, %v", runs, err)
	}
	if _, err := ListRuns(ctx, db, "", -1); !errors.As(err, &u) {
		t.Errorf("--limit -1: %v", err)
	}
	if _, err := ListRuns(ctx, db, "=x", 0); !errors.As(err, &u) || hint.Of(err) == "" {
		t.Errorf("a bad selector: %v", err)
	}
	read := func(_ context.Context, file string) ([]result.Result, error) {
		return []result.Result{mkResult("20240501-120000-"+file, 1, nil, 1000)}, nil
	}
	var added int
	err := ImportFiles(ctx, db, []string{"aaaaaa", "bbbbbb"}, read, map[string]string{"cluster": "west"}, func(_ string, st SaveStats) { added += st.Added })
	if err != nil || added != 2 {
		t.Fatalf("import: %d added, %v", added, err)
	}
	if runs, err := ListRuns(ctx, db, "cluster=west", 1); err != nil || len(runs) != 1 {
		t.Fatalf("list: %v, %v", runs, err)
	}
	if rs, err := ReadRuns(ctx, db, []string{"20240501-120000-a"}); err != nil || len(rs) != 1 {
		t.Fatalf("read by prefix: %d, %v", len(rs), err)
	}
	for _, ids := range [][]string{{" "}, {"20240501"}} {
		if _, err := ReadRuns(ctx, db, ids); !errors.As(err, &u) || hint.Of(err) == "" {
			t.Errorf("read %q: %v, want a usage error with a hint", ids, err)
		}
	}
	if _, err := ReadRuns(ctx, db, []string{"nope"}); !errors.Is(err, ErrNotFound) || errors.As(err, &u) || hint.Of(err) == "" {
		t.Errorf("read a run not there: %v", err)
	}
	var removed []string
	if err := RemoveRuns(ctx, db, []string{"20240501-120000-b"}, func(id string) { removed = append(removed, id) }); err != nil || len(removed) != 1 {
		t.Fatalf("remove: %v, %v", removed, err)
	}
	if err := RemoveRuns(ctx, filepath.Join(t.TempDir(), "none.db"), []string{"x"}, nil); !errors.Is(err, ErrNoDatabase) {
		t.Errorf("remove from no database: %v", err)
	}
}
