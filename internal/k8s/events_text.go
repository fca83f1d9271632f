package k8s

import (
	"context"
	"fmt"
	"strings"

	"github.com/iolens/iolens/internal/units"
)

// String is the event as a line of a run's progress: the target, then
// what happened to it.
func (e Event) String() string {
	what := string(e.Phase)
	switch e.Phase {
	case PhaseTest:
		switch {
		case e.Test == 0:
			what = e.Message
		case e.Tests == 0:
			what = "running " + e.TestName
		default:
			what = fmt.Sprintf("running test %d/%d %s", e.Test, e.Tests, e.TestName)
		}
	case PhaseFailed:
		what = "FAILED: " + e.Message
		if strings.HasSuffix(e.Message, context.Canceled.Error()) {
			what = "interrupted"
		}
	default:
		if e.Message != "" {
			what += " " + e.Message
		}
	}
	return fmt.Sprintf("[%s %s] %s", e.Target.ID, e.Target.Name(), what)
}

// Lines is the run's summary, a line each: each target's outcome, the
// start skew of each gate, the PVs kept by their reclaim policy, and how
// long results and cleanup took. A run that reached no target has none.
func (s Summary) Lines() []string {
	if len(s.Outcomes) == 0 {
		return nil
	}
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	for _, o := range s.Outcomes {
		status := "ok"
		if o.Err != nil {
			status = "failed"
		}
		add("%s %-24s %-6s %d results  pvc %s  pv %s  node %s", o.Target.ID, o.Target.Name(), status, o.Results,
			units.OrDash(o.PVC), units.OrDash(o.PV), units.OrDash(o.Node))
	}
	for _, g := range s.Gates {
		what := "group " + g.Key
		if g.Key == "run" {
			what = "the run"
		}
		add("start skew %.3fs across the %d targets of %s (agents' clocks)", g.Skew.Seconds(), g.Targets, what)
	}
	for _, pv := range s.Retained {
		add("PV %s kept by its Retain reclaim policy: delete it with 'kubectl delete pv %s' when its data is not needed", pv, pv)
	}
	switch {
	case s.FirstResult.IsZero():
	case s.CleanedUp.IsZero(): // --keep
		add("first result %.1fs after start", s.FirstResult.Sub(s.Started).Seconds())
	default:
		add("first result %.1fs after start; cleanup done %.1fs after the last result",
			s.FirstResult.Sub(s.Started).Seconds(), s.CleanedUp.Sub(s.LastResult).Seconds())
	}
	return lines
}

// Header is the first line of the progress of a run of n targets.
func (c Config) Header(n int) string {
	mode := "one group at a time"
	if c.Parallel {
		mode = "all at once"
	}
	return fmt.Sprintf("iolens k8s run %s: %d targets in namespace %s (%s), image %s", c.RunID, n, c.Namespace, mode, c.Image)
}
