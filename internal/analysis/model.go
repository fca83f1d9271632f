package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// The disk model. For one run and target, each direction and IO shape
// (block size, random or sequential) gets a curve: the IOPS and mean
// latency fio measured against the IOs it kept in flight (iodepth x
// numjobs). Little's law makes IOPS = QD / latency at every depth, so a
// curve has one of three shapes (docs/architecture.md, "The disk model"):
// latency-bound (IOPS grow with the queue, latency stays), a plateau
// (IOPS flat, latency grows with the queue), or the knee between. The fit
// is IOPS(q) = min(q / L0, C): L0 the base latency, C the ceiling, and
// q* = L0 x C the knee. What sets the plateau is read from the plateau's
// own tests: a rate paced flat (a throttle, above or inside the device),
// fio's or the host's CPU, or a saturated device. Every limit finding of a
// test is read off its curve, so the headline, the per-test findings and
// the advice say one thing.

// Curve states (result.State*).
const (
	StateLatency     = result.StateLatency
	StateApproaching = result.StateApproaching
	StatePlateau     = result.StatePlateau
	StateOneDepth    = result.StateOneDepth
)

// Model thresholds.
const (
	// inflationFlat: latency within 30% of the base is not queueing.
	inflationFlat = 1.3
	// inflationPlateau: latency four times the base: the depth is far
	// past the knee, so the rate there is the ceiling even where the knee
	// is gradual (a single-server queue gives 80% of its ceiling there).
	inflationPlateau = 4.0
	// plateauGain: a doubling that adds less than 10% is on the plateau;
	// scalingGain: one that adds 60% or more is still latency-bound.
	plateauGain = 0.10
	scalingGain = 0.60
	// plateauGain2: with only two depths past the knee, a plateau needs
	// a doubling that adds less than 5%.
	plateauGain2 = 0.05
	// onCeiling: points within 10% of the ceiling rest on it.
	onCeiling = 0.9
	// bwTolerance: two block sizes within 10% in MB/s share a bandwidth
	// cap (an IOPS cap gives small blocks a small fraction of the bytes).
	bwTolerance = 0.10
	// unsteadyPlateau: a plateau whose level moves by more than 5% from
	// depth to depth is not held by a throttle or a device.
	unsteadyPlateau = 0.05
	// riseTolerance: a plateau's deepest depth that gets 4% more than
	// the one before it, beyond both tests' own intervals, is still
	// being served more: a throttle gives every depth past its knee the
	// same rate.
	riseTolerance = 0.04
	// servedBusy: a device the host's own CPUs serve binds on them when
	// they are this busy on the plateau, and servedBusyRise points more
	// busy than at the curve's base depth (the IO made them busy, not a
	// neighbour).
	servedBusy     = 90
	servedBusyRise = 25
)

// CurveKey names a curve.
type CurveKey struct {
	RunID, Target, Dir string
	BlockSize          int64
	Random             bool
	// Buffered: through the page cache (fio's direct=0).
	Buffered bool
}

func (k CurveKey) String() string {
	pat := "seq"
	if k.Random {
		pat = "rand"
	}
	s := fmt.Sprintf("%s %s %s", k.Dir, pat, units.IOSize(k.BlockSize))
	if k.Buffered {
		s += " buffered"
	}
	return s
}

// CurvePoint is one depth of a curve; repeats of a test are merged.
type CurvePoint struct {
	QD    int    `json:"qd"`
	Jobs  int    `json:"jobs"`
	Test  string `json:"test"`
	Tests []string
	IOPS  float64 `json:"iops"`
	BW    float64 `json:"bw_bytes"`
	LatNs float64 `json:"lat_mean_ns"`
	// Fit is the model's IOPS at this depth, Inflation the mean latency
	// over the base.
	Fit       float64 `json:"fit_iops"`
	Inflation float64 `json:"inflation"`
	// CPUBound: fio's job or the host ran out of CPU in this test.
	CPUBound bool `json:"cpu_bound"`

	facts []dirFacts
	// alt are the tests of the same depth the curve did not take (fewer
	// jobs, a lower rate): on the curve at this depth all the same.
	alt []dirFacts
}

// Curve is the fitted model of one direction and IO shape.
type Curve struct {
	Key    CurveKey
	Points []CurvePoint
	// BaseLatNs is L0, the mean latency at the shallowest depth (BaseQD).
	BaseLatNs float64
	BaseQD    int
	// ServiceLatNs is the fit's L0: the latency with no queueing at all,
	// at or below BaseLatNs (a gradual knee queues a little even there).
	ServiceLatNs float64
	// Ceiling is the fitted C in IOPS (0 when the curve does not bend
	// within what was measured), CeilingLow..CeilingHigh the range of
	// the fits about as good, Sharpness the knee's (1 gradual, large a
	// sharp corner); CeilingBW is C in bytes/s.
	Ceiling, CeilingBW      float64
	CeilingLow, CeilingHigh float64
	Sharpness               float64
	// Level is the headline rate (IOPS): the plateau's measured level, or
	// the best rate measured; LevelBW the same in bytes/s, RateLow and
	// RateHigh its interval.
	Level, LevelBW    float64
	RateLow, RateHigh float64
	// Knee is q* = L0 x C, the depth where IOPS stop growing in
	// proportion (0 when the curve does not bend).
	Knee float64
	// State is StateLatency, StateApproaching, StatePlateau or
	// StateOneDepth; Kind is the limit code that binds the curve's best
	// rate, Why the evidence for it in words.
	State string
	Kind  string
	Why   string
	// Unsteady is how far the plateau's level moves between its depths,
	// (max - min) / level.
	Unsteady float64
	// Residual is the root mean square of ln(measured / fitted) over the
	// points.
	Residual float64
	// Gain is the relative IOPS gain per doubling between the two
	// deepest points (0 with one point).
	Gain float64
	// CPURetry, when the plan ran the deepest depth again with more jobs:
	// the rate with one job and with more.
	CPURetry *CPURetry
	// baseBusy is the host's CPU busy % at the base depth (-1 unknown).
	baseBusy float64
}

