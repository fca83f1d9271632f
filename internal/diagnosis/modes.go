package diagnosis

import (
	"fmt"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// LatencyMode is one latency population: its share of the IOs (0.71 =
// 71%) and its level, the median of its IOs.
type LatencyMode struct {
	Share float64 `json:"share"`
	LatNs float64 `json:"lat_ns"`
}

// latencyModes are the populations of h, nil when it holds one.
func latencyModes(h *result.Histogram) []LatencyMode {
	var out []LatencyMode
	for _, m := range analysis.LatencyModes(h) {
		out = append(out, LatencyMode{Share: m.Share, LatNs: m.LatNs})
	}
	return out
}

// modesWords says two populations after a QD1 figure, whose mean is
// neither: "; two populations: 71% at ~1.2 ms (hits), 29% at ~8 ms
// (misses)".
func modesWords(ms []LatencyMode) string {
	if len(ms) != 2 {
		return ""
	}
	return fmt.Sprintf("; two latency populations: %s%% at ~%s (hits), %s%% at ~%s (misses)",
		units.Whole(ms[0].Share*100), units.Latency(ms[0].LatNs), units.Whole(ms[1].Share*100), units.Latency(ms[1].LatNs))
}
