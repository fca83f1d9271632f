package k8s

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

func TestParseModes(t *testing.T) {
	for _, s := range []string{"IfNotPresent", "Always", "Never"} {
		if p, err := ParsePullPolicy(s); err != nil || string(p) != s {
			t.Errorf("ParsePullPolicy(%q) = %q, %v", s, p, err)
		}
	}
	for _, s := range []string{"Filesystem", "Block"} {
		if m, err := ParseVolumeMode(s); err != nil || string(m) != s {
			t.Errorf("ParseVolumeMode(%q) = %q, %v", s, m, err)
		}
	}
	for _, s := range []string{"ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany", "ReadOnlyMany"} {
		if m, err := ParseAccessMode(s); err != nil || string(m) != s {
			t.Errorf("ParseAccessMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParsePullPolicy("always"); err == nil || err.Error() != `--pull-policy "always": want IfNotPresent, Always or Never` {
		t.Errorf("ParsePullPolicy(always): %v", err)
	}
	if _, err := ParseVolumeMode("block"); err == nil || err.Error() != `--volume-mode "block": want Filesystem or Block` {
		t.Errorf("ParseVolumeMode(block): %v", err)
	}
	if _, err := ParseAccessMode("RWO"); err == nil {
		t.Error("ParseAccessMode(RWO): no error")
	}
}

func TestCheckImage(t *testing.T) {
	for img, ok := range map[string]bool{
		"ghcr.io/iolens/iolens:v0.2.0":                                true,
		"ghcr.io/iolens/iolens@sha256:abc":                            false,
		"ghcr.io/iolens/iolens@sha256:" + strings.Repeat("ab", 32):    true,
		"ghcr.io/iolens/iolens:v1@sha256:" + strings.Repeat("0f", 32): true,
		"ghcr.io/iolens/iolens@md5:" + strings.Repeat("ab", 16):       false,
		"ghcr.io/Iolens/iolens:v1":                                    false,
		"ghcr.io/iolens/iolens:v1 ; rm -rf /":                         false,
		"":                                                            false,
		"registry:5000/iolens/iolens:v1":                              true,
		"ghcr.io/iolens/iolens:latest":                                false,
		"ghcr.io/iolens/iolens":                                       false,
		"registry:5000/iolens/iolens":                                 false,
		"iolens":                                                      false,
		"iolens:1":                                                    true,
	} {
		if err := CheckImage(img, "x:1"); (err == nil) != ok {
			t.Errorf("CheckImage(%q) = %v, want ok=%v", img, err, ok)
		}
	}
}

func TestAgentArgsCheckTimes(t *testing.T) {
	for _, c := range []struct {
		a  AgentArgs
		ok bool
	}{
		{AgentArgs{}, true},
		{AgentArgs{RuntimeS: 30, RampS: 5}, true},
		{AgentArgs{RuntimeS: -1}, false},
		{AgentArgs{RampS: math.NaN()}, false},
		{AgentArgs{RuntimeS: math.Inf(1)}, false},
		{AgentArgs{UntilSteady: true, MinRuntimeS: 20}, true},
		{AgentArgs{UntilSteady: true, MinRuntimeS: 20, MaxRuntimeS: 10}, false},
		{AgentArgs{MinRuntimeS: 20, MaxRuntimeS: 10}, true}, // not --until-steady
		{AgentArgs{UntilSteady: true, MinRuntimeS: math.NaN()}, false},
	} {
		if err := c.a.CheckTimes(); (err == nil) != c.ok {
			t.Errorf("%+v: CheckTimes() = %v, want ok=%v", c.a, err, c.ok)
		}
	}
}

func TestAgentArgsForSuite(t *testing.T) {
	s := result.Suite{Name: "quick", Tests: []result.TestSpec{{Name: "a"}, {Name: "b"}}}
	a := AgentArgs{Repeat: 3}.ForSuite(s, "", "")
	if a.Suite != "quick" || a.JobFile != "" || a.Tests != 6 || a.SuiteName() != "quick" {
		t.Errorf("suite: %+v (%s)", a, a.SuiteName())
	}
	j := AgentArgs{}.ForSuite(s, "my.fio", "[a]\n")
	if j.Suite != "" || j.JobFile != "[a]\n" || j.JobName != "my.fio" || j.Tests != 2 || j.SuiteName() != "job:my.fio" {
		t.Errorf("job file: %+v (%s)", j, j.SuiteName())
	}
	if n := (AgentArgs{Diagnose: true, Budget: time.Minute}).SuiteName(); n != "diagnose" {
		t.Errorf("diagnose: %s", n)
	}
}
