package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/result"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// KeeperOptions tune how a Keeper retries.
type KeeperOptions struct {
	// Wait bounds how long Finish keeps retrying results that are still
	// waiting for another writer's lock (default 1 minute).
	Wait time.Duration
	// Pause is the first pause between Finish's attempts; it doubles up to
	// 5 s (default 250 ms).
	Pause time.Duration
}

// Keeper saves the results of a run as they complete, each once and in
// its own transaction, so that a run killed halfway keeps the tests it
// finished. A result that cannot be saved yet (another writer holds the
// lock for longer than the busy timeout) is kept and tried again with the
// next result and at Finish, which says exactly which results were lost.
// It is safe for concurrent use.
type Keeper struct {
	s *Store
	o KeeperOptions

	mu sync.Mutex
	// enc encodes every record the Keeper saves (under mu), with one
	// gzip writer for the run.
	enc     recordEncoder
	pending []result.Result
	lost    []Lost
	saved   int
}

// Lost is a result that was not saved, and why.
type Lost struct {
	RunID  string
	Index  int
	Repeat int
	Test   string
	Err    error
}

func (l Lost) String() string {
	return fmt.Sprintf("%s #%d (test %d of run %s)", l.Test, l.Repeat, l.Index, l.RunID)
}

// Summary is what a Keeper did over a run.
type Summary struct {
	Saved int
	Lost  []Lost
}

// PendingError says that results are not saved yet but kept for a later
// attempt.
type PendingError struct {
	// Pending counts the results waiting, the one just added among them.
	Pending int
	Err     error
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("%d results not saved yet, kept to retry: %v", e.Pending, e.Err)
}

func (e *PendingError) Unwrap() error { return e.Err }

// Hint says what to do.
func (e *PendingError) Hint() string {
	return "another process holds the history database; the results are saved once it lets go, or listed as lost at the end of the run"
}

// NewKeeper saves into s.
func NewKeeper(s *Store, o KeeperOptions) *Keeper {
	if o.Wait <= 0 {
		o.Wait = time.Minute
	}
	if o.Pause <= 0 {
		o.Pause = 250 * time.Millisecond
	}
	return &Keeper{s: s, o: o}
}

// Add saves r, after the results still waiting. The save goes on when ctx
// is cancelled (a finished test is worth keeping), bounded by the busy
// timeout. An error is a *PendingError (r is kept and retried) or a
// *RecordError (r can never be saved, and is counted as lost).
func (k *Keeper) Add(ctx context.Context, r result.Result) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pending = append(k.pending, r)
	lost := len(k.lost)
	if err := k.flush(context.WithoutCancel(ctx)); err != nil {
		return &PendingError{Pending: len(k.pending), Err: err}
	}
	if len(k.lost) > lost {
		return k.lost[len(k.lost)-1].Err
	}
	return nil
}

// flush saves the waiting results in order, one transaction each, and
// stops at the first that must wait for the lock.
func (k *Keeper) flush(ctx context.Context) error {
	for len(k.pending) > 0 {
		r := k.pending[0]
		_, err := k.s.save(ctx, []result.Result{r}, true, &k.enc)
		var re *RecordError
		switch {
		case err == nil:
			k.saved++
		case errors.As(err, &re):
			k.lost = append(k.lost, lostOf(&r, err))
		default:
			return err
		}
		k.pending[0] = result.Result{} // let the record go
		k.pending = k.pending[1:]
	}
	k.pending = nil
	return nil
}

// Finish saves what is still waiting, retrying while another writer holds
// the lock, for at most the Wait of the options (one attempt when ctx is
// already cancelled: the user asked to stop). Whatever is still unsaved
// then is lost, and listed.
func (k *Keeper) Finish(ctx context.Context) Summary {
	k.mu.Lock()
	defer k.mu.Unlock()
	interrupted := ctx.Err() != nil
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.o.Wait)
	defer cancel()
	pause := k.o.Pause
	var err error
	for {
		if err = k.flush(wctx); err == nil {
			break
		}
		if interrupted || !Retryable(err) || wctx.Err() != nil {
			break
		}
		t := time.NewTimer(pause)
		select {
		case <-wctx.Done():
		case <-t.C:
		}
		t.Stop()
		pause = min(2*pause, 5*time.Second)
	}
	if err != nil {
		if wctx.Err() != nil {
			err = fmt.Errorf("gave up after %s: %w", k.o.Wait, err)
		}
		for i := range k.pending {
			k.lost = append(k.lost, lostOf(&k.pending[i], err))
		}
		k.pending = nil
	}
	return Summary{Saved: k.saved, Lost: append([]Lost(nil), k.lost...)}
}

func lostOf(r *result.Result, err error) Lost {
	return Lost{RunID: r.RunID, Index: r.Index, Repeat: r.Repeat, Test: r.Test.Name, Err: err}
}

// isBusy tells an error of SQLite's locks (another connection holds the
// lock this one needs).
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// Retryable tells an error that may pass if tried again later (another
// process holds the database's lock, or the wait for it was cut short)
// from one that will not.
func Retryable(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return isBusy(err)
	}
	// The driver ends a busy wait early with the context's error.
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}
