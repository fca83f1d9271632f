package result

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/units"
)

// goodRecord is one result with a figure of every kind, each a value no
// other field has, so a test can replace it in the encoded line.
func goodRecord(t *testing.T) string {
	t.Helper()
	p := 4.5
	r := Result{RunID: "r1", Suite: "quick", Index: 1, Repeat: 1, Status: "ok",
		Test:   TestSpec{Name: "randread-4k", RW: "randread", BlockSize: 4096, IODepth: 8, NumJobs: 1, RuntimeS: 20},
		Target: Target{Kind: "dir", Path: "/mnt", Device: "vdb", Labels: map[string]string{"team": "storage"}},
		Start:  time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 1, 0, 0, 20, 0, time.UTC),
		Read: &DirResult{IOPS: 12345.5, BWBytes: 50566144, IOBytes: 1011322880, TotalIOs: 246905, RuntimeMs: 20001,
			Lat: Latency{N: 246905, MinNs: 101, MeanNs: 647.5, MaxNs: 99991, P50Ns: 601, P99Ns: 2003}, LatKind: "lat", TotalLatMeanNs: 648.5},
		FioSeries: []FioSample{{T: 1, ReadIOPS: 12001.5, ReadBWBytes: 49158144, ReadLatMeanNs: 650.5}},
		Devices: []DeviceSeries{{Device: "vdb", Role: "direct", Samples: []DeviceSample{{T: -1, ReadIOPS: 11999.5, ReadBWBytes: 49150000,
			ReadAwaitMs: 0.75, QueueSize: 7.5, UtilPct: 42.5, InFlight: 8}}}},
		System:   []SystemSample{{T: 1, IowaitPct: 3.25, CPUBusyPct: 12.25, DirtyBytes: 4096}},
		Findings: []Finding{{Kind: "stall", Code: "stall", Severity: "warn", Summary: "s", StartS: &p, Evidence: map[string]float64{"slope": -0.5, "measured_iops": 12345.5}}},
	}
	b, err := Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Issue 34.3: a record that carries a figure no measurement gives is
// refused, naming the field; a figure in range, a sample taken in the
// ramp (negative time) and a negative slope in evidence are read.
func TestRecordFigures(t *testing.T) {
	good := goodRecord(t)
	if _, err := NewDecoder(strings.NewReader(good+"\n"), "r.ndjson", Formats{}).ReadAll(); err != nil {
		t.Fatalf("a good record: %v", err)
	}
	for _, c := range []struct {
		name, from, to, field string
	}{
		{"iops 1e308 (printed as a wrapped integer)", `"iops":12345.5`, `"iops":1e308`, "read.iops"},
		{"iops -1 (dropped from the verdict)", `"iops":12345.5`, `"iops":-1`, "read.iops"},
		{"bandwidth 1e308", `"bw_bytes":50566144`, `"bw_bytes":1e308`, "read.bw_bytes"},
		{"a negative latency", `"p99_ns":2003`, `"p99_ns":-2003`, "read.lat.p99_ns"},
		{"a latency of 3e300 ns", `"mean_ns":647.5`, `"mean_ns":3e300`, "read.lat.mean_ns"},
		{"a negative IO count", `"total_ios":246905`, `"total_ios":-246905`, "read.total_ios"},
		{"a negative runtime", `"runtime_ms":20001`, `"runtime_ms":-20001`, "read.runtime_ms"},
		{"an iodepth of -8", `"iodepth":8`, `"iodepth":-8`, "test.iodepth"},
		{"a series rate of 1e308", `"read_iops":12001.5`, `"read_iops":1e308`, "fio_series[0].read_iops"},
		{"a device util of 1e308 %", `"util_pct":42.5`, `"util_pct":1e308`, "devices[0].samples[0].util_pct"},
		{"a queue of 1e300", `"aqu_sz":7.5`, `"aqu_sz":1e300`, "devices[0].samples[0].aqu_sz"},
		{"iowait of -5 %", `"iowait_pct":3.25`, `"iowait_pct":-5`, "system[0].iowait_pct"},
		{"an evidence figure of 1e300", `"measured_iops":12345.5`, `"measured_iops":1e300`, "findings[0].evidence[measured_iops]"},
		{"a negative measured rate in evidence", `"measured_iops":12345.5`, `"measured_iops":-1`, "findings[0].evidence[measured_iops]"},
		{"a p99 of 1e308 (held at the max before)", `"p99_ns":2003`, `"p99_ns":1e308`, "read.lat.p99_ns"},
		{"a finding's start of 1e300 s", `"start_s":4.5`, `"start_s":1e300`, "findings[0].start_s"},
		// Past what the integer field holds: JSON's own error, once
		// passed over as a line that is no record.
		{"io_bytes of 1e19 (past int64)", `"io_bytes":1011322880`, `"io_bytes":1e19`, "read.io_bytes"},
		{"an IO count of 1e20 (past uint64)", `"n":246905`, `"n":1e20`, "read.lat.n"},
		{"an IO count of -1 (unsigned)", `"n":246905`, `"n":-1`, "read.lat.n"},
		{"an iodepth of 1e300", `"iodepth":8`, `"iodepth":1e300`, "test.iodepth"},
	} {
		bad := strings.Replace(good, c.from, c.to, 1)
		if bad == good {
			t.Fatalf("%s: %s not in the record", c.name, c.from)
		}
		// NDJSON after a good record, a JSON array, and the record alone:
		// each read stops at it, and says which field.
		for _, in := range []string{good + "\n" + bad + "\n" + good + "\n", "[" + good + "," + bad + "]"} {
			d := NewDecoder(strings.NewReader(in), "r.ndjson", Formats{})
			skipped := 0
			d.Skipped = func(*DecodeError) { skipped++ }
			_, err := d.ReadAll()
			var fe *units.FigureError
			if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), c.field) || hint.Of(err) == "" {
				t.Errorf("%s: read gave %v (hint %q), want a refusal naming %s", c.name, err, hint.Of(err), c.field)
			}
			if skipped > 0 {
				t.Errorf("%s: the record was passed over, not refused", c.name)
			}
		}
		if _, err := Unmarshal([]byte(bad)); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: Unmarshal gave %v, want a refusal naming %s", c.name, err, c.field)
		}
	}
}

