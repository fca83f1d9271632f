package k8s

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

func TestPodOptionsConfig(t *testing.T) {
	const pinned = "ghcr.io/iolens/iolens:v1.2.3"
	good := PodOptions{Image: pinned, PullPolicy: "IfNotPresent", Timeouts: DefaultTimeouts(), ServiceAccount: DefaultAgentServiceAccount,
		Tolerate: []string{"dedicated=storage:NoSchedule"}, Keep: true}
	cfg, err := good.Config(pinned, func() string { return "new-id" })
	if err != nil || cfg.RunID != "new-id" || cfg.Image != pinned || !cfg.Keep || len(cfg.Tolerations) != 1 || cfg.AgentServiceAccount != DefaultAgentServiceAccount {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	good.RunID = "r1"
	if cfg, _ := good.Config(pinned, func() string { return "new-id" }); cfg.RunID != "r1" {
		t.Errorf("run id %q, want the one given", cfg.RunID)
	}
	for _, c := range []struct {
		change   func(*PodOptions)
		want     string
		withHint bool
	}{
		{func(o *PodOptions) { o.RunID = "../x" }, "not a run id", true},
		{func(o *PodOptions) { o.ServiceAccount = "Bad_SA" }, "--agent-service-account", true},
		{func(o *PodOptions) { o.Timeouts.Bind = 0 }, "--bind-timeout", true},
		{func(o *PodOptions) { o.Tolerate = []string{"k:Sometimes"} }, "--tolerate", false},
		{func(o *PodOptions) { o.PullPolicy = "Often" }, "--pull-policy", false},
		{func(o *PodOptions) { o.Image = "x/iolens:latest" }, "never latest", false},
	} {
		o := good
		c.change(&o)
		_, err := o.Config(pinned, func() string { return "new-id" })
		var re *RequestError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) || (hint.Of(err) != "") != c.withHint {
			t.Errorf("%q: %v (hint %q)", c.want, err, hint.Of(err))
		}
	}
}

func TestAgentOptionsArgs(t *testing.T) {
	o := AgentOptions{Runtime: units.Duration(30 * time.Second), Ramp: units.Duration(2 * time.Second), RampSet: true, Repeat: 2, FileSize: "1G",
		UntilSteady: true, MinRuntime: units.Duration(10 * time.Second), MaxRuntime: units.Duration(time.Minute)}
	a, err := o.Args()
	want := AgentArgs{RuntimeS: 30, RampS: 2, RampSet: true, Repeat: 2, FileSize: "1G", UntilSteady: true, MinRuntimeS: 10, MaxRuntimeS: 60}
	if err != nil || a != want {
		t.Fatalf("args %+v, %v; want %+v", a, err, want)
	}
	o.UntilSteady = false
	if a, _ := o.Args(); a.UntilSteady || a.MinRuntimeS != 0 || a.MaxRuntimeS != 0 {
		t.Errorf("without --until-steady: %+v", a)
	}
	for _, c := range []struct {
		change func(*AgentOptions)
		want   string
	}{
		{func(o *AgentOptions) { o.Repeat = 0 }, "--repeat"},
		{func(o *AgentOptions) { o.Ramp = units.Duration(-time.Second) }, "--ramp"},
		{func(o *AgentOptions) {
			o.UntilSteady, o.MinRuntime, o.MaxRuntime = true, units.Duration(time.Minute), units.Duration(time.Second)
		}, "min <= max"},
		{func(o *AgentOptions) { o.FileSize = "lots" }, "--file-size"},
	} {
		bad := o
		c.change(&bad)
		_, err := bad.Args()
		var re *RequestError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v", c.want, err)
		}
	}
}

func TestPlanArgs(t *testing.T) {
	s := result.Suite{Name: "plan", Tests: []result.TestSpec{{Name: "a"}}}
	a, err := PlanArgs(3*time.Minute, "2%", time.Minute, s)
	if err != nil || !a.Diagnose || a.Budget != 3*time.Minute || a.Precision != 0.02 || a.Planned != 4*time.Minute || a.FioMemoryBytes == 0 {
		t.Fatalf("args %+v, %v", a, err)
	}
	for _, c := range []struct {
		budget    time.Duration
		precision string
		want      string
	}{
		{10 * time.Second, "2%", "--budget 10s: give between 1m0s"},
		{25 * time.Hour, "2%", "--budget 25h0m0s"},
		{3 * time.Minute, "90%", "--precision"},
	} {
		_, err := PlanArgs(c.budget, c.precision, time.Minute, s)
		var re *RequestError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.budget, c.precision, err, c.want)
		}
	}
}
