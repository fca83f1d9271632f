package watch

import (
	"fmt"
	"math"

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

// bytesSI prints a byte rate in MB (10^6), as iostat -m does.
func bytesSI(b float64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%.1f GB", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.0f kB", b/1e3)
	}
	return fmt.Sprintf("%.0f B", b)
}

// bytesIEC prints an amount of memory in powers of two, as meminfo does.
func bytesIEC(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.0f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}

func seconds(s float64) string {
	switch {
	case s >= 3600:
		return fmt.Sprintf("%dh%02dm", int(s)/3600, int(s)%3600/60)
	case s >= 120:
		return fmt.Sprintf("%dm%02ds", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%.0f s", math.Round(s))
}
