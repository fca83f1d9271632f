package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
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

// BenchmarkRecordEncode encodes 100 results as a save does: with a gzip
// writer made for each record, as an import once did, and with one
// writer reset for each (a save's, an import's and a Keeper's own). The
// bytes allocated per result are the difference.
func BenchmarkRecordEncode(b *testing.B) {
	rs := manyOf("20240501-120000-enc00", 100)
	for _, c := range []struct {
		name string
		enc  func() *recordEncoder
	}{
		{"writer per record", func() *recordEncoder { return &recordEncoder{} }},
		{"one writer", func() func() *recordEncoder {
			var e recordEncoder
			return func() *recordEncoder { return &e }
		}()},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for i := range rs {
					if _, err := c.enc().encode(&rs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rs)), "ns/result")
		})
	}
}

// TestEncoderKeepsItsWriter: a save's records share one gzip writer, so
// encoding a record allocates about its own size, not a writer's tables
// (over a megabyte) each time.
func TestEncoderKeepsItsWriter(t *testing.T) {
	rs := manyOf("20240501-120000-enc01", 50)
	var e recordEncoder
	if _, err := e.encode(&rs[0]); err != nil { // the writer, once
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range rs {
		if _, err := e.encode(&rs[i]); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	per := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(rs))
	if per > 256<<10 {
		t.Errorf("encoding a record allocates %.0f KiB: a gzip writer per record?", per/1024)
	}
	t.Logf("%.1f KiB allocated per record", per/1024)
}
