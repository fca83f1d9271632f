package report

import (
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
)

// modelItem is one chart of the disk model: small-block curves in IOPS
// or large-block ones in MB/s against queue depth, each curve as its
// measured points, the fitted line through them and its mean latency
// (right axis).
type modelItem struct {
	ID    string        `json:"id"`
	Title string        `json:"-"`
	Sub   string        `json:"-"`
	Unit  string        `json:"unit"`
	X     []float64     `json:"x"`
	Lines []modelSeries `json:"lines"`
	Knees []modelKnee   `json:"knees"`
}

type modelSeries struct {
	Label string `json:"label"`
	Color string `json:"color"`
	// Kind is "measured" (points), "fit" (a line) or "lat" (ms, right
	// axis, dashed).
	Kind string     `json:"kind"`
	Y    []*float64 `json:"y"`
}

type modelKnee struct {
	QD    float64 `json:"qd"`
	Color string  `json:"color"`
	Label string  `json:"label"`
}

// curveColor is a curve's colour: its direction's, as in the time series
// (read blue, write orange), a darker shade for a second curve of the
// same direction in one chart.
func curveColor(dir string, second bool) string {
	c := metricColors[dir]
	if c == "" {
		c = metricColors["queue"]
	}
	if second {
		c = map[string]string{"read": "#0b3d66", "write": "#a34a00"}[dir]
		if c == "" {
			c = "#444"
		}
	}
	return c
}

// modelCharts draws d's curves: one chart for small blocks (IOPS), one
// for large (MB/s).
func modelCharts(d *diagnosis.Diagnosis, prefix string) []modelItem {
	var out []modelItem
	for _, large := range []bool{false, true} {
		var cs []*diagnosis.Curve
		for i := range d.Curves {
			if c := &d.Curves[i]; c.Large() == large && len(c.Points) > 0 {
				cs = append(cs, c)
			}
		}
		if len(cs) == 0 {
			continue
		}
		it := modelItem{ID: prefix + "-small", Unit: "IOPS", Title: "Disk model: IOPS against queue depth",
			Sub: "points measured, line fitted (base latency and ceiling), latency dashed on the right axis; the knee marked"}
		if large {
			it.ID, it.Unit, it.Title = prefix+"-large", "MB/s", "Disk model: MB/s against queue depth"
		}
		// x: every depth measured, and a grid of quarter doublings
		// from 1 to twice the deepest, for the fit.
		deep := 1
		xs := map[float64]bool{}
		for _, c := range cs {
			for _, p := range c.Points {
				deep = max(deep, p.QD)
				xs[float64(p.QD)] = true
			}
		}
		for q := 1.0; q <= 2*float64(deep)+1e-9; q *= math.Pow(2, 0.25) {
			xs[math.Round(q*1000)/1000] = true
		}
		for x := range xs {
			it.X = append(it.X, x)
		}
		sort.Float64s(it.X)
		seenDir := map[string]bool{}
		for _, c := range cs {
			col := curveColor(c.Dir, seenDir[c.Dir])
			seenDir[c.Dir] = true
			name := curveName(c)
			scale := 1.0
			if large {
				scale = float64(c.IOSizeBytes) / 1e6
			}
			meas, fit, lat := make([]*float64, len(it.X)), make([]*float64, len(it.X)), make([]*float64, len(it.X))
			at := map[float64]diagnosis.CurvePoint{}
			for _, p := range c.Points {
				at[float64(p.QD)] = p
			}
			fitted := len(c.Points) >= 2 && (c.Sharpness > 0 || c.CeilingIOPS == 0)
			// The fit's latency with no queueing (records before it was
			// kept: the base latency measured).
			l0 := c.ServiceLatNs
			if l0 <= 0 {
				l0 = c.BaseLatNs
			}
			for i, x := range it.X {
				if p, ok := at[x]; ok {
					meas[i] = pf(round(p.IOPS*scale, 5))
					if p.LatNs > 0 {
						lat[i] = pf(round(p.LatNs/1e6, 4))
					}
				}
				// A fit needs two depths; a ceiling without a fitted
				// knee (one depth, or a plateau the fit did not bend to)
				// has no line to draw.
				if !fitted {
					continue
				}
				if v := analysis.ModelIOPS(x, l0, c.CeilingIOPS, c.Sharpness); v > 0 {
					fit[i] = pf(round(v*scale, 5))
				}
			}
			it.Lines = append(it.Lines, modelSeries{Label: name, Color: col, Kind: "measured", Y: meas},
				modelSeries{Label: name + " fit", Color: col, Kind: "fit", Y: fit},
				modelSeries{Label: name + " latency", Color: col, Kind: "lat", Y: lat})
			if c.KneeQD >= 1 && c.State == "plateau" {
				// Two curves with their knee at the same depth share one
				// label: drawn twice, the labels lie on each other.
				label := "fitted knee ≈QD" + strconv.Itoa(int(math.Ceil(c.KneeQD-1e-9))) + " (estimated)"
				if !slices.ContainsFunc(it.Knees, func(k modelKnee) bool { return k.Label == label }) {
					it.Knees = append(it.Knees, modelKnee{QD: c.KneeQD, Color: col, Label: label})
				}
			}
		}
		out = append(out, it)
	}
	return out
}
