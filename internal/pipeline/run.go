package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/hint"
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

// Options say what keeps a run's results: the history database DB
// (unless NoSave) and the live metrics on MetricsAddr (none when empty),
// labelled with Suite, Labels and Build. Log hears a result the history
// could not save yet, and where the metrics are served.
type Options struct {
	RunID, Suite string
	Labels       map[string]string
	NoSave       bool
	DB           string
	MetricsAddr  string
	Build        metrics.Build
	Log          io.Writer
}

// Open opens what keeps a run's results. A history that cannot be opened
// says --no-save would go on without it; an address the metrics cannot
// listen on is the caller's mistake (a *hint.UsageError).
func Open(ctx context.Context, o Options) (*Run, error) {
	k := &Run{RunID: o.RunID}
	if !o.NoSave {
		s, err := store.OpenDefault(ctx, o.DB, store.Options{})
		if err != nil {
			if h := hint.Of(err); h != "" {
				err = hint.Wrap(err, h+", or run with --no-save")
			}
			return nil, err
		}
		k.Store = s
		k.Keep = store.NewKeeper(s, store.KeeperOptions{})
		k.Warn = func(r *result.Result, err error) {
			fmt.Fprintf(o.Log, "iolens: warning: %s #%d not saved to the history yet (%s): %v\n", r.Test.Name, r.Repeat, s.Path(), err)
		}
	}
	if o.MetricsAddr != "" {
		k.Live = metrics.NewLive(o.Suite, o.Labels, time.Now())
		reg := metrics.NewRegistry(o.Build)
		reg.MustRegister(k.Live)
		srv, err := metrics.Serve(o.MetricsAddr, reg)
		if err != nil {
			k.Close()
			var le *metrics.ListenError
			if errors.As(err, &le) {
				return nil, hint.Usage(err, hint.Of(err))
			}
			return nil, err
		}
		k.Server = srv
		fmt.Fprintf(o.Log, "metrics on http://%s/metrics\n", srv.Addr())
	}
	return k, nil
}

// Report saves what is still waiting and says on w where the run is, or
// exactly which results were lost (nothing with --no-save).
func (k *Run) Report(ctx context.Context, w io.Writer) {
	sum := k.Finish(ctx)
	if k.Keep == nil {
		return
	}
	if len(sum.Lost) == 0 {
		if sum.Saved > 0 {
			fmt.Fprintf(w, "saved as run %s in %s ('iolens history show %s')\n", k.RunID, k.Store.Path(), k.RunID)
		}
		return
	}
	fmt.Fprintf(w, "iolens: warning: %d of %d results not saved to the history (%s):\n", len(sum.Lost), len(sum.Lost)+sum.Saved, k.Store.Path())
	for _, l := range sum.Lost {
		fmt.Fprintf(w, "  %s: %v\n", l, l.Err)
	}
	fmt.Fprintf(w, "hint: they are still in this run's output (and its --out file); 'iolens history import FILE' saves an NDJSON file of them later\n")
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
