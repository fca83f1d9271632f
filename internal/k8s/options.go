package k8s

import (
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// PodOptions are what the command line says of every pod of a run, as
// given; Config checks them before the first call to the API.
type PodOptions struct {
	Tolerate   []string // KEY[=VALUE][:EFFECT]
	Image      string
	PullPolicy string
	Keep       bool
	Timeouts   Timeouts
	// RunID is "" for a new one.
	RunID          string
	ServiceAccount string
}

// Config checks o, each mistake a *RequestError, and is the run's
// Config: its id is o's, or newID's. pinned, the image of this build, is
// the example an image that is not pinned is told of.
func (o PodOptions) Config(pinned string, newID func() string) (Config, error) {
	var idErr error
	if o.RunID != "" {
		idErr = CheckRunID("--run-id", o.RunID)
	}
	tol, tolErr := ParseTolerations(o.Tolerate)
	pull, pullErr := ParsePullPolicy(o.PullPolicy)
	if pullErr == nil {
		pullErr = CheckImage(o.Image, pinned)
	}
	for _, err := range []error{idErr, CheckServiceAccount(o.ServiceAccount), o.Timeouts.Check(), tolErr, pullErr} {
		if err != nil {
			return Config{}, &RequestError{Err: err}
		}
	}
	runID := o.RunID
	if runID == "" {
		runID = newID()
	}
	return Config{RunID: runID, Image: o.Image, PullPolicy: pull, Tolerations: tol, Keep: o.Keep, Timeouts: o.Timeouts,
		AgentServiceAccount: o.ServiceAccount}, nil
}

// AgentOptions are what the command line says of how the agent runs a
// suite or a job file, as given; Args checks them.
type AgentOptions struct {
	Runtime, Ramp units.Duration
	// RampSet: Ramp replaces each test's own.
	RampSet                bool
	UntilSteady            bool
	MinRuntime, MaxRuntime units.Duration
	Repeat                 int
	FileSize               string // "" lets the agent choose
}

// Args checks o, each mistake a *RequestError, and is the agent's
// arguments, but for what it runs (ForSuite).
func (o AgentOptions) Args() (AgentArgs, error) {
	s := func(d units.Duration) float64 { return time.Duration(d).Seconds() }
	a := AgentArgs{RuntimeS: s(o.Runtime), Repeat: o.Repeat, FileSize: o.FileSize, RampS: s(o.Ramp), RampSet: o.RampSet}
	if o.UntilSteady {
		a.UntilSteady, a.MinRuntimeS, a.MaxRuntimeS = true, s(o.MinRuntime), s(o.MaxRuntime)
	}
	if o.Repeat < 1 {
		return AgentArgs{}, badRequest("--repeat must be at least 1")
	}
	if err := a.CheckTimes(); err != nil {
		return AgentArgs{}, &RequestError{Err: err}
	}
	if o.FileSize != "" {
		if _, err := units.ParseSize(o.FileSize); err != nil {
			return AgentArgs{}, badRequest("--file-size: %v", err)
		}
	}
	return a, nil
}

// PlanArgs checks diagnose's --budget, from least (the plan's core tests
// and fsync) to 24h, and --precision, each mistake a *RequestError, and
// is the agent's arguments for the plan of s's tests (plan.Suite): the
// run may take the budget, the layout and the pod's start and end.
func PlanArgs(budget time.Duration, precision string, least time.Duration, s result.Suite) (AgentArgs, error) {
	p, err := units.ParsePrecision(precision)
	if err != nil {
		return AgentArgs{}, badRequest("--precision: %v", err)
	}
	if budget < least || budget > 24*time.Hour {
		return AgentArgs{}, badRequest("--budget %s: give between %s (the plan's core tests and fsync) and 24h", budget, least)
	}
	return AgentArgs{Budget: budget, Precision: p, Planned: budget + time.Minute}.ForPlan(s), nil
}
