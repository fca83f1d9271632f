package report

import (
	"fmt"
	"github.com/iolens/iolens/internal/diagnosis"
	"math"
	"testing"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

// The page draws the model's own fit: at every depth measured, the line
// is the rate the analysis fitted there (as the model finding records
// it), not a curve of the page's making.
func TestModelChartDrawsTheFit(t *testing.T) {
	for _, fixture := range []func(*testing.T) []result.Result{p15Run, func(t *testing.T) []result.Result { return realP30(t) }} {
		rs := fixture(t)
		d := diagnosis.Saved(rs)
		ptrs := make([]*result.Result, len(rs))
		for i := range rs {
			ptrs[i] = &rs[i]
		}
		m := analysis.FitModel(ptrs)
		want := map[string]float64{}
		for _, c := range m.Curves {
			if len(c.Points) < 2 || c.Sharpness == 0 && c.Ceiling > 0 {
				continue
			}
			for _, p := range c.Points {
				v := p.Fit
				if c.Large() {
					v *= float64(c.Key.BlockSize) / 1e6
				}
				want[fmt.Sprintf("%s fit@%d", c.Key, p.QD)] = v
			}
		}
		if len(want) == 0 {
			t.Fatal("no fitted curve to draw")
		}
		got := 0
		for _, it := range modelCharts(&d, "m") {
			for _, l := range it.Lines {
				if l.Kind != "fit" {
					continue
				}
				for i, x := range it.X {
					w, ok := want[fmt.Sprintf("%s@%d", l.Label, int(x))]
					if !ok || x != math.Trunc(x) {
						continue
					}
					got++
					if l.Y[i] == nil || math.Abs(*l.Y[i]/w-1) > 1e-3 {
						t.Errorf("%s at QD%v: drawn %v, fitted %v", l.Label, x, l.Y[i], w)
					}
				}
			}
		}
		if got != len(want) {
			t.Errorf("%d of %d fitted points drawn", got, len(want))
		}
	}
}
