package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/k8s"
	"github.com/iolens/iolens/internal/units"
)

// progressLog writes a run's progress, one line per target event, each
// stamped with the time since Start. Quiet writes nothing.
type progressLog struct {
	mu    sync.Mutex
	W     io.Writer
	Quiet bool
	Start time.Time
}

// Line writes one progress line.
func (p *progressLog) Line(format string, args ...any) {
	if p.Quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.W, "%s  %s\n", units.Clock(time.Since(p.Start)), fmt.Sprintf(format, args...))
}

// Event writes what happened to a target (k8s.Runner.Progress).
func (p *progressLog) Event(e k8s.Event) {
	what := string(e.Phase)
	switch e.Phase {
	case k8s.PhaseTest:
		switch {
		case e.Test == 0:
			what = e.Message
		case e.Tests == 0:
			what = "running " + e.TestName
		default:
			what = fmt.Sprintf("running test %d/%d %s", e.Test, e.Tests, e.TestName)
		}
	case k8s.PhaseFailed:
		what = "FAILED: " + e.Message
		if strings.HasSuffix(e.Message, context.Canceled.Error()) {
			what = "interrupted"
		}
	default:
		if e.Message != "" {
			what += " " + e.Message
		}
	}
	p.Line("[%s %s] %s", e.Target.ID, e.Target.Name(), what)
}

// Summary writes each target's outcome, the start skew of each gate, the
// PVs kept by their reclaim policy, and how long results and cleanup took.
func (p *progressLog) Summary(s k8s.Summary) {
	if len(s.Outcomes) == 0 {
		return
	}
	for _, o := range s.Outcomes {
		status := "ok"
		if o.Err != nil {
			status = "failed"
		}
		p.Line("%s %-24s %-6s %d results  pvc %s  pv %s  node %s", o.Target.ID, o.Target.Name(), status, o.Results,
			units.OrDash(o.PVC), units.OrDash(o.PV), units.OrDash(o.Node))
	}
	for _, g := range s.Gates {
		what := "group " + g.Key
		if g.Key == "run" {
			what = "the run"
		}
		p.Line("start skew %.3fs across the %d targets of %s (agents' clocks)", g.Skew.Seconds(), g.Targets, what)
	}
	for _, pv := range s.Retained {
		p.Line("PV %s kept by its Retain reclaim policy: delete it with 'kubectl delete pv %s' when its data is not needed", pv, pv)
	}
	switch {
	case s.FirstResult.IsZero():
	case s.CleanedUp.IsZero(): // --keep
		p.Line("first result %.1fs after start", s.FirstResult.Sub(s.Started).Seconds())
	default:
		p.Line("first result %.1fs after start; cleanup done %.1fs after the last result",
			s.FirstResult.Sub(s.Started).Seconds(), s.CleanedUp.Sub(s.LastResult).Seconds())
	}
}

// Done ends the progress: lines stay as written.
func (p *progressLog) Done() {}