// A watch log with a figure no device gives (util +Inf% on main: 1e308
// summed) is refused, naming the field.
func TestWatchFigures(t *testing.T) {
	start := `{"schema":"iolens.watch/v1","type":"start","time":"2026-01-01T00:00:00Z","t_s":0,"start":{"interval_s":1,"devices":[{"name":"vdb","maj_min":"252:16","parallel":true}]}}`
	sample := `{"schema":"iolens.watch/v1","type":"sample","time":"2026-01-01T00:00:01Z","t_s":1,"devices":[{"device":"vdb","state":"busy","t_s":1,"r_s":100.5,"w_s":0,"r_bytes_s":411648,"w_bytes_s":0,"r_await_ms":0.5,"w_await_ms":0,"aqu_sz":1,"rareq_bytes":4096,"wareq_bytes":0,"util_pct":42.5,"in_flight":1}],"system":{"t_s":1,"iowait_pct":1,"cpu_busy_pct":2,"dirty_bytes":0,"writeback_bytes":0,"other_util_pct":0},"io_pressure_pct":-1}`
	if _, err := NewDecoder(strings.NewReader(start+"\n"+sample+"\n"), "w.ndjson", Formats{}).ReadAll(); err != nil {
		t.Fatalf("a good watch log (io pressure -1: no PSI): %v", err)
	}
	for _, c := range []struct{ from, to, field string }{
		{`"util_pct":42.5`, `"util_pct":1e308`, "devices[0].util_pct"},
		{`"r_s":100.5`, `"r_s":-100.5`, "devices[0].r_s"},
		{`"io_pressure_pct":-1`, `"io_pressure_pct":-7`, "io_pressure_pct"},
		{`"iowait_pct":1`, `"iowait_pct":1e308`, "system.iowait_pct"},
		{`"interval_s":1`, `"interval_s":-1`, "start.interval_s"},
		{`"in_flight":1`, `"in_flight":2e19`, "devices.in_flight"}, // past uint64
	} {
		in := strings.Replace(start+"\n"+sample+"\n", c.from, c.to, 1)
		_, err := NewDecoder(strings.NewReader(in), "w.ndjson", Formats{}).ReadAll()
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: read gave %v, want a refusal naming %s", c.to, err, c.field)
		}
	}
}

