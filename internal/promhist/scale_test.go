package promhist

import (
	"testing"
	"time"

	"github.com/iolens/iolens/internal/promhist/promtest"
	"github.com/iolens/iolens/internal/scaletest"
)

// historyOf serves n seconds of a node's history (its own workload, one
// disk, scraped each second) and returns the options that read it all.
func historyOf(t testing.TB, n int) (*Client, Options) {
	start := date("2026-03-01T14:00:00Z")
	s := &promtest.Synth{Instance: "node-1:9100", Start: start, Step: time.Second, N: n, Devices: []string{"sdb"}, CPUs: 2}
	s.Dev = func(_ string, i int) promtest.Rates { return ownPace(i) }
	s.Host = func(int) promtest.HostRates { return promtest.HostRates{} }
	_, srv := promtest.NewFake(t, s.Build())
	c, err := NewClient(srv.URL, Auth{}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return c, Options{From: start, To: start.Add(time.Duration(n-1) * time.Second), Step: time.Second}
}

// TestAnalyzeLinear: reading 10 times the history (10 times the range
// queries and samples) takes about 10 times the work.
func TestAnalyzeLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 10,000 s of history from a fake Prometheus several times (a few seconds); skipped under -short")
	}
	type in struct {
		c *Client
		o Options
	}
	ins := map[int]in{}
	for _, n := range []int{1000, 10000} {
		c, o := historyOf(t, n)
		ins[n] = in{c, o}
	}
	scaletest.Linear(t, "analyze --prometheus", 1000, func(n int) {
		a, err := Analyze(t.Context(), ins[n].c, ins[n].o)
		if err != nil || len(a.Nodes) != 1 || a.Nodes[0].Intervals < n-10 {
			t.Fatalf("%v, %v: want one node, %d intervals", a, err, n)
		}
	})
}

// BenchmarkAnalyze reads 2.5 minutes of a node's history at a 1 s scrape
// interval (150 instants: a short incident), and 10, 100 and 1,000 times
// as long (the last, 42 hours, within the query budget at 1 s).
func BenchmarkAnalyze(b *testing.B) {
	scaletest.Bench(b, 150, "instant", func(n int) func() {
		c, o := historyOf(b, n)
		return func() {
			if _, err := Analyze(b.Context(), c, o); err != nil {
				b.Fatal(err)
			}
		}
	})
}
