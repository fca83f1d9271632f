package k8s

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestEventLines(t *testing.T) {
	tg := Target{ID: "t1", StorageClass: "fast", Size: resource.MustParse("10Gi")}
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{Target: tg, Phase: PhaseTest, Test: 2, Tests: 6, TestName: "randread"}, "[t1 fast/10Gi] running test 2/6 randread"},
		{Event{Target: tg, Phase: PhaseTest, Test: 1, TestName: "knee"}, "[t1 fast/10Gi] running knee"},
		{Event{Target: tg, Phase: PhaseTest, Message: "waiting for the group"}, "[t1 fast/10Gi] waiting for the group"},
		{Event{Target: tg, Phase: PhaseFailed, Message: "bind: timed out"}, "[t1 fast/10Gi] FAILED: bind: timed out"},
		{Event{Target: tg, Phase: PhaseFailed, Message: "run: " + context.Canceled.Error()}, "[t1 fast/10Gi] interrupted"},
		{Event{Target: tg, Phase: PhaseBound, Message: "pv-1"}, "[t1 fast/10Gi] bound pv-1"},
		{Event{Target: tg, Phase: PhaseBound}, "[t1 fast/10Gi] bound"},
	} {
		if got := c.e.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}

func TestSummaryLines(t *testing.T) {
	if got := (Summary{}).Lines(); got != nil {
		t.Errorf("no targets: %q", got)
	}
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tg := Target{ID: "t1", StorageClass: "fast", Size: resource.MustParse("10Gi")}
	s := Summary{
		Outcomes: []Outcome{{Target: tg, Results: 6, PVC: "pvc-1", Node: "n1"}, {Target: tg, Err: errors.New("x")}},
		Gates:    []GateSkew{{Key: "run", Targets: 2, Skew: 1500 * time.Millisecond}, {Key: "g1", Targets: 3}},
		Retained: []string{"pv-9"},
		Started:  start, FirstResult: start.Add(2 * time.Second), LastResult: start.Add(10 * time.Second), CleanedUp: start.Add(13 * time.Second),
	}
	want := []string{
		"t1 fast/10Gi                ok     6 results  pvc pvc-1  pv -  node n1",
		"t1 fast/10Gi                failed 0 results  pvc -  pv -  node -",
		"start skew 1.500s across the 2 targets of the run (agents' clocks)",
		"start skew 0.000s across the 3 targets of group g1 (agents' clocks)",
		"PV pv-9 kept by its Retain reclaim policy: delete it with 'kubectl delete pv pv-9' when its data is not needed",
		"first result 2.0s after start; cleanup done 3.0s after the last result",
	}
	if got := s.Lines(); !reflect.DeepEqual(got, want) {
		t.Errorf("lines:\n%q\nwant\n%q", got, want)
	}
	s.CleanedUp = time.Time{}
	if got := s.Lines(); got[len(got)-1] != "first result 2.0s after start" {
		t.Errorf("--keep: %q", got[len(got)-1])
	}
}

func TestHeader(t *testing.T) {
	c := Config{RunID: "r1", Namespace: "bench", Image: "ghcr.io/iolens/iolens:v1"}
	if got := c.Header(3); got != "iolens k8s run r1: 3 targets in namespace bench (one group at a time), image ghcr.io/iolens/iolens:v1" {
		t.Errorf("%q", got)
	}
	c.Parallel = true
	if got := c.Header(1); got != "iolens k8s run r1: 1 targets in namespace bench (all at once), image ghcr.io/iolens/iolens:v1" {
		t.Errorf("%q", got)
	}
}
