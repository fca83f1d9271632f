package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/store"
)

// savePattern is one way of saving a run's results as they complete.
type savePattern struct {
	name string
	save func(ctx context.Context, s *store.Store, rs []result.Result)
}

// eachThenAll is how runs were saved up to schema 2: each result in its
// own transaction as it completes, then the whole run again at the end.
var eachThenAll = savePattern{"each result, then the run again", func(ctx context.Context, s *store.Store, rs []result.Result) {
	for i := range rs {
		_, err := s.Save(ctx, rs[i:i+1])
		check(err)
	}
	_, err := s.Save(ctx, rs)
	check(err)
}}

// saveBench times saving one run of n results into a fresh database, for
// each n and pattern: the median of reps, each on a new file.
func saveBench(dir string, sizes []int, reps int, patterns []savePattern) {
	ctx := context.Background()
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	// Warm up (first use of the driver, page cache of the directory).
	warm, err := store.Open(ctx, filepath.Join(dir, "warm.db"))
	check(err)
	eachThenAll.save(ctx, warm, []result.Result{mkResult("20240501-120000-000000", 0, start, 60, nil)})
	check(warm.Close())
	fmt.Printf("save: one run of N results (60 s of 1 s samples each), into a fresh database; median of %d\n", reps)
	fmt.Printf("save: %-34s %6s %12s %14s\n", "pattern", "N", "total ms", "ms per result")
	for _, p := range patterns {
		for _, n := range sizes {
			rs := make([]result.Result, n)
			for j := range rs {
				rs[j] = mkResult("20240501-120000-abcdef", j, start.Add(time.Duration(j)*time.Minute), 60, map[string]string{"storage-class": "managed-premium"})
			}
			ds := make([]time.Duration, reps)
			for i := range ds {
				path := filepath.Join(dir, "save-"+strconv.Itoa(i)+".db")
				s, err := store.Open(ctx, path)
				check(err)
				t0 := time.Now()
				p.save(ctx, s, rs)
				ds[i] = time.Since(t0)
				runs, err := s.List(ctx, store.ListOptions{})
				check(err)
				if len(runs) != 1 || runs[0].Tests != n {
					check(fmt.Errorf("%s: %d runs stored, want one of %d results", p.name, len(runs), n))
				}
				check(s.Close())
				for _, suffix := range []string{"", "-wal", "-shm"} {
					os.Remove(path + suffix)
				}
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			d := ds[reps/2]
			fmt.Printf("save: %-34s %6d %12.1f %14.3f\n", p.name, n, ms(d), ms(d)/float64(n))
		}
	}
}

func parseSizes(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			check(fmt.Errorf("-save-sizes: %q is not a count", f))
		}
		out = append(out, n)
	}
	return out
}
