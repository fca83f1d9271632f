package watch

import (
	"testing"

	"github.com/iolens/iolens/internal/result"
	"github.com/prometheus/client_golang/prometheus"
)

// value gathers reg and returns the named metric's value on device vdc.
func value(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			dev, node := "", ""
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "device":
					dev = l.GetValue()
				case "node":
					node = l.GetValue()
				}
			}
			if dev != "vdc" || node != "node-1" {
				continue
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s{device=vdc,node=node-1}", name)
	return 0
}

func TestMetricsStall(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, "node-1")
	row := func(state string) result.WatchRecord {
		return result.WatchRecord{Type: result.WatchTypeSample, Devices: []result.WatchDevice{{Device: "vdc", State: state}}}
	}
	m.Observe(row(StateOK), "", 1)
	if v := value(t, reg, "iolens_watch_device_stall_active"); v != 0 {
		t.Errorf("stall gauge = %v before a stall", v)
	}
	for i := 0; i < 3; i++ {
		m.Observe(row(StateStalled), "", 0.5)
	}
	if v := value(t, reg, "iolens_watch_device_stall_active"); v != 1 {
		t.Errorf("stall gauge = %v during a stall", v)
	}
	if v := value(t, reg, "iolens_watch_device_stall_seconds_total"); v != 1.5 {
		t.Errorf("stall seconds = %v, want 1.5", v)
	}
	m.Observe(row(StateBusy), "", 0.5)
	if v := value(t, reg, "iolens_watch_device_stall_active"); v != 0 {
		t.Errorf("stall gauge = %v after the stall", v)
	}
	if v := value(t, reg, "iolens_watch_device_state_code"); v != 1 {
		t.Errorf("state code = %v, want 1 (busy)", v)
	}
}
