package compare

import (
	"fmt"
	"math"
	"sort"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Nodes of one class should deliver the same: the same disk type, the
// same VM size. A node whose disk model differs from the others' beyond
// the measurement's noise is worth naming, with what may explain it: a
// noisy neighbour (another tenant on the host or the storage back end), or
// a different disk (another SKU, a throttled one, a degraded one).

// nodeFigureOf reads one figure of a disk model; higher reports whether more
// is better.
type nodeFigureOf struct {
	name, unit string
	higher     bool
	get        func(diagnosis.Disk) (v float64, limit string)
}

var nodeFigures = []nodeFigureOf{
	{"read IOPS", "iops", true, func(d diagnosis.Disk) (float64, string) {
		if d.Read == nil {
			return 0, ""
		}
		return d.Read.IOPS, d.Read.IOPSLimit
	}},
	{"write IOPS", "iops", true, func(d diagnosis.Disk) (float64, string) {
		if d.Write == nil {
			return 0, ""
		}
		return d.Write.IOPS, d.Write.IOPSLimit
	}},
	{"read bandwidth", "bytes/s", true, func(d diagnosis.Disk) (float64, string) {
		if d.Read == nil {
			return 0, ""
		}
		return d.Read.BWBytes, d.Read.BWLimit
	}},
	{"write bandwidth", "bytes/s", true, func(d diagnosis.Disk) (float64, string) {
		if d.Write == nil {
			return 0, ""
		}
		return d.Write.BWBytes, d.Write.BWLimit
	}},
	{"read QD1 latency", "ns", false, func(d diagnosis.Disk) (float64, string) {
		if d.Read == nil {
			return 0, ""
		}
		return d.Read.QD1LatencyNs, ""
	}},
	{"write QD1 latency", "ns", false, func(d diagnosis.Disk) (float64, string) {
		if d.Write == nil {
			return 0, ""
		}
		return d.Write.QD1LatencyNs, ""
	}},
	{"fsync p99", "ns", false, func(d diagnosis.Disk) (float64, string) {
		if d.Fsync == nil {
			return 0, ""
		}
		return d.Fsync.P99Ns, ""
	}},
}

// Nodes names the nodes whose disk models differ from the others'
// by more than threshold (relative), figure by figure. With three nodes or
// more a node is compared with the median of all; with two, the worse of
// the pair is named when they differ. A figure a node lacks is not
// compared.
func Nodes(models map[string]diagnosis.Diagnosis, threshold float64) NodeComparison {
	c := NodeComparison{Threshold: threshold}
	for n := range models {
		c.Nodes = append(c.Nodes, n)
	}
	sort.Strings(c.Nodes)
	if len(c.Nodes) < 2 {
		return c
	}
	byNode := map[string][]Figure{}
	for _, f := range nodeFigures {
		vals := map[string]float64{}
		limits := map[string]string{}
		for _, n := range c.Nodes {
			if v, l := f.get(models[n].Disk); v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
				vals[n], limits[n] = v, l
			}
		}
		if len(vals) < 2 {
			continue
		}
		for _, n := range c.Nodes {
			v, ok := vals[n]
			if !ok {
				continue
			}
			var all []float64
			var otherLimits []string
			for _, m := range c.Nodes {
				if w, ok := vals[m]; ok {
					all = append(all, w)
					if m != n {
						otherLimits = append(otherLimits, limits[m])
					}
				}
			}
			// The median of every node, the node's own figure included,
			// so that one outlier does not make the others look off; a
			// pair has no median, and each is compared with the other.
			med := median(all)
			if len(all) == 2 {
				med = all[0] + all[1] - v
			}
			if med <= 0 || math.Abs(v-med) <= threshold*math.Max(v, med) {
				continue
			}
			worse := v < med
			if !f.higher {
				worse = v > med
			}
			if len(vals) == 2 && !worse {
				// A pair that differs: the worse one is named.
				continue
			}
			fig := Figure{Name: f.name, Unit: f.unit, Value: v, Others: med, Ratio: v / med, Limit: limits[n]}
			if agree(otherLimits) {
				fig.OthersLimit = otherLimits[0]
			}
			byNode[n] = append(byNode[n], fig)
		}
	}
	for _, n := range c.Nodes {
		if figs := byNode[n]; len(figs) > 0 {
			c.Outliers = append(c.Outliers, Outlier{Node: n, Figures: figs, Why: why(figs)})
		}
	}
	return c
}

// why says what may explain an outlier's figures: a cap of its own points
// at a different (or throttled) disk; otherwise a neighbour or a disk.
func why(figs []Figure) string {
	for _, f := range figs {
		if (f.Limit == result.CodeIOPSCap || f.Limit == result.CodeBandwidthCap) && f.Limit != f.OthersLimit {
			return fmt.Sprintf("its %s is held at a flat cap (%s) the other nodes do not hit: a different disk, or one throttled below its class", f.Name, units.Measure(f.Value, f.Unit))
		}
	}
	return "a noisy neighbour (another tenant on the host or the storage back end), or a different disk: run it again to tell them apart; a neighbour comes and goes, a disk stays"
}

func agree(ls []string) bool {
	for _, l := range ls {
		if l == "" || l != ls[0] {
			return false
		}
	}
	return len(ls) > 0
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