// CPURetry compares one depth with one fio job and with more.
type CPURetry struct {
	QD             int
	OneJob, More   float64
	Jobs           int
	FioWasTheLimit bool
}

// Deepest is the deepest point.
func (c *Curve) Deepest() *CurvePoint { return &c.Points[len(c.Points)-1] }

// Best is the point with the most IOPS.
func (c *Curve) Best() *CurvePoint {
	b := &c.Points[0]
	for i := range c.Points {
		if c.Points[i].IOPS > b.IOPS {
			b = &c.Points[i]
		}
	}
	return b
}

// Large says the curve measures bandwidth (large blocks).
func (c *Curve) Large() bool { return c.Key.BlockSize >= largeBlock }

// Model is every curve of a set of results.
type Model struct {
	Curves []Curve
	// at finds each direction's curve and point at once, so reading
	// every test off a model of many tests stays linear (fitFacts builds
	// it; without it Curve searches).
	at map[factKey]factAt
}

type factKey struct {
	r   *result.Result
	dir string
}

// factAt is where a direction sits on the model: its curve, its point
// and, when the point took it, its facts as the curve knows them.
type factAt struct {
	c *Curve
	p *CurvePoint
	f *dirFacts
}

// index records where every direction on the model sits: the first
// curve and point that hold it, as Curve's search finds it, and its
// last facts there, as limitFinding reads them.
func (m *Model) index() {
	m.at = map[factKey]factAt{}
	for i := range m.Curves {
		c := &m.Curves[i]
		for j := range c.Points {
			p := &c.Points[j]
			for k := range p.facts {
				key := factKey{p.facts[k].r, p.facts[k].dir}
				if e, ok := m.at[key]; !ok || e.p == p {
					m.at[key] = factAt{c, p, &p.facts[k]}
				}
			}
			for k := range p.alt {
				key := factKey{p.alt[k].r, p.alt[k].dir}
				if _, ok := m.at[key]; !ok {
					m.at[key] = factAt{c: c, p: p}
				}
			}
		}
	}
}

// locate is Curve, with the facts of r's direction as its point took
// them (nil when the point holds it among the tests it did not take).
func (m *Model) locate(r *result.Result, dir string) (*Curve, *CurvePoint, *dirFacts) {
	if m.at == nil {
		c, p := m.Curve(r, dir)
		if p == nil {
			return c, p, nil
		}
		var f *dirFacts
		for i := range p.facts {
			if p.facts[i].r == r && p.facts[i].dir == dir {
				f = &p.facts[i]
			}
		}
		return c, p, f
	}
	if _, ok := curveKey(r, dir); !ok {
		return nil, nil, nil
	}
	e := m.at[factKey{r, dir}]
	return e.c, e.p, e.f
}

// Curve finds the curve holding r's direction dir.
func (m *Model) Curve(r *result.Result, dir string) (*Curve, *CurvePoint) {
	if m.at != nil {
		c, p, _ := m.locate(r, dir)
		return c, p
	}
	k, ok := curveKey(r, dir)
	if !ok {
		return nil, nil
	}
	for i := range m.Curves {
		c := &m.Curves[i]
		if c.Key != k {
			continue
		}
		for j := range c.Points {
			for _, fs := range [][]dirFacts{c.Points[j].facts, c.Points[j].alt} {
				for _, f := range fs {
					if f.r == r {
						return c, &c.Points[j]
					}
				}
			}
		}
	}
	return nil, nil
}

// curveKey is the curve r's direction belongs to; false when the test is
// not on a curve (mixed, buffered, syncing, failed, or a probe).
func curveKey(r *result.Result, dir string) (CurveKey, bool) {
	t := r.Test
	if r.Status != "ok" || dir == "sync" || t.Fdatasync > 0 || t.Group == result.GroupLayout || t.Group == result.GroupBurstCheck {
		return CurveKey{}, false
	}
	var random bool
	switch t.RW {
	case "randread", "randwrite", "randtrim":
		random = true
	case "read", "write", "trim":
	default:
		return CurveKey{}, false
	}
	bs := t.BlockSize
	if bs <= 0 {
		return CurveKey{}, false
	}
	run, target := r.RunID, targetKey(r)
	if r.Suite == "fio" {
		// Plain fio output, often a file per depth: one curve across
		// the files, as Annotate reads them as one sweep.
		run, target = "fio", ""
	}
	return CurveKey{RunID: run, Target: target, Dir: dir, BlockSize: bs, Random: random, Buffered: t.Buffered()}, true
}

// modelScope is the run and target whose curves r's can be: curveKey's,
// and crossSizes compares curves within one only.
func modelScope(r *result.Result) [2]string {
	if r.Suite == "fio" {
		return [2]string{"fio", ""}
	}
	return [2]string{r.RunID, targetKey(r)}
}

// FitModel fits a curve per direction and IO shape over rs. Results of
// several runs or targets give curves of their own.
func FitModel(rs []*result.Result) Model {
	var fs []dirFacts
	for _, r := range rs {
		fs = append(fs, allFacts(r)...)
	}
	return fitFacts(fs)
}

