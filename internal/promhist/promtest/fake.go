package promtest

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/iolens/iolens/internal/promhist/promql"
)

// Fake answers the Prometheus HTTP API from synthetic series: the
// series API, instant queries of a range selector, and range queries of
// the forms iolens asks (a selector, timestamp() of one, sum by
// (instance) of one), with Prometheus's 5 minute lookback. It is for
// hostile answers and the benchmark; the real path is tested against
// Prometheus itself.
type Fake struct {
	series []*Series
	// Hook, when set, may answer a request itself (it returns true).
	Hook func(w http.ResponseWriter, r *http.Request) bool
	mu   sync.Mutex
	log  []string // queries asked
}

// FakeOf answers from ss; NewFake serves it for a test.
func FakeOf(ss []*Series) *Fake { return &Fake{series: ss} }

// NewFake serves ss until the test ends.
func NewFake(t testing.TB, ss []*Series) (*Fake, *httptest.Server) {
	f := FakeOf(ss)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

// Queries lists what was asked: the path and the query.
func (f *Fake) Queries() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

var queryForm = regexp.MustCompile(`^(timestamp\(|sum by \(instance\) \()?([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\}\)?(\[(\d+)s\])?$`)

func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	f.mu.Lock()
	f.log = append(f.log, r.URL.Path+" "+r.Form.Get("query")+r.Form.Get("match[]"))
	f.mu.Unlock()
	if f.Hook != nil && f.Hook(w, r) {
		return
	}
	fail := func(code int, typ, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": typ, "error": msg})
	}
	ok := func(data any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data})
	}
	tm := func(name string) (int64, bool) {
		v, err := strconv.ParseFloat(r.Form.Get(name), 64)
		return int64(math.Round(v * 1000)), err == nil
	}
	switch r.URL.Path {
	case "/api/v1/series":
		q := r.Form.Get("match[]")
		name, sel, err := splitQuery(q)
		if err != nil {
			fail(400, "bad_data", err.Error())
			return
		}
		from, _ := tm("start")
		to, _ := tm("end")
		var out []map[string]string
		for _, s := range f.series {
			if s.Labels["__name__"] == name && sel.Matches(s.Labels) && len(s.TS) > 0 && s.TS[0] <= to && s.TS[len(s.TS)-1] >= from {
				out = append(out, s.Labels)
			}
		}
		if out == nil {
			out = []map[string]string{}
		}
		ok(out)
	case "/api/v1/query":
		m := queryForm.FindStringSubmatch(r.Form.Get("query"))
		at, _ := tm("time")
		if m == nil || m[5] == "" {
			fail(400, "bad_data", "the fake answers range selectors only")
			return
		}
		sel, err := promql.ParseSelector(m[3])
		if err != nil {
			fail(400, "bad_data", err.Error())
			return
		}
		win, _ := strconv.Atoi(m[5])
		res := []map[string]any{}
		for _, s := range f.series {
			if s.Labels["__name__"] != m[2] || !sel.Matches(s.Labels) {
				continue
			}
			var vals [][2]any
			for i, ts := range s.TS {
				if ts > at-int64(win)*1000 && ts <= at {
					vals = append(vals, [2]any{float64(ts) / 1000, strconv.FormatFloat(s.V[i], 'f', -1, 64)})
				}
			}
			if len(vals) > 0 {
				res = append(res, map[string]any{"metric": s.Labels, "values": vals})
			}
		}
		ok(map[string]any{"resultType": "matrix", "result": res})
	case "/api/v1/query_range":
		q := r.Form.Get("query")
		start, _ := tm("start")
		end, _ := tm("end")
		stepS, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
		step := int64(math.Round(stepS * 1000))
		if step <= 0 || end < start {
			fail(400, "bad_data", "bad range")
			return
		}
		if (end-start)/step+1 > 11000 {
			fail(400, "bad_data", "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)")
			return
		}
		// A + B of two selectors: matched on every label but the name.
		terms := strings.Split(q, " + ")
		if len(terms) > 2 {
			fail(400, "bad_data", "the fake does not answer "+q)
			return
		}
		var sums []map[string]*acc
		var order []string
		for _, term := range terms {
			g, o, msg := f.evalRange(term, start, end, step, len(terms) > 1)
			if msg != "" {
				fail(400, "bad_data", msg)
				return
			}
			sums, order = append(sums, g), o
		}
		groups := sums[0]
		if len(sums) == 2 {
			for k, a := range groups {
				b := sums[1][k]
				for t, v := range a.v {
					if b == nil {
						delete(a.v, t)
					} else if w, ok := b.v[t]; ok {
						a.v[t] = v + w
					} else {
						delete(a.v, t)
					}
				}
			}
		}
		sort.Strings(order)
		res := []map[string]any{}
		for _, k := range order {
			g := groups[k]
			var vals [][2]any
			for t := start; t <= end; t += step {
				if v, ok := g.v[t]; ok {
					vals = append(vals, [2]any{float64(t) / 1000, strconv.FormatFloat(v, 'f', -1, 64)})
				}
			}
			if len(vals) > 0 {
				res = append(res, map[string]any{"metric": g.labels, "values": vals})
			}
		}
		ok(map[string]any{"resultType": "matrix", "result": res})
	default:
		http.NotFound(w, r)
	}
}

type acc struct {
	labels map[string]string
	v      map[int64]float64
}

// evalRange evaluates one selector form over the range; noName drops
// the metric name (a term of a sum). It returns why not instead when it
// cannot.
func (f *Fake) evalRange(q string, start, end, step int64, noName bool) (map[string]*acc, []string, string) {
	m := queryForm.FindStringSubmatch(q)
	if m == nil || m[5] != "" {
		return nil, nil, "the fake does not answer " + q
	}
	sel, err := promql.ParseSelector(m[3])
	if err != nil {
		return nil, nil, err.Error()
	}
	groups := map[string]*acc{}
	var order []string
	for _, s := range f.series {
		if s.Labels["__name__"] != m[2] || !sel.Matches(s.Labels) {
			continue
		}
		lbl := map[string]string{}
		switch m[1] {
		case "sum by (instance) (":
			lbl["instance"] = s.Labels["instance"]
		case "timestamp(":
			for k, v := range s.Labels {
				if k != "__name__" {
					lbl[k] = v
				}
			}
		default:
			for k, v := range s.Labels {
				if k != "__name__" || !noName {
					lbl[k] = v
				}
			}
		}
		k := fmt.Sprint(lbl)
		g := groups[k]
		if g == nil {
			g = &acc{labels: lbl, v: map[int64]float64{}}
			groups[k] = g
			order = append(order, k)
		}
		j := 0
		for t := start; t <= end; t += step {
			// The latest sample at or before t, within 5 minutes.
			for j < len(s.TS) && s.TS[j] <= t {
				j++
			}
			if j == 0 || t-s.TS[j-1] > 300_000 {
				continue
			}
			v := s.V[j-1]
			if m[1] == "timestamp(" {
				v = float64(s.TS[j-1]) / 1000
			}
			g.v[t] += v
		}
	}
	return groups, order, ""
}

func splitQuery(q string) (string, promql.Selector, error) {
	i := strings.IndexByte(q, '{')
	if i < 0 {
		return q, nil, nil
	}
	sel, err := promql.ParseSelector(q[i:])
	return q[:i], sel, err
}
