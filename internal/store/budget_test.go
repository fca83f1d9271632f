package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// Issue 27.6: each record read back is capped, and so are all the
// records one Store reads together: records that inflate to more than
// the budget end the read with *result.TooMuchError instead of holding
// them all (a small database of gzip bombs would otherwise exhaust
// memory). The budget here is 5 MiB for records of 1 MiB.
func TestReadsBoundedInTotal(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	var rs []result.Result
	for i := 1; i <= 8; i++ {
		r := mkResult("20240501-120000-bomb00", i, nil, 100)
		r.FioStderr = strings.Repeat(" ", 1<<20)
		rs = append(rs, r)
	}
	if _, err := s.Save(ctx, rs); err != nil {
		t.Fatal(err)
	}
	s.read.Store(5 << 20)
	got, err := s.Results(ctx, "20240501-120000-bomb00")
	var tm *result.TooMuchError
	if !errors.As(err, &tm) || got != nil {
		t.Fatalf("8 MiB of records on a 5 MiB budget: %d results, %v", len(got), err)
	}
	// The budget is the Store's: more queries do not reset it.
	s.read.Store(5 << 20)
	for i := 0; i < 2; i++ {
		if _, err := s.Select(ctx, Selector{{Key: "suite", Op: OpEq, Value: "quick"}}); !errors.As(err, &tm) {
			t.Errorf("select %d: %v", i, err)
		}
	}
	s.read.Store(result.MaxReadBytes)
	if got, err := s.Results(ctx, "20240501-120000-bomb00"); err != nil || len(got) != 8 {
		t.Errorf("within the budget: %d results, %v", len(got), err)
	}
}