func fitFacts(fs []dirFacts) Model {
	byKey := map[CurveKey][]dirFacts{}
	var order []CurveKey
	for _, f := range fs {
		k, ok := curveKey(f.r, f.dir)
		if !ok || f.r.Test.IOEngine == "null" {
			continue // (the null engine measured no disk)
		}
		if _, seen := byKey[k]; !seen {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], f)
	}
	var m Model
	for _, k := range order {
		m.Curves = append(m.Curves, fitCurve(k, byKey[k]))
	}
	crossSizes(&m)
	m.index()
	return m
}

// point merges the tests of one depth: the mean rate, latency weighted by
// IOs. Tests of the same depth with more jobs (a CPU retry) are kept apart
// by fitCurve.
func point(fs []dirFacts) CurvePoint {
	p := CurvePoint{QD: fs[0].qd, Jobs: fs[0].jobs, Test: fs[0].r.Test.Name, facts: fs}
	var latSum, n float64
	named := map[string]bool{}
	for _, f := range fs {
		p.IOPS += f.d.IOPS
		p.BW += f.d.BWBytes
		w := math.Max(float64(f.d.Lat.N), 1)
		latSum += f.latNs * w
		n += w
		p.CPUBound = p.CPUBound || f.cpuBound(false)
		if !named[f.r.Test.Name] {
			named[f.r.Test.Name] = true
			p.Tests = append(p.Tests, f.r.Test.Name)
		}
	}
	p.IOPS /= float64(len(fs))
	p.BW /= float64(len(fs))
	if n > 0 {
		p.LatNs = latSum / n
	}
	if p.LatNs <= 0 && p.IOPS > 0 {
		p.LatNs = float64(p.QD) / p.IOPS * 1e9 // Little's law, when fio gave no latency
	}
	return p
}

func fitCurve(k CurveKey, fs []dirFacts) Curve {
	c := Curve{Key: k}
	type qj struct{ q, jobs int }
	groups := map[qj][]dirFacts{}
	for _, f := range fs {
		groups[qj{f.qd, f.jobs}] = append(groups[qj{f.qd, f.jobs}], f)
	}
	// One point per depth: with several job counts at one depth (the
	// plan's CPU retry), the curve takes the faster, and says so.
	byQD := map[int]CurvePoint{}
	for key, g := range groups {
		p := point(g)
		prev, ok := byQD[key.q]
		if !ok {
			byQD[key.q] = p
			continue
		}
		lo, hi := prev, p
		if lo.IOPS > hi.IOPS {
			lo, hi = hi, lo
		}
		hi.alt = append(append(hi.alt, lo.facts...), lo.alt...)
		byQD[key.q] = hi
		if lo.Jobs != hi.Jobs && (c.CPURetry == nil || key.q > c.CPURetry.QD) {
			one, more := lo, hi
			if one.Jobs > more.Jobs {
				one, more = more, one
			}
			c.CPURetry = &CPURetry{QD: key.q, OneJob: one.IOPS, More: more.IOPS, Jobs: more.Jobs,
				FioWasTheLimit: more.IOPS >= (1+plateauGain)*one.IOPS}
		}
	}
	for _, p := range byQD {
		c.Points = append(c.Points, p)
	}
	sort.Slice(c.Points, func(i, j int) bool { return c.Points[i].QD < c.Points[j].QD })
	pts := c.Points
	c.BaseQD, c.BaseLatNs = pts[0].QD, pts[0].LatNs
	for _, p := range pts {
		// Latency cannot fall as the queue deepens but for noise: the
		// least latency of the shallow points is the base.
		if p.QD <= 2*c.BaseQD && p.LatNs > 0 && p.LatNs < c.BaseLatNs {
			c.BaseLatNs = p.LatNs
		}
	}
	svc := -1.0
	for _, f := range pts[0].facts {
		if cv := histCV(&f.d.Hist); cv > 0 {
			svc = cv
		}
	}
	if svc < 0 {
		// No histogram: the base depth's percentiles, read as a
		// log-normal's.
		for _, f := range pts[0].facts {
			if cv := pctCV(&f.d.Lat); cv > 0 {
				svc = cv
			}
		}
	}
	for i := range c.Points {
		if c.BaseLatNs > 0 {
			c.Points[i].Inflation = c.Points[i].LatNs / c.BaseLatNs
		}
		for j := range c.Points[i].facts {
			c.Points[i].facts[j].serviceCV = svc
		}
	}
	c.fitShape()
	deep := c.Deepest()
	// The points past the knee (latency grown): how much each doubling
	// of the queue still adds there, by least squares on log IOPS.
	// They are the deepest points whose latency has grown, all of them: a
	// middle point slowed by noise, with deeper ones back at the base, is
	// not past the knee.
	from := len(pts)
	for from > 0 && pts[from-1].Inflation >= inflationFlat {
		from--
	}
	past := pts[from:]
	// The gain is judged over the top of the curve: the points past the
	// knee within a quarter of the best rate (the bend itself rises fast).
	best := c.Best()
	var top []CurvePoint
	for _, p := range past {
		if p.IOPS >= 0.75*best.IOPS {
			top = append(top, p)
		}
	}
	switch {
	case len(top) >= 2:
		c.Gain = gainOver(top)
	case len(pts) >= 2:
		c.Gain = gainPerDoubling(SweepPoint{Outstanding: pts[len(pts)-2].QD, IOPS: pts[len(pts)-2].IOPS},
			SweepPoint{Outstanding: deep.QD, IOPS: deep.IOPS})
	}
	switch {
	case len(pts) == 1:
		c.State = StateOneDepth
	case len(past) == 0 || c.Gain >= scalingGain && (len(top) >= 2 || deep.QD <= 2*pts[len(pts)-2].QD):
		// Latency at its base, or the rate still scaling nearly with the
		// queue (a loaded machine can inflate latency a little). Over a
		// gap of several doublings the mean gain hides a bend: QD1 and
		// QD32 alone, latency grown, say only that the knee is between.
		c.State = StateLatency
	case len(top) >= 3 && c.Gain < plateauGain, len(top) == 2 && c.Gain < plateauGain2:
		// Two depths alone decide a plateau only when clearly flat: a
		// gain near the threshold is within what a loaded machine moves
		// one depth by, and the same disk would be called a plateau in
		// one run and rising in the next.
		c.State = StatePlateau
	case len(past) == 1 && past[0].Inflation >= inflationPlateau && deep.IOPS >= onCeiling*best.IOPS:
		// Only the deepest is past the knee, and so far past it that its
		// rate is the ceiling: the plateau rests on that one point.
		c.State = StatePlateau
	case c.Gain <= 0:
		// Past the knee, the deeper queue gave no more, or less (a loaded
		// machine, or a device that slows when crowded): nothing rises,
		// the best rate measured is the ceiling.
		c.State = StatePlateau
	default:
		c.State = StateApproaching
	}
	c.setLevel()
	c.Kind, c.Why = c.plateauKind()
	return c
}

