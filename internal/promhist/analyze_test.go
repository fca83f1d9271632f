package promhist

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/promhist/promql"
	"github.com/iolens/iolens/internal/promhist/promtest"
	"github.com/iolens/iolens/internal/result"
)

func findingsOf(a *Analysis, kind string) []Finding {
	var out []Finding
	for _, n := range a.Nodes {
		for _, f := range n.Findings {
			if f.Kind == kind {
				out = append(out, f)
			}
		}
	}
	return out
}

func logVerdict(t *testing.T, a *Analysis) {
	t.Helper()
	var b strings.Builder
	Text(&b, a, time.UTC)
	t.Log("\n" + b.String())
}

// TestScenario holds the analysis of a synthetic history to what was
// written into it: the stall's times, the flat ceiling's level, the gap,
// and nothing from the counter reset.
func TestScenario(t *testing.T) {
	start := date("2026-03-01T14:00:00Z")
	sc := promtest.DefaultScenario
	s := sc.Synth(start, 600)
	a, _, err := analyzeFake(t, s.Build(), Options{From: start, To: start.Add(599 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	logVerdict(t, a)
	if a.StepS != 1 || a.ScrapeIntervalS != 1 {
		t.Errorf("step %g s, scrape interval %g s; want 1 and 1", a.StepS, a.ScrapeIntervalS)
	}
	checkScenario(t, a, s, sc, 0)
	n := a.Nodes[0]
	// Intervals: the grid sits half a second after the scrapes, so the
	// sample at To is the first of the next instant: 598 intervals, less
	// the 61 the gap spans (the one across it is not judged).
	if want := 598 - (sc.GapTo - sc.GapFrom + 1); n.Intervals != want {
		t.Errorf("%d intervals judged, want %d", n.Intervals, want)
	}
}

// TestCoarserStep: a server that refuses range queries finer than 4 s
// (for their size) gets them again at 2 s, then 4 s; the notes and the
// progress say so, and the stall is still found, to within the step.
func TestCoarserStep(t *testing.T) {
	start := date("2026-03-01T14:00:00Z")
	sc := promtest.DefaultScenario
	s := sc.Synth(start, 600)
	f, srv := promtest.NewFake(t, s.Build())
	f.Hook = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/v1/query_range" {
			return false
		}
		if step, _ := strconv.ParseFloat(r.Form.Get("step"), 64); step < 4 {
			w.WriteHeader(422)
			w.Write([]byte(`{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory in query execution"}`))
			return true
		}
		return false
	}
	var told []string
	a, err := Analyze(t.Context(), clientOf(t, srv.URL, Auth{}, Limits{}), Options{From: start, To: start.Add(599 * time.Second),
		Progress: func(m string) { told = append(told, m) }})
	if err != nil {
		t.Fatal(err)
	}
	logVerdict(t, a)
	if a.StepS != 4 || len(told) != 2 || len(a.Notes) != 2 || !strings.Contains(a.Notes[1], "analysed again at step 4s") {
		t.Fatalf("step %g s, progress %q, notes %q: want 4 s, said twice", a.StepS, told, a.Notes)
	}
	st := findingsOf(a, result.KindStall)
	if len(st) != 1 || st[0].Start.Sub(s.At(sc.StallFrom)).Abs() > 4*time.Second || st[0].End.Sub(s.At(sc.StallTo)).Abs() > 4*time.Second {
		t.Errorf("stalls %+v, want one from %s to %s within 4 s", st, s.At(sc.StallFrom), s.At(sc.StallTo))
	}
	// A server that refuses every step ends it, with the hint.
	f.Hook = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/v1/query_range" {
			return false
		}
		w.WriteHeader(422)
		w.Write([]byte(`{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory in query execution"}`))
		return true
	}
	_, err = Analyze(t.Context(), clientOf(t, srv.URL, Auth{}, Limits{}), Options{From: start, To: start.Add(599 * time.Second), MaxRetries: 2})
	var se *SamplesError
	if !errors.As(err, &se) || hint.Of(err) == "" {
		t.Fatalf("error %v, want a SamplesError with its hint", err)
	}
}

