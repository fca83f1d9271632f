package headroom_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/headroom"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/promhist/promtest"
)

func fakeClient(t *testing.T, ss []*promtest.Series) (*promtest.Fake, *promhist.Client) {
	t.Helper()
	f, srv := promtest.NewFake(t, ss)
	c, err := promhist.NewClient(srv.URL, promhist.Auth{}, promhist.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

// TestFleetArithmetic: the fleet's figures from the fake server's
// answers (the generated history as Prometheus's lookback gives it).
func TestFleetArithmetic(t *testing.T) {
	f := fleet{start: time.Unix(1_790_000_000, 0), step: 15 * time.Second, n: 480}
	fk, c := fakeClient(t, f.series())
	o := f.options(t)
	o.ChunkSteps = 100 // several chunks: the state carries across them
	r, err := headroom.Run(t.Context(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	checkFleet(t, f, r)
	// One query per metric and chunk, for all devices at once.
	ranges := 0
	for _, q := range fk.Queries() {
		if strings.HasPrefix(q, "/api/v1/query_range ") {
			ranges++
			if strings.Contains(q, "device=") {
				t.Errorf("a query for one device: %s", q)
			}
		}
	}
	if want := 4*5 + 4; ranges != want {
		t.Errorf("%d range queries, want %d (4 queries x 5 chunks, and the 4 EBS counters once)", ranges, want)
	}
}

// TestRefusedChunk: a chunk Prometheus refuses for its size is asked
// again in halves, and the figures do not change.
func TestRefusedChunk(t *testing.T) {
	f := fleet{start: time.Unix(1_790_000_000, 0), step: 15 * time.Second, n: 480}
	fk, c := fakeClient(t, f.series())
	refusals := 0
	fk.Hook = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/v1/query_range" {
			return false
		}
		var start, end float64
		fmt.Sscan(r.Form.Get("start"), &start)
		fmt.Sscan(r.Form.Get("end"), &end)
		if end-start > 200*15 && r.Form.Get("step") == "15" {
			refusals++
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(422)
			fmt.Fprint(w, `{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory in query execution"}`)
			return true
		}
		return false
	}
	r, err := headroom.Run(t.Context(), c, f.options(t))
	if err != nil {
		t.Fatal(err)
	}
	if refusals == 0 {
		t.Fatal("nothing refused")
	}
	checkFleet(t, f, r)
	if !strings.Contains(strings.Join(r.Notes, "\n"), "refused") {
		t.Errorf("notes do not say so: %q", r.Notes)
	}
}

func TestErrors(t *testing.T) {
	f := fleet{start: time.Unix(1_790_000_000, 0), step: 15 * time.Second, n: 40}
	dup := f.series()
	// The same device scraped by a second job.
	for _, s := range f.series() {
		if s.Labels["device"] == "sdb" && s.Labels["instance"] == "node-1:9100" {
			s.Labels["job"] = "node-exporter"
			dup = append(dup, s)
		}
	}
	var cpuOnly []*promtest.Series
	for _, s := range f.series() {
		if !strings.HasPrefix(s.Labels["__name__"], "node_disk_") {
			cpuOnly = append(cpuOnly, s)
		}
	}
	for _, c := range []struct {
		name   string
		ss     []*promtest.Series
		match  string
		want   any
		inText string
	}{
		{"two series for one device", dup, "", new(*promhist.DuplicateSeriesError), "differ in job"},
		{"no node exporter", cpuOnly, "", new(*headroom.NoNodeExporterError), "deploy the node exporter"},
		{"a selector that matches nothing", f.series(), "node-9:9100", new(*promhist.NoDataError), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, cl := fakeClient(t, c.ss)
			o := f.options(t)
			if c.match != "" {
				o.Selector = o.Selector.With("instance", "=", c.match)
			}
			_, err := headroom.Run(t.Context(), cl, o)
			if err == nil {
				t.Fatal("no error")
			}
			switch w := c.want.(type) {
			case **promhist.DuplicateSeriesError:
				if !errors.As(err, w) {
					t.Fatalf("%T %v", err, err)
				}
			case **headroom.NoNodeExporterError:
				if !errors.As(err, w) {
					t.Fatalf("%T %v", err, err)
				}
			case **promhist.NoDataError:
				if !errors.As(err, w) {
					t.Fatalf("%T %v", err, err)
				}
			}
			if !strings.Contains(err.Error()+" "+hint.Of(err), c.inText) {
				t.Errorf("%v (%s) does not say %q", err, hint.Of(err), c.inText)
			}
		})
	}
}

func TestParseRule(t *testing.T) {
	cat := limits.MustDefault()
	for _, c := range []struct {
		in        string
		inst, dev string
		iops, bw  float64
		burstS    float64
		catalog   bool
		bad       bool
	}{
		{in: "sdb=azure:P10", dev: "sdb", iops: 500, bw: 100e6, burstS: 1800, catalog: true},
		{in: "/dev/nvme1n1=iops=3000,bw=125MB", dev: "nvme1n1", iops: 3000, bw: 125e6},
		{in: "node-1:9100/sdb=iops=500", inst: "node-1:9100", dev: "sdb", iops: 500},
		{in: "azure:P10", iops: 500, bw: 100e6, burstS: 1800, catalog: true},
		{in: "aws:gp3:iops=6000,throughput=250:100GiB", iops: 6000, bw: 250 << 20, catalog: true},
		{in: "iops=500,bw=100MB", iops: 500, bw: 100e6},
		{in: "sdb=", bad: true},
		{in: "sdb=azure:P99", bad: true},
		{in: "sd b=iops=5", bad: true},
		{in: "sdb=iops=-5", bad: true},
		{in: "/sdb=iops=5", bad: true},
	} {
		r, err := headroom.ParseRule(c.in, headroom.SourceExpect, cat)
		if c.bad {
			if err == nil {
				t.Errorf("%q: no error", c.in)
			} else if hint.Of(err) == "" {
				t.Errorf("%q: %v has no hint", c.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if r.Instance != c.inst || r.Device != c.dev || r.Cap.IOPS != c.iops || r.Cap.BWBytes != c.bw || r.Cap.BurstSeconds != c.burstS || (r.Cap.Disk != nil) != c.catalog {
			t.Errorf("%q: %+v %+v", c.in, r, r.Cap)
		}
	}
}

func TestParseMapping(t *testing.T) {
	cat := limits.MustDefault()
	rules, vms, err := headroom.ParseMapping([]byte(`volumes:
  - {instance: "node-1:9100", device: sdb, expect: "azure:P10", claim: db/data-0}
  - {device: nvme1n1, expect: "iops=3000,bw=125MB"}
nodes:
  - {instance: "node-1:9100", vm: Standard_D4s_v3}
`), cat)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || rules[0].Claim != "db/data-0" || rules[0].Cap.IOPS != 500 || rules[1].Instance != "" || rules[1].Cap.IOPS != 3000 || vms["node-1:9100"] != "Standard_D4s_v3" {
		t.Errorf("%+v %v", rules, vms)
	}
	for _, bad := range []string{"volumes: [{device: sdb}]", "volumes: [{device: sdb, expect: azure:P99}]", "nodes: [{instance: a, vm: nope}]",
		"volume: []", "volumes: [{device: 'a b', expect: 'iops=1'}]", "{"} {
		if _, _, err := headroom.ParseMapping([]byte(bad), cat); err == nil || hint.Of(err) == "" {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzParseMapping(f *testing.F) {
	f.Add([]byte("volumes: [{instance: n, device: sdb, expect: 'azure:P10'}]\nnodes: [{instance: n, vm: Standard_D4s_v3}]"))
	f.Add([]byte("volumes: [{device: sdb, expect: 'iops=5,bw=1MB'}]"))
	cat := limits.MustDefault()
	f.Fuzz(func(t *testing.T, b []byte) {
		rules, _, err := headroom.ParseMapping(b, cat)
		if err != nil {
			return
		}
		for _, r := range rules {
			if r.Cap == nil || r.Device == "" {
				t.Fatalf("a rule without a cap or device: %+v", r)
			}
		}
	})
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"sdb=azure:P10", "node-1:9100/sdb=iops=5", "iops=5,bw=1MB", "azure:P10"} {
		f.Add(s)
	}
	cat := limits.MustDefault()
	f.Fuzz(func(t *testing.T, s string) {
		r, err := headroom.ParseRule(s, headroom.SourceExpect, cat)
		if err == nil && (r.Cap == nil || r.Cap.IOPS < 0 || r.Cap.BWBytes < 0) {
			t.Fatalf("%q: %+v", s, r)
		}
	})
}

// TestProviderSubMillisecond: a range that starts between two
// milliseconds (as --since's does, from the clock) still reads the EBS
// counters: Prometheus rounds the start to the millisecond, and the
// answer must land on the grid asked for.
func TestProviderSubMillisecond(t *testing.T) {
	f := fleet{start: time.Unix(1_790_000_000, 0), step: 15 * time.Second, n: 480}
	_, c := fakeClient(t, f.series())
	o := f.options(t)
	o.From = o.From.Add(700 * time.Microsecond)
	r, err := headroom.Run(t.Context(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	if p := byName(t, r, "node-1:9100", "sdb").Provider; p == nil || p.ExceededIOPSS <= 0 {
		t.Errorf("the capped volume's EBS counters: %+v (notes %q)", p, r.Notes)
	}
}
