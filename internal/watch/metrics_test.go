package watch

import (
	"math"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// get gathers reg and returns the value of name{device=vdc,node=node-1}
// with the other labels given (k, v pairs).
func get(t *testing.T, reg *prometheus.Registry, name string, kv ...string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"device": "vdc", "node": "node-1"}
	for i := 0; i+1 < len(kv); i += 2 {
		want[kv[i]] = kv[i+1]
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue metric
				}
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s%v", name, want)
	return 0
}

func sampleAt(t float64, state string, d result.DeviceSample) result.WatchRecord {
	return result.WatchRecord{Type: result.WatchTypeSample, T: t, Devices: []result.WatchDevice{{Device: "vdc", State: state, DeviceSample: d}}}
}

// A workload that writes 1000 IOPS for 3 s of every 15 and idles the
// rest: a Prometheus scraping every 15 s must see 200 IOPS on average,
// whichever second it scrapes at. A gauge of the last second shows 0 or
// 1000; the counter's increase between two scrapes is every IO.
func TestMetricsCountersAtAnyScrapeInterval(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, "node-1")
	m.Observe(result.WatchRecord{Type: result.WatchTypeStart})
	var scrapes []float64 // counter value every 15 s
	for s := 1; s <= 60; s++ {
		iops := 0.0
		if s%15 >= 3 && s%15 < 6 {
			iops = 1000
		}
		m.Observe(sampleAt(float64(s), StateOK, result.DeviceSample{WriteIOPS: iops, WriteBWBytes: iops * 4096, WriteAwaitMs: 2, UtilPct: iops / 20, QueueSize: iops / 500}))
		if s%15 == 0 {
			scrapes = append(scrapes, get(t, reg, "iolens_watch_device_io_operations_total", "op", "write"))
		}
	}
	for i := 1; i < len(scrapes); i++ {
		if rate := (scrapes[i] - scrapes[i-1]) / 15; rate != 200 {
			t.Errorf("rate between scrapes %d and %d: %v IOPS, want 200", i-1, i, rate)
		}
	}
	// By hand, over the 60 s: 12 active seconds of 1000 writes of 4 KiB,
	// each waiting 2 ms; busy half of each active second (util 50%);
	// aqu-sz 2 during them.
	for name, want := range map[string]float64{
		"iolens_watch_device_bytes_total":           12000 * 4096,
		"iolens_watch_device_io_wait_seconds_total": 12000 * 0.002,
		"iolens_watch_device_busy_seconds_total":    12 * 0.5,
		"iolens_watch_device_queue_seconds_total":   12 * 2,
	} {
		kv := []string{}
		if strings.Contains(name, "bytes") || strings.Contains(name, "wait") {
			kv = []string{"op", "write"}
		}
		if got := get(t, reg, name, kv...); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := get(t, reg, "iolens_watch_device_io_operations_total", "op", "read"); got != 0 {
		t.Errorf("reads %v", got)
	}
}

// Intervals are taken from the records' times, not assumed: 0.5 s at
// 100 IOPS is 50 IOs, 2 s at 100 IOPS 200.
func TestMetricsUseRecordIntervals(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, "node-1")
	m.Observe(result.WatchRecord{Type: result.WatchTypeStart, T: 0})
	m.Observe(sampleAt(0.5, StateOK, result.DeviceSample{ReadIOPS: 100, ReadBWBytes: 100 * 512}))
	m.Observe(sampleAt(2.5, StateOK, result.DeviceSample{ReadIOPS: 100, ReadBWBytes: 100 * 512}))
	if got := get(t, reg, "iolens_watch_device_io_operations_total", "op", "read"); got != 250 {
		t.Errorf("reads %v, want 250", got)
	}
	if got := get(t, reg, "iolens_watch_device_bytes_total", "op", "read"); got != 250*512 {
		t.Errorf("bytes %v, want %v", got, 250*512)
	}
}

