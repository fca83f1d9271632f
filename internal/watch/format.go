package watch

import (
	"github.com/iolens/iolens/internal/result"
)

type finding = result.WatchFinding

func newFinding(dev, kind, phase, sev string, start, dur float64, summary string, ev map[string]float64) finding {
	f := finding{Device: dev, Phase: phase, Finding: result.Finding{Kind: kind, Code: kind, Severity: sev, Summary: summary, Evidence: ev}}
	f.StartS = &start
	if phase != "start" {
		f.DurationS = &dur
	}
	return f
}
