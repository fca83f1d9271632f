package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// SweepPrefix marks the tests of a queue-depth sweep: TestSpec.Group is
// "qd-sweep:NAME".
const SweepPrefix = "qd-sweep:"

// Sweep regimes.
const (
	regimeLatencyBound = "latency-bound (raise parallelism)"
	regimeIOPSCapped   = "IOPS-capped (flat IOPS, latency grows with QD)"
	regimeBWCapped     = "bandwidth-capped (IOPS x block size flat)"
	regimeCapped       = "capped (IOPS or bandwidth: add a test with a larger block size to tell which)"
	regimeCPU          = "CPU-bound (fio's CPU, not the disk, sets the plateau)"
	regimeDevice       = "device-saturated (the device's own queue fills; no flat ceiling)"
)

// SweepPoint is one queue depth of a sweep; repeats of the same depth are
// averaged (latency weighted by IOs, percentiles from merged histograms).
type SweepPoint struct {
	// Outstanding is numjobs x iodepth.
	Outstanding int
	BlockSize   int64
	IOPS        float64
	BWBytes     float64
	LatMeanNs   float64
	P99Ns       float64
	// Little is IOPS x mean latency / Outstanding: about 1 when fio kept
	// that many IOs in flight.
	Little float64
}

// Sweep is the reading of one QD sweep.
type Sweep struct {
	Name   string
	Points []SweepPoint
	// Knee is the shallowest depth measured at the plateau's level (the
	// curve's Curve.KneeBracket), KneeBelow the deepest measured short of
	// it and KneeBelowShare its share of the level (0: none below): the
	// knee lies between the two. Knee is 0 with no plateau.
	Knee           int
	KneeBelow      int
	KneeBelowShare float64
	Max            SweepPoint
	Regime         string
	LittleMin      float64
	LittleMax      float64
}

// gainPerDoubling is the relative IOPS gain from a to b scaled to one
// doubling of the depth.
func gainPerDoubling(a, b SweepPoint) float64 {
	if a.IOPS <= 0 || b.Outstanding <= a.Outstanding {
		return 0
	}
	return math.Pow(b.IOPS/a.IOPS, 1/math.Log2(float64(b.Outstanding)/float64(a.Outstanding))) - 1
}

// singleP99 is the p99 fio reported for a result without histogram: the
// larger of its directions'.
func singleP99(r *result.Result) float64 {
	var p float64
	for _, d := range []*result.DirResult{r.Read, r.Write} {
		if d != nil {
			p = math.Max(p, d.Lat.P99Ns)
		}
	}
	return p
}

// totalLatNs is fio's mean total latency (submission to completion) of one
// direction of one result. Results whose percentiles are of clat carry
// the total mean beside them; Little's law needs the total.
func totalLatNs(d *result.DirResult) float64 {
	if d.LatKind == "clat" && d.TotalLatMeanNs > 0 {
		return d.TotalLatMeanNs
	}
	return d.Lat.MeanNs
}

// totals adds a result's read and write figures; latency is IO-weighted
// and the p99 comes from the merged histograms.
func totals(r *result.Result) (iops, bw, latSum float64, n uint64, h *result.Histogram) {
	h = &result.Histogram{}
	for _, d := range []*result.DirResult{r.Read, r.Write} {
		if d == nil {
			continue
		}
		iops += d.IOPS
		bw += d.BWBytes
		latSum += totalLatNs(d) * float64(d.Lat.N)
		n += d.Lat.N
		h.Merge(&d.Hist)
	}
	return
}

// analyzeSweep reads a sweep from its results (any order, repeats
// included). others are results of the same run outside the sweep; a
// test of the same direction with larger blocks tells an IOPS cap from a
// bandwidth cap when the sweep itself uses one block size. The regime is
// read off curve when the caller has the run's model (nil: fitted here
// from members and others). It returns false with fewer than three
// depths.
func analyzeSweep(name string, members, others []*result.Result, curve *Curve) (Sweep, bool) {
	type acc struct {
		iops, bw, latSum float64
		n                uint64
		runs             int
		h                result.Histogram
		bs               int64
		p99              float64
	}
	byQD := map[int]*acc{}
	for _, r := range members {
		if r.Status != "ok" {
			continue
		}
		q := max(r.Test.IODepth, 1) * max(r.Test.NumJobs, 1)
		a := byQD[q]
		if a == nil {
			a = &acc{bs: r.Test.BlockSize}
			byQD[q] = a
		}
		iops, bw, ls, n, h := totals(r)
		if h.Count() == 0 && a.runs == 0 {
			a.p99 = singleP99(r)
		} else {
			a.p99 = 0 // percentiles of several runs need their histograms
		}
		a.iops += iops
		a.bw += bw
		a.latSum += ls
		a.n += n
		a.runs++
		a.h.Merge(h)
	}
	sw := Sweep{Name: name}
	for q, a := range byQD {
		p := SweepPoint{Outstanding: q, BlockSize: a.bs, IOPS: a.iops / float64(a.runs), BWBytes: a.bw / float64(a.runs)}
		if a.n > 0 {
			p.LatMeanNs = a.latSum / float64(a.n)
		}
		p.P99Ns = a.h.Percentile(99)
		if a.h.Count() == 0 {
			p.P99Ns = a.p99
		}
		p.Little = p.IOPS * p.LatMeanNs / 1e9 / float64(q)
		sw.Points = append(sw.Points, p)
	}
	if len(sw.Points) < 3 {
		return sw, false
	}
	sort.Slice(sw.Points, func(i, j int) bool { return sw.Points[i].Outstanding < sw.Points[j].Outstanding })
	pts := sw.Points
	sw.LittleMin, sw.LittleMax = math.Inf(1), 0
	for _, p := range pts {
		if p.IOPS > sw.Max.IOPS {
			sw.Max = p
		}
		if p.LatMeanNs > 0 {
			sw.LittleMin, sw.LittleMax = math.Min(sw.LittleMin, p.Little), math.Max(sw.LittleMax, p.Little)
		}
	}
	if sw.LittleMax == 0 {
		sw.LittleMin = 0
	}
	// The regime is the disk model's reading of the sweep's curve, so
	// the sweep, the limit findings and the headline say one thing.
	if curve == nil {
		var fs []dirFacts
		for _, r := range append(append([]*result.Result(nil), members...), others...) {
			fs = append(fs, allFacts(r)...)
		}
		m := fitFacts(fs)
		for _, dir := range []string{"read", "write"} {
			if c, _ := m.Curve(members[len(members)-1], dir); c != nil && (curve == nil || len(c.Points) > len(curve.Points)) {
				curve = c
			}
		}
	}
	sw.setRegime(curve)
	return sw, true
}

