package sink

import (
	"context"
	"fmt"
	"io"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/metrics"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/store"
)

// Run keeps one run's results as they complete: in the history (Store and
// its Keep, both nil with --no-save) and in the live metrics (Live and
// Server, nil without --metrics-addr). Log hears which results could not
// be saved, and where the run was saved.
type Run struct {
	Store  *store.Store
	Keep   *store.Keeper
	Live   *metrics.Live
	Server *metrics.Server
	RunID  string
	Log    io.Writer
}

// Events passes runner events to next and to the live metrics.
func (k *Run) Events(next func(runner.Event)) func(runner.Event) {
	if k.Live == nil {
		return next
	}
	return func(ev runner.Event) {
		k.Live.Event(ev)
		next(ev)
	}
}

// Sink is the run's result sink: expect (may be nil), the analysis (nil
// when results arrive analysed), the history (a failing database does not
// stop the run, what could not be saved yet is kept and tried again), an
// NDJSON copy to out (nil: none) and the live metrics. Every result is
// collected for the report.
func (k *Run) Sink(expect func(*result.Result), an *analysis.Session, out io.Writer) *Sink {
	s := &Sink{Expect: expect, Analysis: an, Collect: true}
	if k.Keep != nil {
		s.Keep = k.Keep
		s.Warn = func(r *result.Result, err error) {
			fmt.Fprintf(k.Log, "iolens: warning: %s #%d not saved to the history yet (%s): %v\n", r.Test.Name, r.Repeat, k.Store.Path(), err)
		}
	}
	if out != nil {
		s.Out = append(s.Out, result.NewEncoder(out))
	}
	if k.Live != nil {
		s.Out = append(s.Out, k.Live)
	}
	return s
}

// Finish saves what is still waiting and says where the run is, or
// exactly which results were lost.
func (k *Run) Finish(ctx context.Context) {
	if k.Keep == nil {
		return
	}
	sum := k.Keep.Finish(ctx)
	if len(sum.Lost) == 0 {
		if sum.Saved > 0 {
			fmt.Fprintf(k.Log, "saved as run %s in %s ('iolens history show %s')\n", k.RunID, k.Store.Path(), k.RunID)
		}
		return
	}
	fmt.Fprintf(k.Log, "iolens: warning: %d of %d results not saved to the history (%s):\n", len(sum.Lost), len(sum.Lost)+sum.Saved, k.Store.Path())
	for _, l := range sum.Lost {
		fmt.Fprintf(k.Log, "  %s: %v\n", l, l.Err)
	}
	fmt.Fprintf(k.Log, "hint: they are still in this run's output (and its --out file); 'iolens history import FILE' saves an NDJSON file of them later\n")
}

// Close stops the metrics server and closes the history.
func (k *Run) Close() {
	if k.Server != nil {
		_ = k.Server.Close()
	}
	if k.Store != nil {
		_ = k.Store.Close()
	}
}
