package promhist

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/hint"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// grid is the evaluation instants of one range query: start, start+step,
// ..., n of them.
type grid struct {
	start time.Time
	step  time.Duration
	n     int
}

func (g grid) end() time.Time { return g.start.Add(time.Duration(g.n-1) * g.step) }

// column is one series of a range query on the grid: NaN where the
// answer has no point.
type column struct {
	labels map[string]string
	v      []float64
}

// SamplesError is Prometheus refusing a query for the samples it would
// load (its --query.max-samples, or the 11,000 points a series may have):
// a coarser step asks for fewer.
type SamplesError struct{ Msg string }

func (e *SamplesError) Error() string { return "Prometheus refused the query for its size: " + e.Msg }

// Hint says what asks for less.
func (e *SamplesError) Hint() string {
	return "a coarser --step, a shorter range, or fewer devices (--device) and nodes (--instance)"
}

// TooManySeriesError is a selector that matches more series than iolens
// reads at once.
type TooManySeriesError struct {
	Query string
	N     int
	Max   int
}

func (e *TooManySeriesError) Error() string {
	return fmt.Sprintf("%s matches %d series; iolens reads at most %d at once", e.Query, e.N, e.Max)
}

// Hint says how to narrow it.
func (e *TooManySeriesError) Hint() string {
	return "narrow the selector: one node (--instance or --match '{instance=\"...\"}') and the devices that matter (--device)"
}

// BadAnswerError is an answer that is not what Prometheus's API gives.
type BadAnswerError struct {
	Query string
	Why   string
}

func (e *BadAnswerError) Error() string {
	return fmt.Sprintf("Prometheus's answer to %s is not valid: %s", clip(e.Query), e.Why)
}

// Hint says what to suspect.
func (e *BadAnswerError) Hint() string {
	return "the URL may not be a Prometheus (or a compatible) API, or a proxy in front of it changes the answers"
}

// refused reports whether an API error is Prometheus declining the query
// for its size (Prometheus, Thanos, Mimir and VictoriaMetrics word it
// differently).
func refused(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "maximum resolution") ||
		strings.Contains(m, "samples") && (strings.Contains(m, "too many") || strings.Contains(m, "maximum") || strings.Contains(m, "max")) ||
		strings.Contains(m, "too many points")
}

// apiError turns the client's error into iolens's own kinds.
func (c *Client) apiError(query string, err error) error {
	var ae *v1.Error
	if errors.As(err, &ae) {
		switch {
		case refused(ae.Msg):
			return &SamplesError{Msg: clipLong(ae.Msg)}
		case ae.Type == v1.ErrBadResponse:
			return &BadAnswerError{Query: query, Why: clipLong(ae.Msg)}
		case ae.Type == v1.ErrClient || ae.Type == v1.ErrServer:
			return &BadAnswerError{Query: query, Why: clipLong(ae.Msg + detail(ae.Detail))}
		}
		return hint.Wrap(fmt.Errorf("Prometheus could not answer %s: %s", clip(query), clipLong(ae.Msg)),
			"Prometheus's own log says more; a timeout may pass with a shorter range or fewer devices")
	}
	return reachError(c, err)
}

