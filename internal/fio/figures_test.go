package fio

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// fixtureWith returns a real fio output with one replacement made.
func fixtureWith(t *testing.T, old, new string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/randread_4k_qd8.jsonplus.json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("fixture lacks %q", old)
	}
	return strings.Replace(string(b), old, new, 1)
}

// Job options fio never wrote (a NaN runtime, a negative depth) leave the
// spec's defaults, so that every record read can be written back as
// JSON. (A "runtime":"NaN" was read, then failed export.)
func TestJobOptionsOutOfRange(t *testing.T) {
	for _, tc := range []struct{ old, new string }{
		{`"runtime" : "3"`, `"runtime" : "NaN"`},
		{`"runtime" : "3"`, `"runtime" : "Inf"`},
		{`"runtime" : "3"`, `"runtime" : "-5"`},
		{`"runtime" : "3"`, `"runtime" : "1e400"`},
		{`"runtime" : "3"`, `"ramp_time" : "NaN"`},
		{`"iodepth" : "8"`, `"iodepth" : "-8"`},
	} {
		rs, err := ReadResults(strings.NewReader(fixtureWith(t, tc.old, tc.new)), "f.json")
		if err != nil {
			t.Errorf("%s: %v", tc.new, err)
			continue
		}
		for _, r := range rs {
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("%s: the record cannot be written: %v", tc.new, err)
			}
			if r.Test.RuntimeS != 0 && r.Test.RuntimeS != 3 || r.Test.IODepth < 1 {
				t.Errorf("%s: spec %+v", tc.new, r.Test)
			}
		}
	}
}

// Figures no device can produce are refused with the field named, not
// printed: iops 1e308 once showed as a negative count.
func TestFiguresOutOfRange(t *testing.T) {
	for _, tc := range []struct{ old, new, field string }{
		{`"iops" : 23412.862379`, `"iops" : 1e308`, "read.iops"},
		{`"iops" : 23412.862379`, `"iops" : -1`, "read.iops"},
		{`"iops" : 23412.862379`, `"iops" : nan`, ""},
		{`"bw_bytes" : 95899084`, `"bw_bytes" : 9223372036854775807`, "read.bw_bytes"},
		{`"runtime" : 3001`, `"runtime" : -3001`, "read.runtime"},
	} {
		_, err := ReadResults(strings.NewReader(fixtureWith(t, tc.old, tc.new)), "f.json")
		var fe *FigureError
		if tc.field == "" {
			// A bare nan becomes null: 0, a figure of no IO, not a fault.
			if err != nil {
				t.Errorf("%s: %v", tc.new, err)
			}
			continue
		}
		if !errors.As(err, &fe) || fe.Field != tc.field || fe.Hint() == "" {
			t.Errorf("%s: err = %v, want %s refused", tc.new, err, tc.field)
		}
	}
}

// Whatever a fio output holds, what ReadResults accepts can be written
// back: finite figures and a spec JSON can hold.
func FuzzReadResultsEncode(f *testing.F) {
	b, err := os.ReadFile("testdata/randread_4k_qd8.jsonplus.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add(strings.Replace(string(b), `"runtime" : "3"`, `"runtime" : "NaN"`, 1))
	f.Add(strings.Replace(string(b), `"iops" : 23412.862379`, `"iops" : 1e308`, 1))
	f.Add("{\n\"jobs\": [{\"jobname\": \"a\", \"job options\": {\"rw\": \"randrw\", \"rwmixwrite\": \"100\", \"runtime\": \"1e9\"}, \"read\": {\"iops\": 1, \"io_bytes\": 4096, \"total_ios\": 1}}]\n}\n")
	// The classes of issue 34 and 36: fio's nan in a figure, a depth fio
	// cannot run, a document on one line (jq -c).
	f.Add(strings.Replace(string(b), `"io_bytes" : 287793152,`, `"io_bytes" : nan,`, 1))
	f.Add(strings.Replace(string(b), `"iodepth" : "8"`, `"iodepth" : "-8"`, 1))
	f.Add(strings.Replace(string(b), `"mean" : `, `"mean" : -nan, "x" : `, 1))
	f.Add(`{"fio version":"fio-3.33","jobs":[{"jobname":"j","groupid":0,"error":0,"job options":{"rw":"write","bs":"4k"},"write":{"io_bytes":4096,"io_kbytes":nan,"bw_bytes":4096,"iops":nan,"runtime":1000,"total_ios":1,"lat_ns":{"min":1,"max":2,"mean":nan,"N":1}}}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		rs, err := ReadResults(strings.NewReader(in), "f.json")
		if err != nil {
			return
		}
		for _, r := range rs {
			if _, err := json.Marshal(r); err != nil {
				t.Fatalf("accepted a record that cannot be written: %v", err)
			}
			if r.Test.RWMixRead < 0 || r.Test.RWMixRead > 100 || r.Test.RuntimeS < 0 || r.Test.IODepth < 1 || r.Test.NumJobs < 1 {
				t.Fatalf("spec out of range: %+v", r.Test)
			}
			if r.Status == "ok" && !didIO(&r) {
				t.Fatalf("%s: status ok with no IO", r.Test.Name)
			}
			// A figure is a measurement or absent: never a nan read as
			// 0 beside a count that says otherwise.
			for _, name := range []string{"read", "write", "trim"} {
				if d := r.Dir(name); d != nil && d.TotalIOs > 0 && d.RuntimeMs > 0 && d.IOPS == 0 {
					t.Fatalf("%s: %d IOs in %d ms read as 0 IOPS", name, d.TotalIOs, d.RuntimeMs)
				}
			}
		}
	})
}