// Only what is a level now is a gauge: every rate is a counter.
func TestMetricsTypes(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, "node-1")
	m.Expect("vdc", &Ceiling{Name: "azure:P10", IOPS: 500, BWBytes: 100e6, BurstIOPS: 3500, BurstBWBytes: 170e6, BurstSeconds: 1800})
	pct, left := 50.0, 100.0
	m.Observe(result.WatchRecord{Type: result.WatchTypeStart})
	m.Observe(result.WatchRecord{Type: result.WatchTypeSample, T: 1, System: &result.SystemSample{IowaitPct: 10}, IOPressurePct: &pct,
		Devices: []result.WatchDevice{{Device: "vdc", State: StateAtCap, BurstCreditPct: &pct, BurstLeftS: &left, DeviceSample: result.DeviceSample{ReadIOPS: 1}}},
		Top:     []result.WatchCgroup{{Device: "vdc", Cgroup: "/a", ReadBWBytes: 1}}})
	m.Observe(result.WatchRecord{Type: result.WatchTypeFinding, T: 1, Finding: &result.WatchFinding{Device: "vdc", Finding: result.Finding{Kind: "cap"}}})
	gauges := map[string]bool{
		"iolens_watch_device_state": true, "iolens_watch_device_state_code": true, "iolens_watch_device_in_flight": true,
		"iolens_watch_device_burst_credit_ratio": true, "iolens_watch_device_burst_remaining_seconds": true,
		"iolens_watch_device_expected_iops": true, "iolens_watch_device_expected_bytes_per_second": true,
		"iolens_watch_device_expected_info": true, "iolens_watch_host_memory_bytes": true,
		// A ranking of the heaviest cgroups now (see its help).
		"iolens_watch_cgroup_bytes_per_second": true,
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		switch f.GetType() {
		case dto.MetricType_GAUGE:
			if !gauges[f.GetName()] {
				t.Errorf("%s is a gauge; rates are counters that rate() reads at any scrape interval", f.GetName())
			}
		case dto.MetricType_COUNTER:
			if !strings.HasSuffix(f.GetName(), "_total") {
				t.Errorf("counter %s does not end in _total", f.GetName())
			}
		}
		for _, mm := range f.GetMetric() {
			for _, l := range mm.GetLabel() {
				if strings.ContainsAny(l.GetValue(), " \t") {
					t.Errorf("%s{%s=%q}: label values are single words", f.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
	if v := get(t, reg, "iolens_watch_device_state", "state", "at_cap"); v != 1 {
		t.Errorf(`state{state="at_cap"} = %v`, v)
	}
	if v := get(t, reg, "iolens_watch_device_expected_iops", "limit", "burst", "disk", "azure:P10"); v != 3500 {
		t.Errorf("burst IOPS %v", v)
	}
	if v := get(t, reg, "iolens_watch_device_expected_info", "disk", "azure:P10"); v != 1 {
		t.Errorf("expected info %v", v)
	}
	if v := get(t, reg, "iolens_watch_device_burst_remaining_seconds", "disk", "azure:P10"); v != 100 {
		t.Errorf("burst left %v", v)
	}
}

// An old log's "at cap" still lands on at_cap.
func TestStateLabel(t *testing.T) {
	for in, want := range map[string]string{"at cap": "at_cap", StateAtCap: "at_cap", StateStalled: "stalled"} {
		if got := StateLabel(in); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}

func TestMetricsStall(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, "node-1")
	m.Observe(result.WatchRecord{Type: result.WatchTypeStart})
	m.Observe(sampleAt(1, StateOK, result.DeviceSample{}))
	if v := get(t, reg, "iolens_watch_device_state", "state", "stalled"); v != 0 {
		t.Errorf("stalled = %v before a stall", v)
	}
	for i := 1; i <= 3; i++ {
		m.Observe(sampleAt(1+0.5*float64(i), StateStalled, result.DeviceSample{}))
	}
	if v := get(t, reg, "iolens_watch_device_state", "state", "stalled"); v != 1 {
		t.Errorf("stalled = %v during a stall", v)
	}
	if v := get(t, reg, "iolens_watch_device_state_seconds_total", "state", "stalled"); v != 1.5 {
		t.Errorf("stalled seconds = %v, want 1.5", v)
	}
	if v := get(t, reg, "iolens_watch_device_state_seconds_total", "state", "ok"); v != 1 {
		t.Errorf("ok seconds = %v, want 1", v)
	}
	m.Observe(sampleAt(3, StateBusy, result.DeviceSample{}))
	if v := get(t, reg, "iolens_watch_device_state", "state", "stalled"); v != 0 {
		t.Errorf("stalled = %v after the stall", v)
	}
	if v := get(t, reg, "iolens_watch_device_state_code"); v != 1 {
		t.Errorf("state code = %v, want 1 (busy)", v)
	}
}
