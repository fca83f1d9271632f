package result

import (
	"testing"
	"time"
)

func TestToResults(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	f := func(s float64) *float64 { return &s }
	sample := func(s float64, w float64) WatchRecord {
		return WatchRecord{Schema: WatchSchema, Type: WatchTypeSample, Time: at(s), T: s, Devices: []WatchDevice{{Device: "vdc", State: "ok",
			DeviceSample: DeviceSample{WriteBWBytes: w}}}, System: &SystemSample{IowaitPct: 1}}
	}
	recs := []WatchRecord{
		{Schema: WatchSchema, Type: WatchTypeStart, Time: t0, Host: "node1", Start: &WatchStart{IntervalS: 1, Devices: []WatchDeviceInfo{{Name: "vdc"}}, Expect: "azure:P4"}},
		sample(1, 100), sample(2, 0),
		{Schema: WatchSchema, Type: WatchTypeFinding, Time: at(2), T: 2, Finding: &WatchFinding{Device: "vdc", Phase: "start",
			Finding: Finding{Kind: "stall", Severity: "fail", Summary: "stall started", StartS: f(1)}}},
		sample(3, 0),
		{Schema: WatchSchema, Type: WatchTypeFinding, Time: at(3), T: 3, Finding: &WatchFinding{Device: "", Phase: "",
			Finding: Finding{Kind: "cliff", Severity: "warn", Summary: "cliff", StartS: f(0), DurationS: f(1)}}},
		// A second session in the same file.
		{Schema: WatchSchema, Type: WatchTypeStart, Time: at(10), Start: &WatchStart{IntervalS: 1}},
		sample(1, 5),
	}
	rs, err := watchResults(recs, "w.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("got %d results, want 2", len(rs))
	}
	r := rs[0]
	if r.Schema != Schema || r.Suite != "watch" || r.Host.Hostname != "node1" || r.Target.Labels["expect"] != "azure:P4" {
		t.Errorf("result header = %+v", r)
	}
	if len(r.Devices) != 1 || len(r.Devices[0].Samples) != 3 || r.Devices[0].Samples[0].WriteBWBytes != 100 || r.Devices[0].Samples[2].T != 3 {
		t.Errorf("device series = %+v", r.Devices)
	}
	if len(r.System) != 3 {
		t.Errorf("system series has %d samples", len(r.System))
	}
	// The stall never ended: it is reported open, lasting to the end of
	// the stream (t=1 to t=3 plus the last interval).
	if len(r.Findings) != 2 || r.Findings[0].Kind != "cliff" || r.Findings[1].Kind != "stall" || *r.Findings[1].DurationS != 3 {
		t.Errorf("findings = %+v", r.Findings)
	}
	if rs[1].Index != 2 || len(rs[1].Devices) != 1 {
		t.Errorf("second session = %+v", rs[1])
	}
	if _, err := watchResults([]WatchRecord{{Schema: "iolens.watch/v9"}}, "x"); err == nil {
		t.Error("a newer schema must be refused")
	}
}
