package watch

import (
	"strings"
	"testing"
)

func TestSequences(t *testing.T) {
	tests := []struct {
		seq      string
		ceiling  *Ceiling
		only     []string // the devices watched, when not all
		findings []string
	}{
		{seq: "idle.seq"},
		{seq: "stall.seq", findings: []string{
			"vdc saturation start @0", "vdc saturation end @0+4",
			"vdc stall start @4", "vdc stall end @4+3",
		}},
		{seq: "throttle.seq", findings: []string{"loop3 stall start @3", "loop3 stall end @3+2"}},
		// loop3 collapses with the host waiting on IO: a throttle holds
		// it while vdb is idle (a stall), but when loop3's workload pauses
		// while vdb is busy, the wait is vdb's, watched or not.
		{seq: "neighbour.seq", findings: []string{"loop3 stall start @3", "loop3 stall end @3+1"}},
		{seq: "neighbour.seq", only: []string{"loop3"}, findings: []string{"loop3 stall start @3", "loop3 stall end @3+1"}},
		// A workload that starts again late in an interval after a quiet
		// one (IO in flight, little done) is no collapse; requests that
		// sit in the device after a quiet interval are a stall.
		{seq: "restart.seq", findings: []string{"loop3 stall start @7", "loop3 stall end @7+2"}},
		{seq: "saturation.seq", findings: []string{"vdc saturation start @1", "vdc saturation end @1+4"}},
		{seq: "writeback.seq", findings: []string{
			"writeback start @1", "vdc saturation start @1", "vdc saturation end @1+4", "writeback end @1+4",
		}},
		// The cliff comes from analysis' detector, once the low plateau
		// has lasted 5 s; the at-cap episode spans the burst and the
		// baseline, since the ceiling drops with the credit.
		{seq: "cliff.seq", ceiling: &Ceiling{Name: "azure:P10", IOPS: 500, BurstIOPS: 3500, BurstSeconds: 10, CreditStartPct: 100},
			findings: []string{"sdb burst  @1+0", "sdb cap start @0", "sdb cliff  @10+10"}},
		{seq: "atcap.seq", ceiling: &Ceiling{Name: "test:500", IOPS: 500}, findings: []string{"vdc cap start @1", "vdc cap end @1+4"}},
	}
	for _, tt := range tests {
		t.Run(tt.seq, func(t *testing.T) {
			got, want, recs := replay(t, tt.seq, Config{Ceiling: tt.ceiling, Devices: tt.only})
			for n := 1; n <= len(want); n++ {
				for dev, w := range want[n] {
					if tt.only != nil && !contains(tt.only, dev) {
						continue
					}
					if got[n][dev] != w {
						t.Errorf("interval %d, %s: state %q, want %q", n, dev, got[n][dev], w)
					}
				}
			}
			f := findings(recs)
			if strings.Join(f, "\n") != strings.Join(tt.findings, "\n") {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(f, "\n"), strings.Join(tt.findings, "\n"))
			}
		})
	}
}
