package k8s

import (
	"testing"

	"github.com/iolens/iolens/internal/plan"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Issue 27.10: agent pods have a memory limit sized to what fio may hold
// (its IO buffers, and a buffered test's file in the page cache), so a
// job file's 4 GiB of buffers is declared, not taken unannounced.
func TestAgentMemoryLimit(t *testing.T) {
	tg := Target{ID: "t1", StorageClass: "fast", Size: resource.MustParse("10Gi"), Group: "g1"}
	quick, err := runner.LookupSuite("quick")
	if err != nil {
		t.Fatal(err)
	}
	big := result.Suite{Name: "job", Tests: []result.TestSpec{
		{Name: "small", RW: "randread", BlockSize: 4096, IODepth: 1, NumJobs: 1, Direct: true},
		{Name: "huge", RW: "write", BlockSize: 64 << 20, IODepth: 16, NumJobs: 4, Direct: true}, // 4 GiB in flight
	}}
	buffered := result.Suite{Name: "job", Tests: []result.TestSpec{{Name: "b", RW: "write", BlockSize: 1 << 20, IODepth: 1, NumJobs: 1, SizeBytes: 2 << 30}}}
	for _, c := range []struct {
		name     string
		agent    AgentArgs
		min, max int64
	}{
		{"quick", AgentArgs{}.ForSuite(quick, "", ""), 256 << 20, 4 << 30},
		{"4 GiB of buffers", AgentArgs{}.ForSuite(big, "j.fio", "[huge]\n"), 256<<20 + 4<<30, 256<<20 + 6<<30},
		{"a buffered 2 GiB file", AgentArgs{}.ForSuite(buffered, "j.fio", "[b]\n"), 256<<20 + 2<<30, 256<<20 + 3<<30},
		{"diagnose", AgentArgs{}.ForPlan(plan.Suite()), 256 << 20, 4 << 30},
	} {
		cfg := Config{Namespace: ns, RunID: "r1", Image: "img:1", Timeouts: DefaultTimeouts(), Agent: c.agent}
		job := cfg.jobFor(tg, "claim", gateRef{})
		lim, ok := job.Spec.Template.Spec.Containers[0].Resources.Limits["memory"]
		if !ok {
			t.Errorf("%s: no memory limit", c.name)
			continue
		}
		if v := lim.Value(); v < c.min || v > c.max {
			t.Errorf("%s: memory limit %s, want %d to %d MiB", c.name, lim.String(), c.min>>20, c.max>>20)
		}
		if req := job.Spec.Template.Spec.Containers[0].Resources.Requests["memory"]; req.Cmp(lim) > 0 {
			t.Errorf("%s: request %s above the limit %s", c.name, req.String(), lim.String())
		}
	}
}
