package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/scaletest"
)

// manyOf is n results of one run, each its own test.
func manyOf(run string, n int) []result.Result {
	rs := make([]result.Result, n)
	for i := range rs {
		rs[i] = mkResult(run, i+1, map[string]string{"class": "fast"}, float64(1000+i))
		rs[i].Test.Name = fmt.Sprintf("test-%d", i)
	}
	return rs
}

// TestImportLinear: importing 10 times the results into a new history,
// and reading them back, takes about 10 times the work.
func TestImportLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 1,000 results into SQLite several times (about 10 s); skipped under -short")
	}
	ctx := context.Background()
	k := 0
	scaletest.Linear(t, "import and read back", 100, func(n int) {
		k++
		s, err := Open(ctx, filepath.Join(t.TempDir(), fmt.Sprintf("h%d.db", k)))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		run := "20240501-120000-many00"
		if st, err := s.Import(ctx, manyOf(run, n)); err != nil || st.Added != n {
			t.Fatalf("imported %+v, %v; want %d added", st, err, n)
		}
		if got, err := s.Results(ctx, run); err != nil || len(got) != n {
			t.Fatalf("read back %d, %v; want %d", len(got), err, n)
		}
	})
}

// TestReadsBoundedInNumber: what one Store reads is bounded in results
// too, over every query.
func TestReadsBoundedInNumber(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	run := "20240501-120000-many00"
	if _, err := s.Save(ctx, manyOf(run, 4)); err != nil {
		t.Fatal(err)
	}
	s.results.Store(result.MaxResults - 6)
	if got, err := s.Results(ctx, run); err != nil || len(got) != 4 {
		t.Fatalf("within the bound: %d, %v", len(got), err)
	}
	var tm *result.TooManyError
	if got, err := s.Results(ctx, run); !errors.As(err, &tm) || got != nil {
		t.Errorf("past the bound: %d results, %v; want a TooManyError", len(got), err)
	}
}

// BenchmarkImport imports a run of 32 results into a new history, and
// runs of 10, 100 and 1,000 times as many.
func BenchmarkImport(b *testing.B) {
	ctx := context.Background()
	k := 0
	dir := b.TempDir()
	scaletest.Bench(b, 32, "result", func(n int) func() {
		rs := manyOf("20240501-120000-many00", n)
		return func() {
			k++
			s, err := Open(ctx, filepath.Join(dir, fmt.Sprintf("h%d.db", k)))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Import(ctx, rs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
