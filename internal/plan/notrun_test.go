package plan

import (
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// Issue 39.1: a diagnose stopped part way lists the core steps and the
// fsync it did not measure, each with the reason, so that no report shows
// an interrupted run's not-established list as empty.
func TestNotRunListsSkippedSteps(t *testing.T) {
	steps := coreSteps()
	p := &planner{done: []result.Result{
		{Status: "ok", Test: steps[0].spec},
		{Status: "failed", Test: steps[1].spec}, // cut by the signal
	}}
	p.notRun()
	joined := strings.Join(p.unknown, "\n")
	if strings.Contains(joined, steps[0].spec.Name+":") {
		t.Errorf("the measured step is listed: %s", joined)
	}
	for _, st := range steps[1:] {
		if !strings.Contains(joined, st.spec.Name+": not run: the run was interrupted") {
			t.Errorf("%s missing from %s", st.spec.Name, joined)
		}
	}
	if !strings.Contains(joined, "fdatasync-2300 and the etcd verdict: not run") {
		t.Errorf("fsync missing: %s", joined)
	}
}
