package promhist

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/promhist/promql"
)

// Grid is the evaluation instants of one range query: Start, Start+Step,
// ..., N of them. It is the exported face of the grid every query of
// this package asks on, for readers of many devices at once (headroom).
type Grid struct {
	Start time.Time
	Step  time.Duration
	N     int
}

// Column is one series of a range query on its grid: NaN where the
// answer has no point.
type Column struct {
	Labels map[string]string
	V      []float64
}

// Range runs query over g with the bounds and checks every query of this
// package has: a matrix of at most maxSeries series, distinct label
// sets, points on the grid, in order, once each. It returns the columns
// sorted by instance and device, and Prometheus's warnings (clipped).
func (c *Client) Range(ctx context.Context, query string, g Grid, maxSeries int) ([]Column, []string, error) {
	if g.N <= 0 || g.Step <= 0 {
		return nil, nil, fmt.Errorf("range query %s: an empty grid", clip(query))
	}
	cols, warns, err := c.rangeQuery(ctx, query, grid{start: g.Start, step: g.Step, n: g.N}, maxSeries)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Column, len(cols))
	for i, col := range cols {
		out[i] = Column{Labels: col.labels, V: col.v}
	}
	return out, warns, nil
}

// SeriesLabels lists the label sets of the series match selects between
// from and to, at most max of them (more is a *TooManySeriesError).
func (c *Client) SeriesLabels(ctx context.Context, match string, from, to time.Time, max int) ([]map[string]string, error) {
	return c.seriesLabels(ctx, match, from, to, max)
}

// ScrapeInterval measures how often the series of metric under sel are
// scraped, from their raw sample times in a 5 minute window at a few
// instants of the range (the median gap of a series, the smallest of
// the series), and where in the interval the scrapes land (offset from
// the epoch modulo the interval).
func (c *Client) ScrapeInterval(ctx context.Context, sel promql.Selector, metric string, from, to time.Time, maxSeries int) (interval, phase time.Duration, err error) {
	const window = 5 * time.Minute
	const maxPoints = 5*60*20 + 1 // 50 ms scrapes
	for _, at := range []time.Time{to, from.Add(to.Sub(from) / 2), minTime(from.Add(window), to)} {
		q := fmt.Sprintf("%s[%ds]", sel.Of(metric), int(window.Seconds()))
		_, times, err := c.rawSamples(ctx, q, at, maxSeries, maxPoints)
		if err != nil {
			return 0, 0, err
		}
		var best time.Duration
		var last int64
		for _, ts := range times {
			if len(ts) < 3 {
				continue
			}
			gaps := make([]int64, len(ts)-1)
			for i := 1; i < len(ts); i++ {
				gaps[i-1] = ts[i] - ts[i-1]
			}
			sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
			g := time.Duration(gaps[len(gaps)/2]) * time.Millisecond
			if g > 0 && (best == 0 || g < best) {
				best, last = g, ts[len(ts)-1]
			}
		}
		if best > 0 {
			return best, time.Duration(last%best.Milliseconds()) * time.Millisecond, nil
		}
	}
	return 0, 0, hint.Wrap(fmt.Errorf("the series of {%s} have too few samples to tell their scrape interval", sel),
		"give --step (the node exporter's scrape interval, e.g. 15s)")
}