// gainOver is the relative IOPS gain per doubling of the queue, fitted by
// least squares over pts (log IOPS against log2 depth).
func gainOver(pts []CurvePoint) float64 {
	var sx, sy, sxx, sxy, n float64
	for _, p := range pts {
		if p.IOPS <= 0 {
			continue
		}
		x, y := math.Log2(float64(p.QD)), math.Log(p.IOPS)
		sx, sy, sxx, sxy, n = sx+x, sy+y, sxx+x*x, sxy+x*y, n+1
	}
	den := n*sxx - sx*sx
	if n < 2 || den <= 0 {
		return 0
	}
	return math.Exp((n*sxy-sx*sy)/den) - 1
}

// Sharpnesses the fit tries: 1 is a gradual knee (a device whose queue
// grows as in M/M/1), large values the sharp corner of a token bucket.
var sharpnesses = [...]float64{1, 1.5, 2, 3, 4, 6, 8, 16, 64}

// huberDelta is where the fit's loss turns from squared to linear (10%
// in log IOPS).
const huberDelta = 0.1

// fitIOPS is the model at depth q: the smooth minimum of q / L0 (latency
// bound) and C (the ceiling), with sharpness p, in logs to keep large
// powers finite.
func fitIOPS(q, l0s, ceiling, p float64) float64 {
	a := -p * math.Log(q/l0s)
	if ceiling <= 0 || math.IsInf(ceiling, 1) {
		return q / l0s
	}
	b := -p * math.Log(ceiling)
	m := math.Max(a, b)
	return math.Exp(-(m + math.Log(math.Exp(a-m)+math.Exp(b-m))) / p)
}

// fitShape fits C and the knee's sharpness over the curve's points by
// least squares on log IOPS, with L0 the measured base latency, and sets
// each point's fitted rate and the residual. No bend (the best fit has
// no finite ceiling) leaves Ceiling 0.
func (c *Curve) fitShape() {
	l0m := c.BaseLatNs / 1e9
	if l0m <= 0 || len(c.Points) == 0 {
		return
	}
	base := c.Points[0]
	for _, p := range c.Points {
		if p.LatNs > 0 && p.LatNs/1e9 <= l0m*1.0001 && p.QD <= 2*c.BaseQD {
			base = p
		}
	}
	xmax := c.Best().IOPS
	// l0 is the latency with no queueing that puts the fit through the
	// base point: with a gradual knee, even the base depth queues a
	// little, so its measured latency is above it.
	l0 := func(ceiling, p float64) float64 {
		xb := base.IOPS
		if ceiling <= 0 || xb <= 0 || ceiling <= xb*(1+1e-6) {
			return l0m
		}
		v := math.Pow(xb, -p) - math.Pow(ceiling, -p)
		if v <= 0 {
			return l0m
		}
		return float64(base.QD) * math.Pow(v, 1/p)
	}
	// The loss is Huber's on log IOPS: squared within 10%, linear past
	// it, so one depth slowed by a neighbour does not bend the fit.
	sse := func(ceiling, p float64) float64 {
		var s float64
		l := l0(ceiling, p)
		for _, pt := range c.Points {
			if pt.IOPS > 0 {
				d := math.Abs(math.Log(pt.IOPS / fitIOPS(float64(pt.QD), l, ceiling, p)))
				if d <= huberDelta {
					s += d * d
				} else {
					s += 2*huberDelta*d - huberDelta*huberDelta
				}
			}
		}
		return s
	}
	type fit struct{ ceiling, p, sse float64 }
	var fits []fit
	for _, p := range sharpnesses {
		// Golden section over log C; a ceiling 50 times the best rate
		// is no ceiling within what was measured.
		lo, hi := math.Log(0.5*xmax), math.Log(50*xmax)
		g := (math.Sqrt(5) - 1) / 2
		x1, x2 := hi-g*(hi-lo), lo+g*(hi-lo)
		f1, f2 := sse(math.Exp(x1), p), sse(math.Exp(x2), p)
		for i := 0; i < 60; i++ {
			if f1 <= f2 {
				hi, x2, f2 = x2, x1, f1
				x1 = hi - g*(hi-lo)
				f1 = sse(math.Exp(x1), p)
			} else {
				lo, x1, f1 = x1, x2, f2
				x2 = lo + g*(hi-lo)
				f2 = sse(math.Exp(x2), p)
			}
		}
		cc := math.Exp((lo + hi) / 2)
		fits = append(fits, fit{cc, p, sse(cc, p)})
	}
	none := sse(0, 1)
	best := fit{0, 0, none}
	for _, f := range fits {
		if f.sse < best.sse-1e-12 {
			best = f
		}
	}
	n := float64(len(c.Points))
	if best.ceiling >= 40*xmax || best.p == 0 {
		best = fit{0, 0, none}
	}
	c.Ceiling, c.Sharpness = best.ceiling, best.p
	c.ServiceLatNs = l0(c.Ceiling, math.Max(c.Sharpness, 1)) * 1e9
	// The ceiling's interval: every sharpness that fits about as well (a
	// few percent per point).
	c.CeilingLow, c.CeilingHigh = c.Ceiling, c.Ceiling
	if c.Ceiling > 0 {
		for _, f := range fits {
			if f.sse <= best.sse+n*0.03*0.03 && f.ceiling < 40*xmax {
				c.CeilingLow, c.CeilingHigh = math.Min(c.CeilingLow, f.ceiling), math.Max(c.CeilingHigh, f.ceiling)
			}
		}
		c.Knee = math.Max(1, c.ServiceLatNs/1e9*c.Ceiling)
	}
	var ss float64
	for i := range c.Points {
		pt := &c.Points[i]
		pt.Fit = fitIOPS(float64(pt.QD), c.ServiceLatNs/1e9, c.Ceiling, math.Max(c.Sharpness, 1))
		if pt.IOPS > 0 {
			d := math.Log(pt.IOPS / pt.Fit)
			ss += d * d
		}
	}
	c.Residual = math.Sqrt(ss / n)
}

