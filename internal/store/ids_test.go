package store

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

func TestRunIDsResolveIDsResultsOf(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	for _, r := range []struct {
		run   string
		class string
	}{{"20240501-120000-aaaa", "premium"}, {"20240502-120000-bbbb", "standard"}, {"20240503-120000-cccc", "premium"}} {
		if _, err := s.Save(ctx, []result.Result{mkResult(r.run, 1, map[string]string{"storage-class": r.class}, 100)}); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := s.RunIDs(ctx, nil, 2)
	if want := []string{"20240503-120000-cccc", "20240502-120000-bbbb"}; err != nil || !reflect.DeepEqual(ids, want) {
		t.Errorf("newest 2: %v, %v; want %v", ids, err, want)
	}
	ids, err = s.RunIDs(ctx, []string{"2024050", "storage-class=premium"}, 5)
	if want := []string{"2024050", "20240503-120000-cccc", "20240501-120000-aaaa"}; err != nil || !reflect.DeepEqual(ids, want) {
		t.Errorf("id and selector: %v, %v; want %v", ids, err, want)
	}
	var se *SelectorError
	if _, err := s.RunIDs(ctx, []string{"a=b=c!"}, 1); !errors.As(err, &se) || se.Hint() == "" {
		t.Errorf("bad selector: %v", err)
	}

	full, err := s.ResolveIDs(ctx, []string{"20240501", "20240502", "20240501-120000-aaaa"})
	if want := []string{"20240501-120000-aaaa", "20240502-120000-bbbb"}; err != nil || !reflect.DeepEqual(full, want) {
		t.Errorf("ResolveIDs: %v, %v; want %v", full, err, want)
	}
	var amb *AmbiguousError
	if _, err := s.ResolveIDs(ctx, []string{"20240501", "2024050"}); !errors.As(err, &amb) {
		t.Errorf("ResolveIDs of an ambiguous prefix: %v", err)
	}

	rs, err := s.ResultsOf(ctx, []string{"20240503", "20240501"})
	if err != nil || len(rs) != 2 || rs[0].RunID != "20240503-120000-cccc" || rs[1].RunID != "20240501-120000-aaaa" {
		t.Errorf("ResultsOf: %d results, %v", len(rs), err)
	}
	if _, err := s.ResultsOf(ctx, []string{"20240501", "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("ResultsOf a missing run: %v", err)
	}

	rs, err = s.Selected(ctx, []string{"storage-class=premium"}, 1)
	if err != nil || len(rs) != 1 || rs[0].RunID != "20240503-120000-cccc" {
		t.Errorf("Selected newest premium: %d results, %v", len(rs), err)
	}
	if _, err := s.Selected(ctx, []string{"a=b=c!"}, 1); !errors.As(err, &se) {
		t.Errorf("Selected with a bad selector: %v", err)
	}
	if _, err := s.Selected(ctx, []string{"nope"}, 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("Selected a missing run: %v", err)
	}
	ids, err = RecentRunIDs(ctx, s.path, 2)
	if want := []string{"20240503-120000-cccc", "20240502-120000-bbbb"}; err != nil || !reflect.DeepEqual(ids, want) {
		t.Errorf("RecentRunIDs: %v, %v; want %v", ids, err, want)
	}
	if _, err := RecentRunIDs(ctx, filepath.Join(t.TempDir(), "none.db"), 2); err == nil {
		t.Error("RecentRunIDs of no history: no error")
	}
}