func detail(d string) string {
	if d = strings.TrimSpace(d); d == "" {
		return ""
	}
	return ": " + d
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

func clipLong(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// rangeQuery runs query over g and checks the answer: a matrix of at
// most maxSeries series, distinct label sets, points on the grid, in
// order, once each. Non-finite values are left out (NaN in the column).
func (c *Client) rangeQuery(ctx context.Context, query string, g grid, maxSeries int) ([]column, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.limits.Timeout)
	defer cancel()
	// Prometheus rounds the start to the millisecond, and the answer is
	// checked against the grid in milliseconds: a start or step finer
	// than that would put the answer's points off the grid.
	if ms := g.start.Truncate(time.Millisecond); g.step >= time.Millisecond {
		g.start, g.step = ms, g.step.Truncate(time.Millisecond)
	}
	val, warns, _, err := c.api.QueryRange(ctx, query, v1.Range{Start: g.start, End: g.end(), Step: g.step})
	if err != nil {
		return nil, nil, c.apiError(query, err)
	}
	cols, err := columns(query, val, g, maxSeries)
	return cols, clipWarnings(warns), err
}

// columns is the response parser: it accepts only what a range query
// answers, within the bounds.
func columns(query string, val model.Value, g grid, maxSeries int) ([]column, error) {
	bad := func(format string, args ...any) error {
		return &BadAnswerError{Query: query, Why: fmt.Sprintf(format, args...)}
	}
	if val == nil {
		return nil, bad("no data")
	}
	m, ok := val.(model.Matrix)
	if !ok {
		return nil, bad("a %s where a range of samples (matrix) belongs", val.Type())
	}
	if len(m) > maxSeries {
		return nil, &TooManySeriesError{Query: query, N: len(m), Max: maxSeries}
	}
	start, stepMs := g.start.UnixMilli(), g.step.Milliseconds()
	seen := map[model.Fingerprint]bool{}
	out := make([]column, 0, len(m))
	for _, s := range m {
		if s == nil {
			return nil, bad("an empty series")
		}
		if fp := s.Metric.Fingerprint(); seen[fp] {
			return nil, bad("the series %s twice", s.Metric)
		} else {
			seen[fp] = true
		}
		if len(s.Values) > g.n {
			return nil, bad("%d points in a series where at most %d were asked for", len(s.Values), g.n)
		}
		col := column{labels: make(map[string]string, len(s.Metric)), v: make([]float64, g.n)}
		for k, v := range s.Metric {
			col.labels[string(k)] = string(v)
		}
		for i := range col.v {
			col.v[i] = math.NaN()
		}
		last := -1
		for _, p := range s.Values {
			off := int64(p.Timestamp) - start
			if off < 0 || off%stepMs != 0 || off/stepMs >= int64(g.n) {
				return nil, bad("a point at %s, off the grid asked for", p.Timestamp.Time().UTC().Format(time.RFC3339Nano))
			}
			k := int(off / stepMs)
			if k <= last {
				return nil, bad("points out of order or twice at %s", p.Timestamp.Time().UTC().Format(time.RFC3339Nano))
			}
			last = k
			if f := float64(p.Value); !math.IsNaN(f) && !math.IsInf(f, 0) {
				col.v[k] = f
			}
		}
		out = append(out, col)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i].labels) < key(out[j].labels) })
	return out, nil
}

func key(l map[string]string) string { return l["instance"] + "\x00" + l["device"] }

// maxWarnings bounds the warnings kept from one answer.
const maxWarnings = 3

func clipWarnings(ws v1.Warnings) []string {
	var out []string
	for i, w := range ws {
		if i == maxWarnings {
			out = append(out, fmt.Sprintf("and %d more warnings", len(ws)-maxWarnings))
			break
		}
		out = append(out, clipLong(w))
	}
	return out
}

// rawSamples runs an instant query of a range selector (query[window]
// at t) and returns each series' raw sample times, checked the same way.
func (c *Client) rawSamples(ctx context.Context, query string, t time.Time, maxSeries, maxPoints int) ([]map[string]string, [][]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.limits.Timeout)
	defer cancel()
	val, _, _, err := c.api.Query(ctx, query, t)
	if err != nil {
		return nil, nil, c.apiError(query, err)
	}
	bad := func(format string, args ...any) error {
		return &BadAnswerError{Query: query, Why: fmt.Sprintf(format, args...)}
	}
	m, ok := val.(model.Matrix)
	if !ok {
		if val == nil {
			return nil, nil, bad("no data")
		}
		return nil, nil, bad("a %s where raw samples (matrix) belong", val.Type())
	}
	if len(m) > maxSeries {
		return nil, nil, &TooManySeriesError{Query: query, N: len(m), Max: maxSeries}
	}
	var labels []map[string]string
	var times [][]int64
	for _, s := range m {
		if s == nil {
			return nil, nil, bad("an empty series")
		}
		if len(s.Values) > maxPoints {
			return nil, nil, bad("%d samples in a series where at most %d fit the window", len(s.Values), maxPoints)
		}
		l := map[string]string{}
		for k, v := range s.Metric {
			l[string(k)] = string(v)
		}
		ts := make([]int64, 0, len(s.Values))
		for _, p := range s.Values {
			if n := len(ts); n > 0 && int64(p.Timestamp) <= ts[n-1] {
				return nil, nil, bad("samples out of order")
			}
			ts = append(ts, int64(p.Timestamp))
		}
		labels = append(labels, l)
		times = append(times, ts)
	}
	return labels, times, nil
}

// seriesLabels lists the label sets of the series query's selector
// matches between from and to (the series API), at most max of them.
func (c *Client) seriesLabels(ctx context.Context, match string, from, to time.Time, max int) ([]map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.limits.Timeout)
	defer cancel()
	ls, _, _, err := c.api.Series(ctx, []string{match}, from, to, v1.WithLimit(uint64(max+1)))
	if err != nil {
		return nil, c.apiError(match, err)
	}
	if len(ls) > max {
		return nil, &TooManySeriesError{Query: match, N: len(ls), Max: max}
	}
	out := make([]map[string]string, 0, len(ls))
	for _, l := range ls {
		m := map[string]string{}
		for k, v := range l {
			m[string(k)] = string(v)
		}
		out = append(out, m)
	}
	return out, nil
}