// setLevel sets the curve's headline rate: on a plateau, the points that
// reached it (within 10% of the best, with latency grown); otherwise the
// best point. RateLow..RateHigh is its interval: the spread of those
// points and each one's own second-to-second spread over its length.
func (c *Curve) setLevel() {
	best := c.Best()
	on := []*CurvePoint{best}
	if c.State == StatePlateau {
		on = on[:0]
		for i := range c.Points {
			p := &c.Points[i]
			if p.IOPS >= onCeiling*best.IOPS && (p.Inflation >= inflationFlat || p == best) {
				on = append(on, p)
			}
		}
	}
	var logSum float64
	lo, hi := math.Inf(1), 0.0
	for _, p := range on {
		logSum += math.Log(p.IOPS)
		lo, hi = math.Min(lo, p.IOPS), math.Max(hi, p.IOPS)
		for _, f := range p.facts {
			if e := f.meanErr(); e > 0 {
				lo, hi = math.Min(lo, p.IOPS*(1-e)), math.Max(hi, p.IOPS*(1+e))
			}
		}
	}
	c.Level = math.Exp(logSum / float64(len(on)))
	// How much the plateau moves from depth to depth: a throttle or a
	// device holds its level, CPU shared with other work does not.
	if c.State == StatePlateau {
		first := best.QD
		for _, p := range on {
			first = min(first, p.QD)
		}
		lo, hi := math.Inf(1), 0.0
		for _, p := range c.Points {
			if p.QD >= first {
				lo, hi = math.Min(lo, p.IOPS), math.Max(hi, p.IOPS)
			}
		}
		c.Unsteady = (hi - lo) / c.Level
	}
	c.LevelBW = c.Level * float64(c.Key.BlockSize)
	c.RateLow, c.RateHigh = lo, hi
	if c.State == StateOneDepth || c.Ceiling == 0 && c.State == StatePlateau {
		c.Ceiling = c.Level
	}
	c.CeilingBW = c.Ceiling * float64(c.Key.BlockSize)
}