// setRegime reads the sweep's regime and knee off its curve.
func (sw *Sweep) setRegime(c *Curve) {
	if c == nil || c.State == StateLatency || c.State == StateApproaching {
		sw.Regime, sw.Knee = regimeLatencyBound, 0
		return
	}
	// The knee as the advice says it, in measured depths.
	if below, reached := c.KneeBracket(); reached != nil {
		sw.Knee = reached.QD
		if below != nil && c.Level > 0 {
			sw.KneeBelow, sw.KneeBelowShare = below.QD, below.IOPS/c.Level
		}
	} else {
		for _, p := range sw.Points {
			if p.IOPS >= 0.9*sw.Max.IOPS {
				sw.Knee = p.Outstanding
				break
			}
		}
	}
	switch c.Kind {
	case result.CodeIOPSCap:
		sw.Regime = regimeIOPSCapped
	case result.CodeBandwidthCap:
		sw.Regime = regimeBWCapped
	case result.CodeCPU:
		sw.Regime = regimeCPU
	case result.CodeDevice:
		sw.Regime = regimeDevice
	default:
		sw.Regime = regimeCapped
	}
}

// sweepFinding states a sweep's regime with its evidence.
func sweepFinding(sw Sweep) result.Finding {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s; ", sw.Name, sw.Regime)
	switch {
	case sw.Knee > 0 && sw.KneeBelow > 0:
		fmt.Fprintf(&b, "knee between QD %d and QD %d (QD %d reaches the plateau, QD %d gets %.0f%% of it); ", sw.KneeBelow, sw.Knee, sw.Knee, sw.KneeBelow, 100*sw.KneeBelowShare)
	case sw.Knee > 0:
		fmt.Fprintf(&b, "QD %d reaches the plateau; ", sw.Knee)
	default:
		fmt.Fprintf(&b, "no plateau up to QD %d; ", sw.Points[len(sw.Points)-1].Outstanding)
	}
	fmt.Fprintf(&b, "max %s at QD %d with mean latency %s ms (p99 %s ms)",
		units.IOPS(sw.Max.IOPS), sw.Max.Outstanding, units.Millis(sw.Max.LatMeanNs), units.Millis(sw.Max.P99Ns))
	q1 := sw.Points[0]
	if q1.Outstanding == 1 && q1.LatMeanNs > 0 {
		fmt.Fprintf(&b, "; QD1 gives %s at %s ms, the most a client with one IO at a time can get", units.IOPS(q1.IOPS), units.Millis(q1.LatMeanNs))
	}
	sev := SevInfo
	switch {
	case sw.LittleMax == 0:
	case sw.LittleMin < 0.8 || sw.LittleMax > 1.2:
		sev = SevWarn
		var low []string
		for _, p := range sw.Points {
			if p.Little < 0.8 || p.Little > 1.2 {
				low = append(low, fmt.Sprintf("QD %d: %.2f", p.Outstanding, p.Little))
			}
		}
		fmt.Fprintf(&b, "; Little's law fails (IOPS x latency / QD = %s): fio did not keep the queue full (CPU-bound, engine capped or buffered IO; check iodepth_level)", strings.Join(low, ", "))
	default:
		fmt.Fprintf(&b, "; Little's law holds (%.2f..%.2f)", sw.LittleMin, sw.LittleMax)
	}
	ev := map[string]float64{"knee_qd": float64(sw.Knee), "knee_below_qd": float64(sw.KneeBelow), "max_iops": sw.Max.IOPS, "max_iops_qd": float64(sw.Max.Outstanding),
		"max_iops_lat_mean_ns": sw.Max.LatMeanNs, "max_iops_p99_ns": sw.Max.P99Ns, "little_min": sw.LittleMin, "little_max": sw.LittleMax,
		"qd1_iops": q1.IOPS, "qd1_lat_mean_ns": q1.LatMeanNs}
	return result.Finding{Kind: kindQD, Code: sw.code(), Severity: sev, Summary: b.String(), Evidence: ev}
}

// code names the sweep's regime.
func (sw Sweep) code() string {
	switch sw.Regime {
	case regimeLatencyBound:
		return result.CodeSweepLatency
	case regimeIOPSCapped:
		return result.CodeSweepIOPS
	case regimeBWCapped:
		return result.CodeSweepBW
	case regimeCapped:
		return result.CodeSweepCapped
	case regimeCPU:
		return result.CodeSweepCPU
	case regimeDevice:
		return result.CodeSweepDevice
	}
	return result.CodeSweepNoKnee
}
