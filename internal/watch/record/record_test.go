package record

import (
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
)

func TestToResults(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	f := func(s float64) *float64 { return &s }
	sample := func(s float64, w float64) Record {
		return Record{Schema: Schema, Type: TypeSample, Time: at(s), T: s, Devices: []Device{{Device: "vdc", State: "ok",
			DeviceSample: result.DeviceSample{WriteBWBytes: w}}}, System: &result.SystemSample{IowaitPct: 1}}
	}
	recs := []Record{
		{Schema: Schema, Type: TypeStart, Time: t0, Host: "node1", Start: &Start{IntervalS: 1, Devices: []DeviceInfo{{Name: "vdc"}}, Expect: "azure:P4"}},
		sample(1, 100), sample(2, 0),
		{Schema: Schema, Type: TypeFinding, Time: at(2), T: 2, Finding: &Finding{Device: "vdc", Phase: "start",
			Finding: result.Finding{Kind: "stall", Severity: "fail", Summary: "stall started", StartS: f(1)}}},
		sample(3, 0),
		{Schema: Schema, Type: TypeFinding, Time: at(3), T: 3, Finding: &Finding{Device: "", Phase: "",
			Finding: result.Finding{Kind: "cliff", Severity: "warn", Summary: "cliff", StartS: f(0), DurationS: f(1)}}},
		// A second session in the same file.
		{Schema: Schema, Type: TypeStart, Time: at(10), Start: &Start{IntervalS: 1}},
		sample(1, 5),
	}
	rs, err := ToResults(recs, "w.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("got %d results, want 2", len(rs))
	}
	r := rs[0]
	if r.Schema != result.SchemaV1 || r.Suite != "watch" || r.Host.Hostname != "node1" || r.Target.Labels["expect"] != "azure:P4" {
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
	if _, err := ToResults([]Record{{Schema: "iolens.watch/v9"}}, "x"); err == nil {
		t.Error("a newer schema must be refused")
	}
}