// plateauKind says what binds the curve's best rate, with why.
func (c *Curve) plateauKind() (string, string) {
	deep := c.Deepest()
	switch c.State {
	case StateLatency:
		return result.CodeLatency, fmt.Sprintf("latency stays at %s per IO up to QD%d (%s at QD%d): a deeper queue gives more",
			units.Latency(c.BaseLatNs), deep.QD, units.Latency(deep.LatNs), deep.QD)
	case StateApproaching:
		return result.CodeLatency, fmt.Sprintf("still rising %.0f%% per doubling at QD%d, latency %.1fx the base: the ceiling is above %s IOPS; a deeper queue gives more",
			100*c.Gain, deep.QD, deep.Inflation, units.Figure(deep.IOPS))
	}
	// On the plateau (or one depth): its tests clearly past the knee
	// (latency at least doubled; right at the knee the queue has not yet
	// shown where it sits) each say what binds them, and the plateau is
	// what most of them say; on a tie, what binds where it begins (deeper
	// tests can add limits of their own: a device's queue limit behind a
	// throttle, a neighbour's load).
	var on []*CurvePoint
	clear := false
	for i := range c.Points {
		clear = clear || c.Points[i].Inflation >= 2 && c.Points[i].IOPS >= onCeiling*c.Best().IOPS
	}
	for i := range c.Points {
		p := &c.Points[i]
		if p.IOPS < onCeiling*c.Best().IOPS || p.Inflation < inflationFlat && len(c.Points) > 1 && p != c.Best() || clear && p.Inflation < 2 {
			continue
		}
		on = append(on, p)
	}
	if len(on) == 0 {
		on = []*CurvePoint{deep}
	}
	c.baseBusy = -1
	for _, f := range c.Points[0].facts {
		c.baseBusy = math.Max(c.baseBusy, f.hostBusy)
	}
	rise, riseWhy := plateauRise(on)
	// How flat the plateau is, pooled over its tests.
	var ratios []float64
	for _, p := range on {
		for _, f := range p.facts {
			if r := f.paceRatio(); r >= 0 {
				ratios = append(ratios, r)
			}
		}
	}
	pooled := 0.0
	if len(ratios) > 0 {
		pooled = math.Max(median(ratios), 1e-6)
	}
	if c.CPURetry != nil && c.CPURetry.FioWasTheLimit && c.State == StatePlateau && deep.Jobs > 1 && deep.CPUBound {
		return result.CodeCPU, fmt.Sprintf("with %d jobs the rate rose from %s to %s IOPS and the CPU is spent again", c.CPURetry.Jobs,
			units.Figure(c.CPURetry.OneJob), units.Figure(c.CPURetry.More))
	}
	votes := map[string]int{}
	whys := map[string]string{}
	first := ""
	for _, p := range on {
		// The test of the depth with the longest series.
		f := p.facts[0]
		for _, g := range p.facts[1:] {
			if g.windows > f.windows {
				f = g
			}
		}
		f.pooled = pooled
		f.rise, f.riseWhy = rise, riseWhy
		code, why := kindOf(f, c)
		votes[code]++
		if _, ok := whys[code]; !ok {
			whys[code] = why
		}
		if first == "" {
			first = code
		}
	}
	win := first
	for code, n := range votes {
		if n > votes[win] {
			win = code
		}
	}
	why := whys[win]
	if n := len(on); n > 1 && votes[win] < n {
		why += fmt.Sprintf(" (%d of its %d depths say so)", votes[win], n)
	}
	return win, why
}

// plateauRise is how much more the deepest of a plateau's depths got than
// the one before it, beyond both tests' own 95% intervals, when that is
// more than riseTolerance (else 0), with the two depths in words.
func plateauRise(on []*CurvePoint) (float64, string) {
	if len(on) < 2 {
		return 0, ""
	}
	a, b := on[len(on)-2], on[len(on)-1]
	if a.IOPS <= 0 {
		return 0, ""
	}
	errOf := func(p *CurvePoint) float64 {
		e := 0.0
		for _, f := range p.facts {
			e = math.Max(e, f.meanErr())
		}
		return e
	}
	rise := b.IOPS/a.IOPS - 1
	if len(on) >= 3 {
		// Over three depths or more, the fitted gain per doubling: a
		// throttle's is nil, a server still creeping up is not.
		pts := make([]CurvePoint, len(on))
		for i, p := range on {
			pts[i] = *p
		}
		if g := gainOver(pts); g > riseTolerance*3/4 {
			a = on[0]
			return g, fmt.Sprintf("the rate still rose %.0f%% per doubling from QD%d to QD%d (%s to %s IOPS), where a throttle gives every depth past its knee the same rate",
				100*g, a.QD, b.QD, units.Figure(a.IOPS), units.Figure(b.IOPS))
		}
	}
	if rise-errOf(a)-errOf(b) <= riseTolerance {
		return 0, ""
	}
	return rise, fmt.Sprintf("QD%d still got %.0f%% more than QD%d (%s against %s IOPS), where a throttle gives every depth past its knee the same rate",
		b.QD, 100*rise, a.QD, units.Figure(b.IOPS), units.Figure(a.IOPS))
}