// TestSelectorsAndSeries: what the selector picks, and the errors of a
// selector that picks nothing, too much, or one device twice.
func TestSelectorsAndSeries(t *testing.T) {
	start := date("2026-03-01T14:00:00Z")
	mk := func(inst string, devs ...string) []*promtest.Series {
		s := promtest.DefaultScenario.Synth(start, 120)
		s.Instance, s.Devices = inst, devs
		return s.Build()
	}
	two := append(mk("node-1:9100", "sda", "sdb"), mk("node-2:9100", "sda")...)
	o := Options{From: start, To: start.Add(119 * time.Second)}

	a, f, err := analyzeFake(t, two, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Nodes) != 2 || strings.Join(a.Nodes[0].Devices, ",") != "sda,sdb" || strings.Join(a.Nodes[1].Devices, ",") != "sda" {
		t.Fatalf("nodes %+v", a.Nodes)
	}
	for _, q := range f.Queries() {
		// One sum an instance needs no device: the busy time of all its disks.
		if strings.Contains(q, "query_range") && strings.Contains(q, "node_disk") && !strings.Contains(q, `device=~"sda|sdb"`) && !strings.Contains(q, "sum by (instance) (node_disk_io_time_seconds_total") {
			t.Errorf("a device query without the devices found: %s", q)
		}
	}

	o2 := o
	o2.Selector = promql.Selector{{Name: "instance", Op: "=", Value: "node-2:9100"}}
	o2.Devices = []string{"sda"}
	if a, _, err = analyzeFake(t, two, o2); err != nil || len(a.Nodes) != 1 || a.Nodes[0].Instance != "node-2:9100" {
		t.Fatalf("one node: %+v %v", a, err)
	}

	o3 := o
	o3.Selector = promql.Selector{{Name: "instance", Op: "=", Value: "node-9:9100"}}
	var nd *NoDataError
	if _, _, err = analyzeFake(t, two, o3); !errors.As(err, &nd) || hint.Of(err) == "" {
		t.Errorf("no such node: %v, want a NoDataError", err)
	}

	o4 := o
	o4.MaxSeries = 2
	var tm *TooManySeriesError
	if _, _, err = analyzeFake(t, two, o4); !errors.As(err, &tm) || !strings.Contains(hint.Of(err), "--instance") {
		t.Errorf("three devices, two allowed: %v, want a TooManySeriesError", err)
	}

	// Two jobs scraping one exporter: every series twice.
	dup := mk("node-1:9100", "sda")
	for _, s := range mk("node-1:9100", "sda") {
		s.Labels["job"] = "node-again"
		dup = append(dup, s)
	}
	var de *DuplicateSeriesError
	if _, _, err = analyzeFake(t, dup, o); !errors.As(err, &de) || !strings.Contains(err.Error(), "differ in job") {
		t.Errorf("a device twice: %v, want a DuplicateSeriesError naming job", err)
	}
}

