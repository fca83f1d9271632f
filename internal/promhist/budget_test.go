package promhist

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/promhist/promtest"
)

// TestQueryBudget: a range that needs more range queries than the budget
// is refused (before any query when the step is given), naming the
// longest range at that step and the step that fits; within the budget
// the analysis makes exactly the queries the budget counted.
func TestQueryBudget(t *testing.T) {
	start := date("2026-03-01T14:00:00Z")
	s := promtest.DefaultScenario.Synth(start, 120)
	f, srv := promtest.NewFake(t, s.Build())
	var ranges, all atomic.Int64
	f.Hook = func(w http.ResponseWriter, r *http.Request) bool {
		all.Add(1)
		if r.URL.Path == "/api/v1/query_range" {
			ranges.Add(1)
		}
		return false
	}
	c := clientOf(t, srv.URL, Auth{}, Limits{})
	// 10 instants a query, 16 queries a chunk: 6 chunks (96 queries) fit
	// 100; 119 s at 1 s
	// is 120 instants, 12 chunks.
	base := Options{From: start, To: start.Add(119 * time.Second), ChunkSteps: 10, MaxQueries: 100}
	for _, tc := range []struct {
		name       string
		step       time.Duration
		wantErr    bool
		longest    string // the hint's longest range
		fits       string // and the step that fits
		noRequests bool   // refused before asking anything
		queries    int64  // range queries made when it runs
	}{
		{name: "scrape interval", step: 0, wantErr: true, longest: "--since 59s", fits: "--step 3s"},
		{name: "1ms given", step: time.Millisecond, wantErr: true, longest: "--since 59ms", fits: "--step 3s", noRequests: true},
		{name: "2s fits", step: 2 * time.Second, queries: 6 * 16},
		{name: "3s fits", step: 3 * time.Second, queries: 4 * 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ranges.Store(0)
			all.Store(0)
			o := base
			o.Step = tc.step
			_, err := Analyze(t.Context(), c, o)
			var qb *QueryBudgetError
			if !tc.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				if got := ranges.Load(); got != tc.queries {
					t.Errorf("%d range queries, want %d (the budget's count)", got, tc.queries)
				}
				return
			}
			if !errors.As(err, &qb) {
				t.Fatalf("err %v, want a QueryBudgetError", err)
			}
			h := hint.Of(err)
			if !strings.Contains(h, tc.longest) || !strings.Contains(h, tc.fits) {
				t.Errorf("hint %q: want %q and %q", h, tc.longest, tc.fits)
			}
			if ranges.Load() != 0 {
				t.Errorf("%d range queries made before the refusal", ranges.Load())
			}
			if tc.noRequests && all.Load() != 0 {
				t.Errorf("%d requests made before the refusal", all.Load())
			}
		})
	}
}

// TestDefaultBudget: the default budget refuses the ranges that made
// about 15,000 queries (a million hours, the epoch to now, a millisecond
// step over an hour) and takes a day at 15 s.
func TestDefaultBudget(t *testing.T) {
	now := date("2026-03-01T14:00:00Z")
	for _, tc := range []struct {
		from time.Time
		step time.Duration
		ok   bool
	}{
		{now.Add(-1_000_000 * time.Hour), 15 * time.Second, false},
		{time.Unix(0, 0), 15 * time.Second, false},
		{now.Add(-time.Hour), time.Millisecond, false},
		{now.Add(-24 * time.Hour), 15 * time.Second, true},
		{now.Add(-30 * 24 * time.Hour), 15 * time.Second, true},
	} {
		o := Options{From: tc.from, To: now}.withDefaults()
		err := o.checkBudget(tc.step)
		if (err == nil) != tc.ok {
			t.Errorf("%s at %s: %v, want ok %v", now.Sub(tc.from), tc.step, err, tc.ok)
		}
		var qb *QueryBudgetError
		if errors.As(err, &qb) && (qb.Fits <= 0 || qb.MaxRange <= 0 || o.checkBudget(qb.Fits) != nil) {
			t.Errorf("%s at %s: the step said to fit, %s, does not (longest %s)", now.Sub(tc.from), tc.step, qb.Fits, qb.MaxRange)
		}
		if errors.As(err, &qb) {
			at := Options{From: now.Add(-qb.MaxRange), To: now}.withDefaults()
			if at.checkBudget(tc.step) != nil {
				t.Errorf("the longest range said, %s at %s, is refused", qb.MaxRange, tc.step)
			}
		}
	}
}

// TestLongLabelRefused: a device label past MaxLabelBytes from
// Prometheus, or given, is refused and never put into a query.
func TestLongLabelRefused(t *testing.T) {
	start := date("2026-03-01T14:00:00Z")
	long := strings.Repeat("d", 1<<20)
	s := &promtest.Synth{Instance: "node-1:9100", Start: start, Step: time.Second, N: 60, Devices: []string{long}, CPUs: 2}
	s.Dev = func(dev string, i int) promtest.Rates { return ownPace(i) }
	s.Host = func(int) promtest.HostRates { return promtest.HostRates{} }
	f, srv := promtest.NewFake(t, s.Build())
	var longQueries atomic.Int64
	f.Hook = func(w http.ResponseWriter, r *http.Request) bool {
		r.ParseForm()
		if strings.Contains(r.Form.Get("query"), long[:MaxLabelBytes+1]) {
			longQueries.Add(1)
		}
		return false
	}
	c := clientOf(t, srv.URL, Auth{}, Limits{})
	var le *LabelTooLongError
	if _, err := Analyze(t.Context(), c, Options{From: start, To: start.Add(59 * time.Second)}); !errors.As(err, &le) || hint.Of(err) == "" {
		t.Errorf("a 1 MiB device label: %v, want a LabelTooLongError with a hint", err)
	}
	if n := longQueries.Load(); n != 0 {
		t.Errorf("the label went into %d queries", n)
	}
	if _, err := Analyze(t.Context(), c, Options{From: start, To: start.Add(59 * time.Second), Devices: []string{long}}); !errors.As(err, &le) {
		t.Errorf("a 1 MiB --device: %v, want a LabelTooLongError", err)
	}
}
