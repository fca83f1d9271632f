package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/pipeline"
	"github.com/iolens/iolens/internal/plan"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/units"
)

// Agent runs in the benchmark pod ('iolens k8s agent'): it runs a suite,
// a job file or diagnose's plan on the volume and writes each result,
// framed, to the pod's log, where the Runner reads them back.
type Agent struct {
	// Dir is the directory to test (the mounted volume), Device the block
	// device (Block mode).
	Dir, Device string
	// Suite is the built-in suite; JobEnv, when set, names the
	// environment variable holding a fio job file, run as JobName.
	Suite, JobEnv, JobName string
	FileSize               string
	RunID                  string
	RuntimeS, RampS        float64
	// RampSet says RampS was given (0 included).
	RampSet                  bool
	Repeat                   int
	UntilSteady              bool
	MinRuntimeS, MaxRuntimeS float64
	// GateConfigMap and GateKey name the start time to wait for before
	// the first test, for at most GateTimeout.
	GateConfigMap, GateKey string
	GateTimeout            time.Duration
	// Diagnose runs diagnose's plan within Budget to Precision instead
	// of a suite.
	Diagnose  bool
	Budget    time.Duration
	Precision float64
	// Version is iolens's, recorded with the results.
	Version string
}

// New is an agent of iolens version with the defaults of its flags: a
// steady test runs 20 s at least, the start gate is waited for 15
// minutes, and diagnose's plan has 3 minutes for figures within 2%.
func New(version string) *Agent {
	return &Agent{Version: version, MinRuntimeS: 20, GateTimeout: 15 * time.Minute, Budget: 3 * time.Minute, Precision: 0.02}
}