// kindOf reads what binds one test on a plateau (or the only test of a
// curve) from its own evidence: a paced rate is a throttle, a spent CPU
// the CPU, IO held above the device a throttle there, IO queued in the
// device with latency grown in proportion a saturated device.
func kindOf(f dirFacts, c *Curve) (string, string) {
	capCode := result.CodeIOPSCap
	if f.bs >= largeBlock {
		capCode = result.CodeBandwidthCap
	}
	if rt := float64(f.d.RuntimeMs) / 1000; rt > 0 && rt < 1 {
		return result.CodeUnknown, fmt.Sprintf("%.2f s of IO is too short to tell what binds it", rt)
	}
	if paced, why := f.paced(); paced {
		return capCode, why
	}
	if f.cpuBound(c != nil && c.Unsteady > unsteadyPlateau) {
		return result.CodeCPU, f.cpuWhy()
	}
	// The queue grew above the device, not in it: each IO's time in the
	// device stayed near the base latency while fio's doubled, so most
	// of it was spent above the device (an IO that spends nearly all its
	// time in the device waits there, whatever the base).
	waitAbove := c != nil && c.BaseLatNs > 0 && f.devAwaitMs > 0 && f.devQueue >= 0 &&
		f.devAwaitMs*1e6 < 2*c.BaseLatNs && f.latNs > 2*c.BaseLatNs && f.devAwaitMs*1e6 < 0.5*f.latNs
	if f.held() || waitAbove {
		s := fmt.Sprintf("IO is held above the device: fio keeps %d in flight, the device's queue holds %.1f", f.qd, f.devQueue)
		if waitAbove {
			s = fmt.Sprintf("IO waits above the device: each spends %s in it, about its base %s, of %s in all",
				units.Latency(f.devAwaitMs*1e6), units.Latency(c.BaseLatNs), units.Latency(f.latNs))
		}
		if f.d.Lat.P50Ns > 0 && f.d.Lat.P999Ns > 20*f.d.Lat.P50Ns {
			s += fmt.Sprintf(", with latency p50 %s but p99.9 %s: a throttle releasing IO in slices", units.Latency(f.d.Lat.P50Ns), units.Latency(f.d.Lat.P999Ns))
		}
		return capCode, s
	}
	if c != nil && c.State == StatePlateau && f.hostServed != "" && f.hostBusy >= servedBusy && c.baseBusy >= 0 && f.hostBusy-c.baseBusy >= servedBusyRise {
		// The host's own CPUs serve this device (its queue fills while
		// the IO waits for them): busy with the IO, they bind.
		return result.CodeCPU, fmt.Sprintf("this host's own CPUs serve the device (%s), and they were %.0f%% busy at QD%d against %.0f%% at QD%d: the CPU binds, not the device; a larger VM, or a device of its own, does more",
			f.hostServed, f.hostBusy, f.qd, c.baseBusy, c.BaseQD)
	}
	if c != nil && c.State == StatePlateau && f.devQueue >= 0 {
		vary := fmt.Sprintf("varies %.1f%% second to second", 100*math.Max(f.spread1s, 0))
		if f.fineCV >= 0 {
			vary = fmt.Sprintf("varies %.1f%% from one %s window to the next", 100*f.fineCV, units.FormatSeconds(f.fineS))
		}
		s := fmt.Sprintf("latency grows with the queue (%.1fx the base at QD%d) while the rate %s, as the device's own service does, not a throttle's pace",
			f.latNs/math.Max(c.BaseLatNs, 1), f.qd, vary)
		if f.rise > 0 {
			s = fmt.Sprintf("latency grows with the queue (%.1fx the base at QD%d) and %s: the device's own service sets the rate (it %s)",
				f.latNs/math.Max(c.BaseLatNs, 1), f.qd, f.riseWhy, vary)
		}
		if f.full() {
			s += fmt.Sprintf("; its queue holds %.1f of %d IOs (util %.0f%%)", f.devQueue, f.qd, f.devUtil)
		}
		return result.CodeDevice, s
	}
	if c != nil && c.State == StatePlateau && f.devQueue < 0 {
		return result.CodeUnknown, fmt.Sprintf("a plateau at %s IOPS, but with no device samples or time series a throttle cannot be told from a saturated device",
			units.Figure(c.Best().IOPS))
	}
	if f.qd == 1 {
		return result.CodeLatency, fmt.Sprintf("one IO at a time: %s per IO allows %s IOPS; no deeper test to compare", units.Latency(f.latNs), units.Figure(1e9/f.latNs))
	}
	return result.CodeUnknown, fmt.Sprintf("one depth only (QD%d, %s per IO): latency cannot be told from a ceiling without a test at another depth (diagnose runs them)",
		f.qd, units.Latency(f.latNs))
}

// isCapped says whether c's kind is a cap, which crossSizes compares
// across block sizes.
func isCapped(c *Curve) bool {
	return c.Kind == result.CodeIOPSCap || c.Kind == result.CodeBandwidthCap
}

// crossOne is crossSizes for the one capped curve a against the other
// capped curves, in the model's order. It reads only what crossSizes
// leaves as it is (their keys, levels and that they are capped), so a
// curve's answer does not depend on which were compared before it.
func crossOne(a *Curve, others []*Curve) {
	for _, b := range others {
		if b.Key.RunID != a.Key.RunID || b.Key.Target != a.Key.Target || b.Key.Dir != a.Key.Dir || b.Key.BlockSize == a.Key.BlockSize || !isCapped(b) {
			continue
		}
		switch {
		case a.LevelBW > 0 && b.LevelBW > 0 && math.Min(a.LevelBW, b.LevelBW) >= (1-bwTolerance)*math.Max(a.LevelBW, b.LevelBW):
			// Small blocks at the MB/s of large ones: IOPS caps give
			// small blocks far fewer bytes.
			if a.Kind != result.CodeBandwidthCap {
				a.Kind, a.Why = result.CodeBandwidthCap, a.Why+fmt.Sprintf("; %s moves the same %s MB/s: the cap is on bandwidth", b.Key, units.Figure(b.LevelBW/1e6))
			}
		case sameLevel(a.Level, b.Level):
			if a.Kind != result.CodeIOPSCap {
				a.Kind, a.Why = result.CodeIOPSCap, a.Why+fmt.Sprintf("; %s runs at the same %s IOPS: the cap is on IOPS", b.Key, units.Figure(b.Level))
			}
		}
	}
}

// PointCode is what binds one point of a curve: latency below the knee,
// the curve's kind on the plateau.
func (c *Curve) PointCode(p *CurvePoint) string {
	if c.State == StateLatency || c.State == StateApproaching {
		return result.CodeLatency
	}
	if c.State == StatePlateau && p.Inflation < inflationFlat && p.IOPS < onCeiling*c.Level {
		return result.CodeLatency
	}
	return c.Kind
}

// KneeBracket is the knee read off the measured depths: reached, the
// shallowest depth measured at the plateau's level (within 10%), and
// below, the deepest depth measured short of it (0 when the first depth
// measured already reaches it). 0, 0 when the curve has no plateau.
func (c *Curve) KneeBracket() (below, reached *CurvePoint) {
	if c.State != StatePlateau && c.State != StateOneDepth {
		return nil, nil
	}
	for i := range c.Points {
		p := &c.Points[i]
		if p.IOPS >= onCeiling*c.Level {
			return below, p
		}
		below = p
	}
	return nil, nil
}