// TestWarningsAndRange: Prometheus's warnings (a partial answer) become
// notes, once each; an empty range and a range too long for the bound
// are dealt with before any query.
func TestWarningsAndRange(t *testing.T) {
	start := date("2026-03-01T14:00:00Z")
	s := promtest.DefaultScenario.Synth(start, 120)
	f, srv := promtest.NewFake(t, s.Build())
	inner := f.ServeHTTP
	f.Hook = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/v1/query_range" {
			return false
		}
		rec := httptest.NewRecorder()
		f.Hook = nil
		inner(rec, r)
		f.Hook = nil
		var body map[string]any
		json.Unmarshal(rec.Body.Bytes(), &body)
		body["warnings"] = []string{"remote store east is down: partial response"}
		json.NewEncoder(w).Encode(body)
		return true
	}
	c := clientOf(t, srv.URL, Auth{}, Limits{})
	a, err := Analyze(t.Context(), c, Options{From: start, To: start.Add(119 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.Join(a.Notes, "\n"), "partial response"); n != 1 {
		t.Errorf("notes %q: want the warning once", a.Notes)
	}
	if _, err := Analyze(t.Context(), c, Options{From: start, To: start}); err == nil || hint.Of(err) == "" {
		t.Errorf("an empty range: %v", err)
	}
	var qb *QueryBudgetError
	if _, err = Analyze(t.Context(), c, Options{From: start, To: start.Add(119 * time.Second), ChunkSteps: 10, MaxQueries: 30}); !errors.As(err, &qb) {
		t.Errorf("119 s at 1 s steps in at most 30 queries: %v, want a QueryBudgetError", err)
	}
}

// TestOtherDiskExplainsTheWait: sdb's workload pauses for 20 s while the
// host waits on IO (iowait 30%, IO pressure 60%). With the node's other
// disk, sdc, idle, nothing but sdb (or a throttle above it) can be
// waited on: a stall. With sdc busy 95% of the time, the wait is sdc's,
// and sdb only paused, whether sdc is analysed too or not.
func TestOtherDiskExplainsTheWait(t *testing.T) {
	start := date("2026-03-01T14:00:00Z")
	const pauseFrom, pauseTo = 60, 80
	mk := func(sdcBusy float64) []*promtest.Series {
		s := &promtest.Synth{Instance: "node-1:9100", Start: start, Step: time.Second, N: 120, Devices: []string{"sdb", "sdc"}, CPUs: 2}
		paused := func(i int) bool { return i > pauseFrom && i <= pauseTo }
		s.Dev = func(dev string, i int) promtest.Rates {
			switch {
			case dev == "sdc" && paused(i):
				return promtest.Rates{WriteIOPS: 400, WriteBytes: 400 * 65536, Util: sdcBusy, Queue: 2, WriteAwaitMs: 5}
			case dev == "sdc", paused(i):
				return promtest.Rates{}
			}
			return ownPace(i)
		}
		s.Host = waiting(paused, 0.3, 0.6)
		return s.Build()
	}
	stalls := func(a *Analysis) (n int) {
		for _, f := range a.Nodes[0].Findings {
			if f.Device == "sdb" && f.Kind == result.KindStall {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		name    string
		sdcBusy float64
		devices []string
		want    int
	}{
		{"other disk idle", 0, []string{"sdb"}, 1},
		{"other disk busy, not analysed", 0.95, []string{"sdb"}, 0},
		{"other disk busy, analysed", 0.95, nil, 0},
	} {
		a, _, err := analyzeFake(t, mk(c.sdcBusy), Options{From: start, To: start.Add(119 * time.Second), Devices: c.devices})
		if err != nil {
			t.Fatal(err)
		}
		if got := stalls(a); got != c.want {
			logVerdict(t, a)
			t.Errorf("%s: %d stalls of sdb, want %d", c.name, got, c.want)
		}
	}
}

// TestStackedTwinIsNoOtherDisk: a volume of dm-0 on sdb, both analysed,
// their rates one and the same. sdb holds a flat 50 MB/s for 60 s with
// the host in iowait (30%) and the device 40% busy: a throttle above
// it. dm-0's busy time is sdb's own IO again, not another disk's that
// could explain the wait: the ceiling is found.
func TestStackedTwinIsNoOtherDisk(t *testing.T) {
	start := date("2026-03-01T14:00:00Z")
	s := &promtest.Synth{Instance: "node-1:9100", Start: start, Step: time.Second, N: 90, Devices: []string{"sdb", "dm-0"}, CPUs: 2}
	s.Dev = func(string, int) promtest.Rates {
		return promtest.Rates{WriteIOPS: 200, WriteBytes: 50e6, Util: 0.4, Queue: 1, WriteAwaitMs: 2}
	}
	s.Host = func(int) promtest.HostRates { return promtest.HostRates{Iowait: 0.3, PressureShare: 0.02} }
	a, f, err := analyzeFake(t, s.Build(), Options{From: start, To: start.Add(89 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	var sdb []Ceiling
	for _, c := range a.Nodes[0].Ceilings {
		if c.Device == "sdb" {
			sdb = append(sdb, c)
		}
	}
	if len(sdb) == 0 || math.Abs(sdb[0].BWBytes/50e6-1) > 0.02 {
		logVerdict(t, a)
		t.Errorf("sdb's ceilings: %+v, want one at 50 MB/s", sdb)
	}
	for _, q := range f.Queries() {
		if strings.Contains(q, "sum by (instance) (node_disk_io_time_seconds_total") && !strings.Contains(q, `device!~"dm-[0-9]+|md[0-9]+"`) {
			t.Errorf("the other disks' busy time counts stacked devices: %s", q)
		}
	}
}

// TestStackedDeviceHidesNoStall: sda's workload collapses with nothing in
// flight while the host waits on IO (iowait 30%), and the node's other
// volume, dm-0 on sdb, both analysed, keeps sdb 20% busy. dm-0's busy
// time is sdb's again: counted twice (40%) it would explain the whole
// wait; counted once (20%), 10 points are left that only sda can
// explain: a stall.
func TestStackedDeviceHidesNoStall(t *testing.T) {
	start := date("2026-03-01T14:00:00Z")
	const from, to = 60, 80
	s := &promtest.Synth{Instance: "node-1:9100", Start: start, Step: time.Second, N: 120, Devices: []string{"sda", "sdb", "dm-0"}, CPUs: 2}
	in := func(i int) bool { return i > from && i <= to }
	s.Dev = func(dev string, i int) promtest.Rates {
		switch {
		case dev != "sda":
			return promtest.Rates{WriteIOPS: 50, WriteBytes: 50 * 4096, Util: 0.2, Queue: 0.2, WriteAwaitMs: 4}
		case in(i):
			return promtest.Rates{}
		}
		return ownPace(i)
	}
	s.Host = waiting(in, 0.3, 0.02)
	a, _, err := analyzeFake(t, s.Build(), Options{From: start, To: start.Add(119 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range a.Nodes[0].Findings {
		if f.Device == "sda" && f.Kind == result.KindStall {
			n++
		}
	}
	if n != 1 {
		logVerdict(t, a)
		t.Errorf("%d stalls of sda, want 1", n)
	}
}

// ownPace is interval i of a workload of its own pace: 100 MB/s of
// writes, give or take 10%.
func ownPace(i int) promtest.Rates {
	w := 100e6 * (1 + 0.1*math.Sin(float64(i)/3))
	return promtest.Rates{WriteIOPS: w / 262144, WriteBytes: w, Util: 0.6, Queue: 2, WriteAwaitMs: 5}
}

// waiting is a host in iowait and IO pressure (shares of 1) in the
// intervals of when, and quiet (2% pressure) in the others.
func waiting(when func(int) bool, iowait, pressure float64) func(int) promtest.HostRates {
	return func(i int) promtest.HostRates {
		if when(i) {
			return promtest.HostRates{Iowait: iowait, PressureShare: pressure}
		}
		return promtest.HostRates{PressureShare: 0.02}
	}
}