// Run runs the tests (or the plan) and writes the framed results, then a
// done record with the outcome, to w (the pod's log).
func (o *Agent) Run(ctx context.Context, w io.Writer) error {
	fw := k8s.NewFrameWriter(w)
	err := o.bench(ctx, fw)
	done := k8s.Record{Type: k8s.RecordDone}
	if err != nil {
		done.Error = err.Error()
		done.Hint = hint.Of(err)
	}
	if werr := fw.Write(done); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// gate returns how the agent waits for its start time, nil for none.
func (o *Agent) gate() (k8s.GateReader, error) {
	if o.GateConfigMap == "" {
		return nil, nil
	}
	cs, ns, err := k8s.InClusterClient()
	if err != nil {
		// Not fatal: the agent starts alone, and says why.
		return func(context.Context) (string, error) { return "", err }, nil
	}
	return k8s.ConfigMapGate(cs, ns, o.GateConfigMap, o.GateKey), nil
}

func (o *Agent) bench(ctx context.Context, fw *k8s.FrameWriter) error {
	if o.Diagnose {
		return o.diagnoseVolume(ctx, fw)
	}
	started := time.Now()
	var suite result.Suite
	var err error
	// The job file goes through the runner's rules, the same as for a
	// local run: the agent never hands fio an option iolens does not allow.
	if o.JobEnv != "" {
		suite, err = runner.SuiteFromJobFile(o.JobName, os.Getenv(o.JobEnv))
	} else {
		suite, err = runner.LookupSuite(o.Suite)
	}
	if err != nil {
		return err
	}
	var size int64
	if o.FileSize != "" {
		if size, err = units.ParseSize(o.FileSize); err != nil {
			return err
		}
	}
	cfg := runner.Config{Suite: suite, Dir: o.Dir, SizeBytes: size, RuntimeS: o.RuntimeS, RampS: o.RampS, RampSet: o.RampSet,
		Repeat: o.Repeat, RunID: o.RunID, IolensVersion: o.Version,
		// When the agent started, to split a target's overhead into the
		// cluster's part (provisioning, scheduling, container start) and
		// the test's (preconditioning) with the start of the first test.
		Labels: map[string]string{"k8s.agent-started": started.UTC().Format(time.RFC3339Nano)}}
	if o.UntilSteady {
		pipeline.UntilSteady(&cfg, o.MinRuntimeS, o.MaxRuntimeS)
	}
	if o.Device != "" {
		// The volume was provisioned for this run and is deleted after
		// it: nothing on it can be lost.
		cfg.Device, cfg.Dir, cfg.Destructive, cfg.Force = o.Device, "", true, true
	}
	gate, err := o.gate()
	if err != nil {
		return err
	}
	// The same findings as a local run, computed where the results are
	// made, and each result framed onto the pod's log.
	snk := &pipeline.Sink{Out: []pipeline.Encoder{fw.Results()}}
	gateDone := gate == nil
	progress := func(e runner.Event) {
		switch e.Kind {
		case runner.EventTestStart:
			if !gateDone {
				// The test file is written: wait here, before the first
				// test, so that the gate's volumes are measured together.
				gateDone = true
				_ = fw.Write(k8s.Record{Type: k8s.RecordEvent, Ready: true, At: time.Now()})
				k8s.WaitGate(ctx, gate, o.GateTimeout, k8s.GatePoll, func(msg string) {
					_ = fw.Write(k8s.Record{Type: k8s.RecordEvent, Message: msg, At: time.Now()})
				})
			}
			_ = fw.Write(k8s.Record{Type: k8s.RecordEvent, Test: e.Index, Tests: e.Total, Name: e.Test.Name, At: time.Now()})
		case runner.EventPrepare, runner.EventInfo:
			_ = fw.Write(k8s.Record{Type: k8s.RecordEvent, Message: e.Message, At: time.Now()})
		}
	}
	_, err = pipeline.Suite(ctx, cfg, snk, progress)
	return err
}

// diagnoseVolume runs diagnose's plan on the volume: the runner prepares
// the target, the agent waits for its gate, then the plan runs within its
// budget, every gated volume starting it together.
func (o *Agent) diagnoseVolume(ctx context.Context, fw *k8s.FrameWriter) error {
	if o.Budget < plan.MinBudget() || o.Precision <= 0 || o.Precision > 0.5 || math.IsNaN(o.Precision) {
		return fmt.Errorf("--budget %s, --precision %g: want at least %s and a precision in (0, 0.5]", o.Budget, o.Precision, plan.MinBudget())
	}
	cfg := runner.Config{Suite: plan.Suite(), Dir: o.Dir, NoPrecondition: true, Plan: true, RunID: o.RunID, IolensVersion: o.Version,
		Labels: map[string]string{"k8s.agent-started": time.Now().UTC().Format(time.RFC3339Nano)}}
	if o.Device != "" {
		// The volume was provisioned for this run and is deleted after
		// it: nothing on it can be lost.
		cfg.Device, cfg.Dir, cfg.Destructive, cfg.Force = o.Device, "", true, true
	}
	say := func(msg string) { _ = fw.Write(k8s.Record{Type: k8s.RecordEvent, Message: msg, At: time.Now()}) }
	s, err := runner.Open(ctx, cfg, func(e runner.Event) {
		if e.Kind == runner.EventPrepare || e.Kind == runner.EventInfo {
			say(e.Message)
		}
	})
	if err != nil {
		return err
	}
	defer func() { _ = s.Close(ctx) }()
	gate, err := o.gate()
	if err != nil {
		return err
	}
	if gate != nil {
		_ = fw.Write(k8s.Record{Type: k8s.RecordEvent, Ready: true, At: time.Now()})
		k8s.WaitGate(ctx, gate, o.GateTimeout, k8s.GatePoll, say)
	}
	// The first step starts now: the run's start skew is taken from it.
	_ = fw.Write(k8s.Record{Type: k8s.RecordEvent, Test: 1, Name: "diagnose", At: time.Now()})
	snk := &pipeline.Sink{Out: []pipeline.Encoder{fw.Results()}}
	_, planErr := pipeline.Plan(ctx, s, plan.Options{Budget: o.Budget, Precision: o.Precision}, snk, func(e plan.Event) {
		say(fmt.Sprintf("diagnose: %s (%s of the budget left)", e.Message, units.Clock(e.Left)))
	})
	return errors.Join(planErr, s.Close(ctx))
}
