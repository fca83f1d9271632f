package compare

import (
	"math"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

// Alpha is the significance level of the tests.
const Alpha = 0.05

// Operand is one side of a comparison.
type Operand struct {
	Name    string          `json:"name"`
	Results []result.Result `json:"-"`
}

// Comparison is the whole side-by-side table.
type Comparison struct {
	Operands []string `json:"operands"`
	Alpha    float64  `json:"alpha"`
	Rows     []Row    `json:"rows"`
}

// Row is one test and direction across the operands.
type Row struct {
	Test string `json:"test"`
	Dir  string `json:"dir"`
	// Cells has one entry per operand, nil when it lacks the test.
	Cells []*Cell `json:"cells"`
}

// Cell is one operand's figures for a row.
type Cell struct {
	// N is the number of results (repeats, or runs in a selection).
	N       int     `json:"n"`
	IOPS    float64 `json:"iops"`     // mean over the N results
	BWBytes float64 `json:"bw_bytes"` // bytes/s, mean over the N results
	P50Ns   float64 `json:"p50_ns"`   // from the merged histogram
	P99Ns   float64 `json:"p99_ns"`
	P999Ns  float64 `json:"p99_9_ns"`
	Samples uint64  `json:"lat_samples"`
	// NoPercentiles: several results without histograms, whose
	// percentiles cannot be merged (and must not be averaged).
	NoPercentiles bool      `json:"no_percentiles,omitempty"`
	IOPSAll       []float64 `json:"iops_values"`
	P99All        []float64 `json:"p99_ns_values"`
	// Diff* are percent differences to the first operand's cell (absent
	// for the first operand itself or when it lacks the row).
	DiffIOPSPct *float64 `json:"diff_iops_pct,omitempty"`
	DiffBWPct   *float64 `json:"diff_bw_pct,omitempty"`
	DiffP50Pct  *float64 `json:"diff_p50_pct,omitempty"`
	DiffP99Pct  *float64 `json:"diff_p99_pct,omitempty"`
	DiffP999Pct *float64 `json:"diff_p99_9_pct,omitempty"`
	// IOPSTest and P99Test compare the per-result values with the first
	// operand's.
	IOPSTest *Welch `json:"iops_test,omitempty"`
	P99Test  *Welch `json:"p99_test,omitempty"`
}

// Welch is the outcome of Welch's t-test between two samples.
type Welch struct {
	// Enough is false when either side has fewer than two values or
	// neither varies: then T, DF and P are not set.
	Enough      bool    `json:"enough_data"`
	T           float64 `json:"t"`
	DF          float64 `json:"df"`
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
}

// Verdict is the short form used in tables.
func (w *Welch) Verdict() string {
	switch {
	case w == nil:
		return ""
	case !w.Enough:
		return "not enough data"
	case w.Significant:
		return "significant"
	}
	return "not significant"
}

// WelchTest runs Welch's unequal-variance t-test on a and b, two-sided;
// T is positive when b's mean is higher.
func WelchTest(a, b []float64) Welch {
	t, df, p := analysis.WelchT(b, a)
	if math.IsNaN(p) {
		return Welch{}
	}
	return Welch{Enough: true, T: t, DF: df, P: p, Significant: p < Alpha}
}

type key struct{ test, dir string }

// Compare builds the table. Rows follow the first operand's test order,
// then tests only later operands have.
func Compare(ops []Operand) Comparison {
	c := Comparison{Alpha: Alpha}
	var order []key
	seen := map[key]bool{}
	groups := make([]map[key][]*result.DirResult, len(ops))
	for i, op := range ops {
		c.Operands = append(c.Operands, op.Name)
		groups[i] = map[key][]*result.DirResult{}
		for j := range op.Results {
			r := &op.Results[j]
			if r.Status != "ok" {
				continue
			}
			for _, d := range []struct {
				name string
				d    *result.DirResult
			}{{"read", r.Read}, {"write", r.Write}, {"sync", r.Sync}} {
				if d.d == nil {
					continue
				}
				k := key{r.Test.Name, d.name}
				if !seen[k] {
					seen[k] = true
					order = append(order, k)
				}
				groups[i][k] = append(groups[i][k], d.d)
			}
		}
	}
	for _, k := range order {
		row := Row{Test: k.test, Dir: k.dir, Cells: make([]*Cell, len(ops))}
		for i := range ops {
			if ds := groups[i][k]; len(ds) > 0 {
				row.Cells[i] = cell(ds)
			}
		}
		if base := row.Cells[0]; base != nil {
			for _, x := range row.Cells[1:] {
				if x == nil {
					continue
				}
				x.DiffIOPSPct = pct(base.IOPS, x.IOPS)
				x.DiffBWPct = pct(base.BWBytes, x.BWBytes)
				if !base.NoPercentiles && !x.NoPercentiles {
					x.DiffP50Pct = pct(base.P50Ns, x.P50Ns)
					x.DiffP99Pct = pct(base.P99Ns, x.P99Ns)
					x.DiffP999Pct = pct(base.P999Ns, x.P999Ns)
				}
				it, pt := WelchTest(base.IOPSAll, x.IOPSAll), WelchTest(base.P99All, x.P99All)
				x.IOPSTest, x.P99Test = &it, &pt
			}
		}
		c.Rows = append(c.Rows, row)
	}
	return c
}

func cell(ds []*result.DirResult) *Cell {
	c := &Cell{N: len(ds)}
	var merged result.Histogram
	histOK := true
	for _, d := range ds {
		c.IOPSAll = append(c.IOPSAll, d.IOPS)
		c.P99All = append(c.P99All, d.Lat.P99Ns)
		c.IOPS += d.IOPS / float64(len(ds))
		c.BWBytes += d.BWBytes / float64(len(ds))
		if d.Hist.Count() == 0 {
			histOK = false
			continue
		}
		merged.Merge(&d.Hist)
	}
	switch {
	case histOK && merged.Count() > 0:
		ps := merged.Percentiles([]float64{50, 99, 99.9})
		c.P50Ns, c.P99Ns, c.P999Ns, c.Samples = ps[0], ps[1], ps[2], merged.Count()
	case len(ds) == 1:
		// No histogram (fio run without json+): fio's own percentiles
		// of the single result are still exact.
		l := ds[0].Lat
		c.P50Ns, c.P99Ns, c.P999Ns, c.Samples = l.P50Ns, l.P99Ns, l.P999Ns, l.N
	default:
		// Several results without histograms: percentiles cannot be
		// merged, and averaging them would be wrong.
		c.NoPercentiles = true
	}
	return c
}

func pct(base, v float64) *float64 {
	if base == 0 {
		return nil
	}
	d := (v - base) / base * 100
	return &d
}
