package promhist

import (
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// Issue 39.6: a history's cliff says what the series shows: the rate
// fell and stayed lower, which credits running out and a workload easing
// both give; and a full time names its zone and offset.
func TestHistoryWords(t *testing.T) {
	from := time.Date(2026, 3, 1, 0, 45, 0, 0, time.UTC)
	a := &Analysis{From: from, To: from.Add(time.Hour)}
	c := NewClock(a, nil)
	f := Finding{Device: "nvme0n1", Start: from.Add(15 * time.Minute), End: from.Add(25 * time.Minute),
		Finding: result.Finding{Kind: result.KindCliff, Summary: "cliff: 125 MB/s", Evidence: map[string]float64{"burst_rate": 125e6, "plateau_rate": 48.4e6}}}
	got := c.Describe(f)
	if !strings.Contains(got, "or the workload eased") {
		t.Errorf("cliff: %s", got)
	}
	if got := c.Full(from); got != "2026-03-01 00:45:00 UTC+00:00" {
		t.Errorf("Full in UTC: %s", got)
	}
	east := NewClock(a, time.FixedZone("CET", 3600))
	if got := east.Full(from); got != "2026-03-01 01:45:00 CET+01:00" {
		t.Errorf("Full in CET: %s", got)
	}
}
