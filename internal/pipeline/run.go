package pipeline

import (
	"context"
	"io"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/metrics"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/store"
)

// Run keeps one run's results as they complete: in the history (Store and
// its Keep, both nil with --no-save) and in the live metrics (Live and
// Server, nil without --metrics-addr). Warn hears which results could not
// be saved yet (nil: ignored).
type Run struct {
	Store  *store.Store
	Keep   *store.Keeper
	Live   *metrics.Live
	Server *metrics.Server
	RunID  string
	Warn   func(r *result.Result, err error)
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

// Sink is the run's result sink: expect (may be nil), the history (a failing database does not stop the run, what could not be
// saved yet is kept and tried again), an NDJSON copy to out (nil: none) and the
// live metrics. Every result is collected for the report, and each run
// and target's diagnosis built at the end. Suite and Plan
// give it their analysis; results fed to it arrive analysed.
func (k *Run) Sink(expect func(*result.Result), out io.Writer) *Sink {
	s := &Sink{Expect: expect, Collect: true, Diagnose: diagnosis.Of}
	if k.Keep != nil {
		s.Keep = k.Keep
		s.Warn = k.Warn
	}
	if out != nil {
		s.Out = append(s.Out, result.NewEncoder(out))
	}
	if k.Live != nil {
		s.Out = append(s.Out, k.Live)
	}
	return s
}

// Finish saves what is still waiting and says what was saved and
// exactly which results were lost (nothing with --no-save).
func (k *Run) Finish(ctx context.Context) store.Summary {
	if k.Keep == nil {
		return store.Summary{}
	}
	return k.Keep.Finish(ctx)
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