// Results converted from another format (fio's, read by the fio package)
// pass the same check.
func TestForeignFigures(t *testing.T) {
	fio := func(iops float64) Formats {
		return Formats{Fio: func(io.Reader, string) ([]Result, error) {
			return []Result{{Schema: Schema, Test: TestSpec{Name: "job1"}, Status: "ok", Read: &DirResult{IOPS: iops}}}, nil
		}}
	}
	if _, err := NewDecoder(strings.NewReader("fio-3.33\n{}"), "f.json", fio(100)).ReadAll(); err != nil {
		t.Fatalf("a good conversion: %v", err)
	}
	_, err := NewDecoder(strings.NewReader("fio-3.33\n{}"), "f.json", fio(-1)).ReadAll()
	if err == nil || !strings.Contains(err.Error(), "read.iops") || !strings.Contains(err.Error(), "job1") {
		t.Errorf("a conversion with iops -1 gave %v", err)
	}
}

// The histogram's count is a figure too.
func TestHistogramCountFigure(t *testing.T) {
	good := goodRecord(t)
	bad := strings.Replace(good, `"hist":{}`, `"hist":{"1000":18446744073709551615}`, 1)
	if bad == good {
		t.Fatal("no hist in the record")
	}
	if _, err := Unmarshal([]byte(bad)); err == nil || !strings.Contains(err.Error(), "read.hist.count") {
		t.Errorf("a histogram of 2^64-1 samples gave %v", err)
	}
	var buf bytes.Buffer
	buf.WriteString(good)
	if _, err := Unmarshal(buf.Bytes()); err != nil {
		t.Error(err)
	}
}

// Issue 34.6: a line break in a record's text (its run id, names, labels,
// findings) reads as a space, so that no report line can be forged from
// a file or the history; the other characters are kept, and fio's own
// messages keep their lines.
func TestRecordTextOneLine(t *testing.T) {
	good := goodRecord(t)
	bad := strings.NewReplacer(`"run_id":"r1"`, `"run_id":"r1\nFORGED\u001b[2J"`, `"team":"storage"`, `"team\r\nFORGED":"a\u2028FORGED"`,
		`"summary":"s"`, `"summary":"s\u0085FORGED","detail":"d\fFORGED"`, `"name":"randread-4k"`, `"name":"randread-4k\u000bFORGED"`,
		`"status":"ok"`, `"status":"ok","fio_stderr":"line 1\nline 2\n","error":"e\nFORGED"`).Replace(good)
	r, err := Unmarshal([]byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	f := r.Findings[0]
	for _, s := range []string{r.RunID, r.Test.Name, f.Summary, f.Detail, r.Error, r.Target.Labels["team  FORGED"]} {
		if strings.ContainsAny(s, "\n\r\v\f\u0085\u2028") || !strings.Contains(s, " FORGED") {
			t.Errorf("%q: want its line breaks as spaces", s)
		}
	}
	if len(r.Target.Labels) != 1 {
		t.Errorf("labels %q", r.Target.Labels)
	}
	if r.RunID != "r1 FORGED\x1b[2J" {
		t.Errorf("run id %q: only line breaks change", r.RunID)
	}
	if r.FioStderr != "line 1\nline 2\n" {
		t.Errorf("fio's stderr %q lost its lines", r.FioStderr)
	}
	// A watch log's names too.
	in := `{"schema":"iolens.watch/v1","type":"start","time":"2026-01-01T00:00:00Z","t_s":0,"host":"n\nFORGED","start":{"interval_s":1,"devices":[{"name":"vdb","maj_min":"252:16","parallel":true}]}}` + "\n" +
		`{"schema":"iolens.watch/v1","type":"sample","time":"2026-01-01T00:00:01Z","t_s":1,"devices":[{"device":"vdb","state":"ok\nFORGED","t_s":1,"r_s":1,"w_s":0,"r_bytes_s":4096,"w_bytes_s":0,"r_await_ms":0.5,"w_await_ms":0,"aqu_sz":1,"rareq_bytes":4096,"wareq_bytes":0,"util_pct":1,"in_flight":0}]}` + "\n"
	rs, err := NewDecoder(strings.NewReader(in), "w.ndjson", Formats{}).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if h := rs[0].Host.Hostname; h != "n FORGED" {
		t.Errorf("watch host %q", h)
	}
}
