package pipeline

import (
	"context"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/plan"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
)

// UntilSteady sets cfg to end each time-based test once its 1 s IOPS
// are steady (analysis.SteadyStop, the SNIA PTS criteria), after minS
// and by maxS seconds at most (0: the test's runtime): the rule of
// --until-steady, wherever the suite runs (here or in a pod).
func UntilSteady(cfg *runner.Config, minS, maxS float64) {
	cfg.MaxRuntimeS = maxS
	cfg.Stop = func(result.TestSpec) runner.StopRule {
		steady := analysis.SteadyStop(minS)
		return func(st runner.Status) (bool, string) { return steady(st.Elapsed, st.IOPS) }
	}
}

// Suite runs cfg's suite through snk, its analysis a session of the
// suite's tests and repeats, and returns the outcome with the runner's
// error.
func Suite(ctx context.Context, cfg runner.Config, snk *Sink, progress func(runner.Event)) (diagnosis.Outcome, error) {
	snk.Analysis = analysis.NewSession(cfg.Suite, cfg.Repeat)
	err := runner.Run(ctx, cfg, func(r result.Result) error { return snk.Add(ctx, r) }, progress)
	if ctx.Err() != nil {
		snk.markInterrupted(ctx)
	}
	return snk.outcome(ctx, nil), err
}

// Plan runs diagnose's plan on the open session s through snk. The plan
// chooses its tests as it goes and tells the analysis where its groups
// end.
func Plan(ctx context.Context, s *runner.Session, o plan.Options, snk *Sink, progress func(plan.Event)) (diagnosis.Outcome, error) {
	snk.Analysis = analysis.NewPlanSession()
	o.Analysis = snk.Analysis
	unknown, err := plan.Plan(ctx, s, o, func(r result.Result) error { return snk.Add(ctx, r) }, progress)
	return snk.outcome(ctx, unknown), err
}

// Feed passes the results run makes through snk as they come: results
// another driver makes (a Kubernetes run), analysed where they were made
// or by snk.Analysis, several targets' perhaps.
func Feed(ctx context.Context, snk *Sink, run func(emit func(result.Result) error) error) (diagnosis.Outcome, error) {
	err := run(func(r result.Result) error { return snk.Add(ctx, r) })
	return snk.outcome(ctx, nil), err
}

// outcome ends the run: every result read again over the whole run, what
// changed saved again, and the diagnosis of each run and target built
// once (none without snk.Diagnose).
func (s *Sink) outcome(ctx context.Context, unknown []string) diagnosis.Outcome {
	s.Revise(ctx)
	o := diagnosis.Outcome{Results: s.Results()}
	if s.Diagnose == nil {
		return o
	}
	for _, g := range diagnosis.Groups(o.Results) {
		o.Diagnoses = append(o.Diagnoses, s.Diagnose(g, unknown))
	}
	return o
}
