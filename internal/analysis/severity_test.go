package analysis

import (
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// TestCountAtLeastCountsFailedTests: a test that failed measured nothing,
// so --fail-on fail (or milder) counts it as a failure; none counts
// nothing.
func TestCountAtLeastCountsFailedTests(t *testing.T) {
	rs := []result.Result{
		{Status: result.RunFailed, Error: "fio job bad failed with error 22"},
		{Status: "ok", Findings: []result.Finding{{Severity: SevWarn}, {Severity: SevInfo}}},
	}
	for sev, want := range map[string]int{"none": 0, SevInfo: 3, SevWarn: 2, SevFail: 1} {
		if got := CountAtLeast(rs, sev); got != want {
			t.Errorf("CountAtLeast(%s) = %d, want %d", sev, got, want)
		}
	}
}