// KneeWords says where the plateau begins in measured depths: "QD32
// reaches it; QD4 gets 49%", or "QD1 reaches it"; "" without a plateau.
func (c *Curve) KneeWords() string {
	below, reached := c.KneeBracket()
	return kneeWords(below, reached, c.Level)
}

func kneeWords(below, reached *CurvePoint, level float64) string {
	if reached == nil {
		return ""
	}
	s := fmt.Sprintf("QD%d reaches it", reached.QD)
	if below != nil && level > 0 {
		s += fmt.Sprintf("; QD%d gets %.0f%%", below.QD, 100*below.IOPS/level)
	}
	return s
}

// Summary says the curve in one line.
func (c *Curve) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", c.Key)
	qds := make([]string, len(c.Points))
	for i, p := range c.Points {
		qds[i] = fmt.Sprintf("QD%d %s", p.QD, units.Figure(p.IOPS))
	}
	switch c.State {
	case StateLatency:
		fmt.Fprintf(&b, "latency-bound up to QD%d: %s per IO at every depth measured, a deeper queue gives more", c.Deepest().QD, units.Latency(c.BaseLatNs))
	case StateApproaching:
		fmt.Fprintf(&b, "no plateau by QD%d: %s", c.Deepest().QD, c.Why)
	case StatePlateau:
		fmt.Fprintf(&b, "plateau at %s IOPS (%s MB/s, %s to %s): %s, base latency %s; %s: %s", units.Figure(c.Level), units.Figure(c.LevelBW/1e6),
			units.Figure(c.RateLow), units.Figure(c.RateHigh), c.KneeWords(), units.Latency(c.BaseLatNs), limitName(c.Kind), c.Why)
	case StateOneDepth:
		fmt.Fprintf(&b, "one depth: %s: %s", limitName(c.Kind), c.Why)
	}
	fmt.Fprintf(&b, " [%s; fit residual %.2f]", strings.Join(qds, ", "), c.Residual)
	return b.String()
}

// limitName is a limit code in words.
func limitName(code string) string {
	switch code {
	case result.CodeIOPSCap:
		return "a flat IOPS cap"
	case result.CodeBandwidthCap:
		return "a flat bandwidth cap"
	case result.CodeLatency:
		return "latency"
	case result.CodeDevice:
		return "the device saturates"
	case result.CodeCPU:
		return "the CPU"
	}
	return "unknown"
}

// modelFinding records a curve's fit on the result that completed it:
// its parameters, how well it fits and the points it rests on.
func modelFinding(c *Curve) result.Finding {
	ev := map[string]float64{"io_size_bytes": float64(c.Key.BlockSize), "base_lat_ns": c.BaseLatNs, "base_qd": float64(c.BaseQD),
		"service_lat_ns": c.ServiceLatNs, "ceiling_iops": c.Ceiling, "ceiling_bw_bytes": c.CeilingBW, "ceiling_low": c.CeilingLow, "ceiling_high": c.CeilingHigh,
		"sharpness": c.Sharpness, "level_iops": c.Level, "rate_low": c.RateLow, "rate_high": c.RateHigh,
		"knee_qd": c.Knee, "residual": c.Residual, "points": float64(len(c.Points)), "deepest_qd": float64(c.Deepest().QD),
		"deepest_iops": c.Deepest().IOPS, "best_iops": c.Best().IOPS, "gain_per_doubling": c.Gain,
		"state": float64(result.StateNumber(c.State)), "random": b2f(c.Key.Random), "buffered": b2f(c.Key.Buffered)}
	for _, p := range c.Points {
		ev[fmt.Sprintf("qd%d_iops", p.QD)] = p.IOPS
		ev[fmt.Sprintf("qd%d_lat_ns", p.QD)] = p.LatNs
	}
	if r := c.CPURetry; r != nil {
		ev["cpu_retry_qd"], ev["cpu_retry_one_job"], ev["cpu_retry_more"], ev["cpu_retry_jobs"] = float64(r.QD), r.OneJob, r.More, float64(r.Jobs)
	}
	return result.Finding{Kind: result.KindModel, Code: c.Kind, Severity: SevInfo, Dir: c.Key.Dir, Summary: c.Summary(), Evidence: ev}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// pctCV is the coefficient of variation of a log-normal through a
// latency's median (or mean) and its p99, p99.9 or p90 (0 unknown):
// the spread of the service times where fio kept no histogram.
func pctCV(l *result.Latency) float64 {
	mid := l.P50Ns
	if mid <= 0 {
		mid = l.MeanNs // near the median where the spread is small
	}
	if mid <= 0 {
		return 0
	}
	for _, q := range []struct{ v, z float64 }{{l.P99Ns, 2.3263}, {l.P999Ns, 3.0902}, {l.P90Ns, 1.2816}} {
		if q.v > mid {
			sigma := math.Log(q.v/mid) / q.z
			return math.Sqrt(math.Expm1(sigma * sigma))
		}
	}
	return 0
}

// histCV is a latency histogram's robust coefficient of variation: the
// spread between its 10th and 90th percentiles, as a normal's sigma, over
// its median (0 when it holds fewer than 100 IOs). A few IOs slowed by a
// neighbour do not move it.
func histCV(h *result.Histogram) float64 {
	if h.Count() < 100 {
		return 0
	}
	ps := h.Percentiles([]float64{10, 50, 90})
	if ps[1] <= 0 {
		return 0
	}
	return (ps[2] - ps[0]) / (2 * 1.2816 * ps[1])
}
