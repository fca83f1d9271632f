package pipeline

import (
	"context"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/plan"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
)

// Outcome is what a run leaves: its results, each with its findings read
// over the whole run, and the diagnosis every report of them opens with,
// built once (nil when nothing was collected, and for Feed, whose results
// may span several targets).
type Outcome struct {
	Results   []result.Result
	Diagnosis *diagnosis.Diagnosis
	// Unknown is what a plan could not establish (also in Diagnosis and
	// in the results' notes).
	Unknown []string
}

// Suite runs cfg's suite through snk, its analysis a session of the
// suite's tests and repeats, and returns the outcome with the runner's
// error.
func Suite(ctx context.Context, cfg runner.Config, snk *Sink, progress func(runner.Event)) (Outcome, error) {
	snk.Analysis = analysis.NewSession(cfg.Suite, cfg.Repeat)
	err := runner.Run(ctx, cfg, func(r result.Result) error { return snk.Add(ctx, r) }, progress)
	if ctx.Err() != nil {
		snk.markInterrupted(ctx)
	}
	return snk.outcome(ctx, true, nil), err
}

// Plan runs diagnose's plan on the open session s through snk. The plan
// chooses its tests as it goes and tells the analysis where its groups
// end.
func Plan(ctx context.Context, s *runner.Session, o plan.Options, snk *Sink, progress func(plan.Event)) (Outcome, error) {
	snk.Analysis = analysis.NewPlanSession()
	o.Analysis = snk.Analysis
	unknown, err := plan.Plan(ctx, s, o, func(r result.Result) error { return snk.Add(ctx, r) }, progress)
	return snk.outcome(ctx, true, unknown), err
}

// Feed passes the results run makes through snk as they come: results
// another driver makes (a Kubernetes run), analysed where they were made
// or by snk.Analysis. It builds no diagnosis.
func Feed(ctx context.Context, snk *Sink, run func(emit func(result.Result) error) error) (Outcome, error) {
	err := run(func(r result.Result) error { return snk.Add(ctx, r) })
	return snk.outcome(ctx, false, nil), err
}

// outcome ends the run: every result read again over the whole run, what
// changed saved again, and the diagnosis built.
func (s *Sink) outcome(ctx context.Context, diagnose bool, unknown []string) Outcome {
	s.Revise(ctx)
	o := Outcome{Results: s.Results(), Unknown: unknown}
	if diagnose && len(o.Results) > 0 {
		d := report.Diagnose(o.Results, unknown)
		o.Diagnosis = &d
	}
	return o
}
