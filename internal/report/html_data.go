package report

import (
	"math"
	"strings"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

// MaxPoints is how many points a time series keeps in the HTML page.
// Longer series are downsampled with LTTB, which keeps the shape,
// troughs included, so stalls stay visible.
const MaxPoints = 600

// lttb picks n indices of (xs, ys) by Largest-Triangle-Three-Buckets
// (Steinarsson 2013). The first and last points are always kept.
func lttb(xs, ys []float64, n int) []int {
	l := len(xs)
	if n >= l || n < 3 {
		idx := make([]int, l)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	out := make([]int, 0, n)
	out = append(out, 0)
	every := float64(l-2) / float64(n-2)
	a := 0
	for i := 0; i < n-2; i++ {
		// The next bucket's average is the third corner.
		s := int(math.Floor(float64(i+1)*every)) + 1
		e := min(int(math.Floor(float64(i+2)*every))+1, l)
		var avx, avy float64
		for j := s; j < e; j++ {
			avx += xs[j]
			avy += ys[j]
		}
		if e > s {
			avx /= float64(e - s)
			avy /= float64(e - s)
		}
		rs := int(math.Floor(float64(i)*every)) + 1
		re := int(math.Floor(float64(i+1)*every)) + 1
		best, bestArea := rs, -1.0
		for j := rs; j < re; j++ {
			area := math.Abs((xs[a]-avx)*(ys[j]-ys[a]) - (xs[a]-xs[j])*(avy-ys[a]))
			if area > bestArea {
				best, bestArea = j, area
			}
		}
		out = append(out, best)
		a = best
	}
	return append(out, l-1)
}

// table is columnar chart data: T (seconds) then one column per series.
// Missing values are null in JSON.
type table struct {
	Names []string     `json:"names"`
	Cols  [][]*float64 `json:"cols"` // Cols[0] is time
}

func pf(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// downsample builds a table from n rows, keeping the rows LTTB picks on
// the driver column.
func downsample(points, n int, t func(i int) float64, driver func(i int) float64, names []string, cols ...func(i int) float64) *table {
	if n == 0 {
		return nil
	}
	xs, ys := make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		xs[i], ys[i] = t(i), driver(i)
	}
	idx := lttb(xs, ys, points)
	tb := &table{Names: names, Cols: make([][]*float64, len(cols)+1)}
	for _, i := range idx {
		tb.Cols[0] = append(tb.Cols[0], pf(round(xs[i], 3)))
		for c, f := range cols {
			tb.Cols[c+1] = append(tb.Cols[c+1], pf(round(f(i), 4)))
		}
	}
	return tb
}

// round keeps 4 significant digits: plenty for a chart, and small.
func round(v float64, sig int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	m := math.Pow(10, float64(sig)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*m) / m
}

// seriesData is the time-series part of one result in the page.
type seriesData struct {
	Fio *table `json:"fio"`
	Dev *table `json:"dev"`
	Sys *table `json:"sys"`
	// Shade are [start, end, kind] regions from stall/cliff findings.
	Shade [][3]any `json:"shade"`
	// Fast: sampled faster than once a second (plans sample every
	// 250 ms); the page can smooth such series over a second.
	Fast bool `json:"fast"`
}

func primaryDevice(r *result.Result) *result.DeviceSeries {
	for i := range r.Devices {
		if r.Devices[i].Device == r.Target.Device {
			return &r.Devices[i]
		}
	}
	if len(r.Devices) > 0 {
		return &r.Devices[0]
	}
	return nil
}

func buildSeries(r *result.Result, points int) *seriesData {
	sd := &seriesData{Shade: [][3]any{}}
	if fs := r.FioSeries; len(fs) > 1 {
		sd.Fast = (fs[len(fs)-1].T-fs[0].T)/float64(len(fs)-1) < 0.9
	}
	if fs := r.FioSeries; len(fs) > 0 {
		sd.Fio = downsample(points, len(fs), func(i int) float64 { return fs[i].T },
			func(i int) float64 { return fs[i].ReadBWBytes + fs[i].WriteBWBytes },
			[]string{"app read MB/s", "app write MB/s", "app read IOPS", "app write IOPS", "app read lat ms", "app write lat ms"},
			func(i int) float64 { return fs[i].ReadBWBytes / 1e6 }, func(i int) float64 { return fs[i].WriteBWBytes / 1e6 },
			func(i int) float64 { return fs[i].ReadIOPS }, func(i int) float64 { return fs[i].WriteIOPS },
			func(i int) float64 { return fs[i].ReadLatMeanNs / 1e6 }, func(i int) float64 { return fs[i].WriteLatMeanNs / 1e6 })
	}
	if d := primaryDevice(r); d != nil && len(d.Samples) > 0 {
		s := d.Samples
		sd.Dev = downsample(points, len(s), func(i int) float64 { return s[i].T },
			func(i int) float64 { return s[i].ReadBWBytes + s[i].WriteBWBytes },
			[]string{"dev read MB/s", "dev write MB/s", "dev read IOPS", "dev write IOPS", "dev r_await ms", "dev w_await ms", "queue size", "util %"},
			func(i int) float64 { return s[i].ReadBWBytes / 1e6 }, func(i int) float64 { return s[i].WriteBWBytes / 1e6 },
			func(i int) float64 { return s[i].ReadIOPS }, func(i int) float64 { return s[i].WriteIOPS },
			func(i int) float64 { return s[i].ReadAwaitMs }, func(i int) float64 { return s[i].WriteAwaitMs },
			func(i int) float64 { return s[i].QueueSize }, func(i int) float64 { return s[i].UtilPct })
	}
	if s := r.System; len(s) > 0 {
		sd.Sys = downsample(points, len(s), func(i int) float64 { return s[i].T },
			func(i int) float64 { return float64(s[i].DirtyBytes + s[i].WritebackBytes) },
			[]string{"dirty MB", "writeback MB", "iowait %"},
			func(i int) float64 { return float64(s[i].DirtyBytes) / 1e6 }, func(i int) float64 { return float64(s[i].WritebackBytes) / 1e6 },
			func(i int) float64 { return s[i].IowaitPct })
	}
	for _, f := range r.Findings {
		if f.StartS == nil || f.DurationS == nil {
			continue
		}
		sd.Shade = append(sd.Shade, [3]any{*f.StartS, *f.StartS + *f.DurationS, f.Kind})
	}
	if sd.Fio == nil && sd.Dev == nil && sd.Sys == nil {
		return nil
	}
	return sd
}

// nines is the x grid of the percentile curves: 0 to 5 nines (p0 to
// p99.999) in steps of 0.05.
var nines = func() []float64 {
	var out []float64
	for n := 0.0; n <= 5.0001; n += 0.05 {
		out = append(out, math.Round(n*100)/100)
	}
	return out
}()

// percentileCurve reads a merged histogram at every point of the grid, in ms.
// No point is above maxNs, the largest latency measured.
func percentileCurve(h *result.Histogram, maxNs float64) []*float64 {
	ps := make([]float64, len(nines))
	for i, n := range nines {
		ps[i] = 100 * (1 - math.Pow(10, -n))
	}
	vs := h.Percentiles(ps)
	out := make([]*float64, len(vs))
	for i, v := range vs {
		out[i] = pf(round(result.ClipNs(v, maxNs)/1e6, 4))
	}
	return out
}

// testKey names a test and direction across sets.
type testKey struct{ Test, Dir string }

// aggregate is one set's figures for one test and direction over its
// repeats (analysis.Summarize's), with the disk's ceilings its findings
// name.
type aggregate struct {
	analysis.DirSummary
	Ceiling map[string]float64
}

func aggregateSet(rs []result.Result) (map[testKey]*aggregate, []testKey) {
	m := map[testKey]*aggregate{}
	var order []testKey
	for _, d := range analysis.Summarize(rs, analysis.SummarizeOptions{AcrossRuns: true}) {
		k := testKey{d.Test, d.Dir}
		m[k] = &aggregate{DirSummary: d, Ceiling: map[string]float64{}}
		order = append(order, k)
	}
	for i := range rs {
		r := &rs[i]
		for name := range r.Dirs() {
			a := m[testKey{r.Test.Name, name}]
			if a == nil {
				continue
			}
			for _, f := range r.Findings {
				for ek, ev := range f.Evidence {
					if name, ok := strings.CutPrefix(ek, "ceiling_"); ok && ev > 0 {
						a.Ceiling[name] = ev
					}
				}
			}
		}
	}
	return m, order
}
