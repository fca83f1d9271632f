package emulate

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

// FuzzReadEvents: an event log is the controller's, but on disk anyone
// with the directory could have written it: any input reads without
// panicking, into at most one event per line.
func FuzzReadEvents(f *testing.F) {
	good, _ := json.Marshal(Event{Time: time.Unix(1, 0), Event: "burst", ReadIOPS: 3500})
	for _, s := range []string{string(good) + "\n" + string(good) + "\n", string(good) + "\n{\"time\":", "{}\n[]\n", "\n\n", `{"read_iops":-1e308}` + "\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, _ := ReadEvents(bytes.NewReader(b))
		if len(evs) > bytes.Count(b, []byte("\n"))+1 {
			t.Fatalf("%d events from %d lines", len(evs), bytes.Count(b, []byte("\n"))+1)
		}
		_ = WriteEvents(io.Discard, evs)
	})
}

// FuzzDecodeStatus: whatever status.json holds, status either shows a
// whole model or none, and never panics drawing it (a bucket's credits
// without its size used to dereference nil).
func FuzzDecodeStatus(f *testing.F) {
	c, k, yes := 5.0, 10.0, true
	good, _ := json.Marshal(State{Limits: Limits{ReadIOPS: 500}, IOPSBursting: &yes, IOPSCredits: &c, IOPSBucket: &k})
	for _, s := range []string{string(good), `{"iops_credits":5}`, `{"bw_credits":1,"bw_bucket":2}`, `{"dirty_bytes":-1,"cache_bytes":1,"stalled":true}`, `null`, `[]`} {
		f.Add([]byte(s))
	}
	d := &Disk{Name: "d1", Dir: "/var/lib/iolens/emulate/d1", Mount: "/var/lib/iolens/emulate/d1/mnt"}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeStatus(b)
		if err != nil {
			return
		}
		for _, v := range []*float64{m.IOPSCredits, m.IOPSBucket, m.BWCredits, m.BWBucket, m.DirtyBytes, m.CacheBytes} {
			if v != nil && (*v < 0 || math.IsNaN(*v)) {
				t.Fatalf("a figure of %v", *v)
			}
		}
		WriteStatus(io.Discard, d, Status{Disk: d, Controller: "running", Model: m})
	})
}

// FuzzParseStat: /sys/block/DEV/stat as the kernel might write it, or
// not.
func FuzzParseStat(f *testing.F) {
	for _, s := range []string{
		"    1234        0    56789      100     4321        0    98765      200        0      300      300        0        0        0        0",
		"1 2 3 4 5 6", "a b c d e f g", "18446744073709551615 0 18446744073709551615 0 18446744073709551615 0 18446744073709551615", "-1 0 0 0 0 0 0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseStat(s)
		if err != nil {
			return
		}
		if len(strings.Fields(s)) < 7 {
			t.Fatalf("parsed %q of fewer than 7 fields into %+v", s, c)
		}
	})
}
