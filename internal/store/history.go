package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/result"
)

// LookupError gives the errors of a run id lookup what to do: an empty
// or ambiguous id is a *hint.UsageError, a run not found points to the
// list.
func LookupError(err error) error {
	var amb *AmbiguousError
	switch {
	case errors.Is(err, ErrNotFound):
		return &hint.Error{Err: err, Advice: "'iolens history' lists the stored runs"}
	case errors.Is(err, ErrEmptyID):
		return hint.Usage(err, "give a run id or a unique prefix of one; 'iolens history' lists them")
	case errors.As(err, &amb):
		return hint.Usage(err, hint.Of(err))
	}
	return err
}

// checkIDs refuses empty run ids before anything is opened: "" is a
// prefix of every run.
func checkIDs(ids []string) error {
	for _, id := range ids {
		if strings.TrimSpace(id) == "" {
			return LookupError(fmt.Errorf("run %q: %w", id, ErrEmptyID))
		}
	}
	return nil
}

// ListRuns lists the runs of the database at path ("" for the default),
// newest first: the newest limit (every one when 0) with results that
// match selector. A database not there yet is no run, and err an
// ErrNoDatabase that says where it was looked for. Mistakes in selector
// and limit are *hint.UsageError.
func ListRuns(ctx context.Context, path, selector string, limit int) ([]Run, error) {
	if limit < 0 {
		return nil, hint.Usage(fmt.Errorf("--limit %d: want 0 (every run) or more", limit), "--limit 10 lists the newest 10 runs")
	}
	o := ListOptions{Limit: limit}
	if selector != "" {
		sel, err := ParseSelector(selector)
		if err != nil {
			return nil, hint.Usage(err, "a selector is key=value,key!=value,key,!key")
		}
		o.Selector = sel
	}
	runs := []Run{}
	s, err := OpenDefault(ctx, path, Options{ReadOnly: true})
	if err != nil {
		return runs, err
	}
	defer s.Close()
	if runs, err = s.List(ctx, o); runs == nil {
		runs = []Run{}
	}
	return runs, err
}

// ReadRuns are the saved results of the runs ids name (each an id or a
// unique prefix of one), from the database at path, read only.
func ReadRuns(ctx context.Context, path string, ids []string) ([]result.Result, error) {
	if err := checkIDs(ids); err != nil {
		return nil, err
	}
	s, err := OpenDefault(ctx, path, Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	rs, err := s.ResultsOf(ctx, ids)
	return rs, LookupError(err)
}

// RemoveRuns removes the runs ids name from the database at path, once
// every id is found; removed hears each run removed. A database that
// does not exist is not created.
func RemoveRuns(ctx context.Context, path string, ids []string, removed func(id string)) error {
	if err := checkIDs(ids); err != nil {
		return err
	}
	s, err := OpenDefault(ctx, path, Options{MustExist: true})
	if err != nil {
		return err
	}
	defer s.Close()
	full, err := s.ResolveIDs(ctx, ids)
	if err != nil {
		return LookupError(err)
	}
	for _, id := range full {
		if _, err := s.Delete(ctx, id); err != nil {
			return LookupError(err)
		}
		removed(id)
	}
	return nil
}

// ImportFiles adds the results read from each file to the database at
// path (created if needed), labels added to each; imported hears what
// each file added.
func ImportFiles(ctx context.Context, path string, files []string, read func(ctx context.Context, file string) ([]result.Result, error),
	labels map[string]string, imported func(file string, st SaveStats)) error {
	s, err := OpenDefault(ctx, path, Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	for _, p := range files {
		rs, err := read(ctx, p)
		if err != nil {
			return err
		}
		for i := range rs {
			rs[i].Target.AddLabels(labels)
		}
		st, err := s.Import(ctx, rs)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		imported(p, st)
	}
	return nil
}
