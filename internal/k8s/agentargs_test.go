package k8s

import (
	"math"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

func TestParseModes(t *testing.T) {
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
	if _, err := ParseVolumeMode("block"); err == nil || err.Error() != `--volume-mode "block": want Filesystem or Block` {
		t.Errorf("ParseVolumeMode(block): %v", err)
	}
	if _, err := ParseAccessMode("RWO"); err == nil {
		t.Error("ParseAccessMode(RWO): no error")
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
