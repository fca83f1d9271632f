package analysis

import (
	"fmt"
	"math"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Units of the rates fed to the detectors; they decide how summaries
// print them and which device figure a stall is compared with.
const (
	unitBytes = "bytes" // bytes per second
	UnitIOPS  = "iops"
)

// Finding kinds set by this package.
const (
	KindStall     = result.KindStall
	KindCliff     = result.KindCliff
	kindSteady    = result.KindSteady
	kindWriteback = result.KindWriteback
	kindInflation = result.KindPageCache
	kindQD        = result.KindQD
	KindEtcd      = result.KindEtcd
	kindUnstable  = result.KindUnstable
)

// Severities.
const (
	SevInfo = "info"
	SevWarn = "warn"
	SevFail = "fail"
)

func f64(v float64) *float64 { return &v }

// levelHist is a fixed-size log-binned histogram (2% wide bins) used for a
// running median with bounded memory.
type levelHist struct {
	counts [levelBins]uint32
	n      uint64
}

const (
	levelBins  = 2048
	levelMin   = 1e-3
	levelRatio = 1.02
)

var logLevelRatio = math.Log(levelRatio)

func (h *levelHist) add(v float64) {
	if v <= 0 {
		return
	}
	i := int(math.Log(v/levelMin) / logLevelRatio)
	i = min(max(i, 0), levelBins-1)
	h.counts[i]++
	h.n++
}

func binValue(i int) float64 { return levelMin * math.Pow(levelRatio, float64(i)+0.5) }

// quantile returns the q-quantile (0 < q <= 1) of the samples at or above
// floor, within 2%.
func (h *levelHist) quantile(q, floor float64) float64 {
	from := 0
	if floor > 0 {
		from = min(max(int(math.Log(floor/levelMin)/logLevelRatio), 0), levelBins-1)
	}
	var n uint64
	for _, c := range h.counts[from:] {
		n += uint64(c)
	}
	if n == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(n)))
	var cum uint64
	for i := from; i < levelBins; i++ {
		cum += uint64(h.counts[i])
		if cum >= max(want, 1) {
			return binValue(i)
		}
	}
	return 0
}

// median of the samples held.
func (h *levelHist) median() float64 { return h.quantile(0.5, 0) }

// welford keeps a running mean and variance, and the sums of a
// least-squares line through (t, v), all in constant memory.
type welford struct {
	n        int
	mean, m2 float64
	// t0 anchors the times to keep the sums small.
	t0, t1           float64
	st, stt, stv, sv float64
}

func (w *welford) add(t, v float64) {
	if w.n == 0 {
		w.t0 = t
	}
	w.n++
	d := v - w.mean
	w.mean += d / float64(w.n)
	w.m2 += d * (v - w.mean)
	x := t - w.t0
	w.t1 = t
	w.st += x
	w.stt += x * x
	w.stv += x * v
	w.sv += v
}

func (w *welford) sd() float64 {
	if w.n < 2 {
		return 0
	}
	return math.Sqrt(w.m2 / float64(w.n-1))
}

func (w *welford) cv() float64 {
	if w.mean == 0 {
		return 0
	}
	return w.sd() / w.mean
}

// excursion is how far the fitted line moves across the segment, as a
// fraction of the mean (the PTS slope criterion).
func (w *welford) excursion() float64 {
	n := float64(w.n)
	den := n*w.stt - w.st*w.st
	if w.n < 3 || den == 0 || w.mean == 0 {
		return 0
	}
	slope := (n*w.stv - w.st*w.sv) / den
	return math.Abs(slope) * (w.t1 - w.t0) / math.Abs(w.mean)
}

// clock turns window end times into regular windows: it infers the
// interval and reports how many empty windows a gap stands for.
type clock struct {
	interval float64
	prev     float64
	started  bool
}

// step returns the windows to emit before t (gap fill, as end times) and
// the window length.
func (c *clock) step(t float64) (missing []float64, dt float64) {
	if c.interval <= 0 {
		c.interval = 1
	}
	if !c.started {
		c.started = true
		c.prev = t
		return nil, c.interval
	}
	d := t - c.prev
	c.prev = t
	if d <= 0 {
		return nil, c.interval
	}
	// Gaps of a whole number of windows are windows without
	// completions; anything else is sampling jitter.
	k := int(math.Round(d / c.interval))
	for i := 1; i < k && i < 1<<20; i++ {
		missing = append(missing, t-float64(k-i)*c.interval)
	}
	if k <= 1 {
		return nil, d
	}
	return missing, c.interval
}

// StallConfig tunes a StallDetector. Zero values take the defaults.
type StallConfig struct {
	// Frac: a window is stalled below Frac x the reference level
	// (default 0.10). The reference is the median of the active windows
	// seen so far: those at or above Frac x the third-highest window (not
	// the highest, so that a spike cannot raise the bar), so that long
	// stalls, or a trickle through a throttle, cannot drag the level down
	// to their own. A stall whose level becomes the reference (the rate
	// after a short initial spike) is dropped.
	Frac float64
	// MinS is the shortest stall reported (default 2 s).
	MinS float64
	// Interval is the sample period in seconds (default 1).
	Interval float64
	// Unit of the values: UnitBytes (default) or UnitIOPS.
	Unit string
	// Loaded says the application kept IO outstanding throughout (a
	// closed-loop benchmark such as fio without rate or thinktime). A
	// stall with nothing queued at the device then means the IO was held
	// above it (a cgroup or hypervisor throttle); without Loaded it means
	// the application was idle.
	Loaded bool
}

// StallDetector finds intervals where throughput drops below a fraction of
// its typical level, and says what the device did meanwhile.
type StallDetector struct {
	cfg   StallConfig
	clk   clock
	ref   levelHist
	top   [3]float64 // the three highest windows, highest first
	in    bool
	sum   float64 // of the stalled windows
	cnt   int
	start float64 // window start of the first stalled sample
	last  float64 // window end of the last stalled sample
	refAt float64 // reference level when the stall began
	minV  float64
	dev   devAcc
	// tail holds the dip's latest windows: when they settle at a level
	// of their own, the rate has fallen to a new plateau (a burst or a
	// cache ran out) and stalls are judged against it from then on.
	tail []float64
	// pend is the level before the dip settled, kept until it returns
	// (then the whole span was one stall against it) or the series ends
	// (then it was a burst, and the new level is the rate's own).
	pend *pending
}

// pending is a dip that settled at a lower level, while the level before
// it may still come back.
type pending struct {
	ref, start, last, sum, minV float64
	cnt                         int
	stalls                      int // stalls found at the new level
	hist                        levelHist
	top                         [3]float64
	dev                         devAcc
}

// devAcc sums what the device did during a stall.
type devAcc struct {
	n               int
	queue, util     float64
	bytes, ios, dt  float64
	maxQueue        float64
	inFlight        uint64
	writeAwaitMaxMs float64
	readAwaitMaxMs  float64
}

func (a *devAcc) add(s *result.DeviceSample, dt float64) {
	if s == nil {
		return
	}
	a.n++
	a.queue += s.QueueSize
	a.util += s.UtilPct
	a.bytes += (s.ReadBWBytes + s.WriteBWBytes) * dt
	a.ios += (s.ReadIOPS + s.WriteIOPS) * dt
	a.dt += dt
	a.maxQueue = math.Max(a.maxQueue, math.Max(s.QueueSize, float64(s.InFlight)))
	a.inFlight = max(a.inFlight, s.InFlight)
	a.writeAwaitMaxMs = math.Max(a.writeAwaitMaxMs, s.WriteAwaitMs)
	a.readAwaitMaxMs = math.Max(a.readAwaitMaxMs, s.ReadAwaitMs)
}

// newStallDetector returns a detector with cfg's defaults filled in.
func newStallDetector(cfg StallConfig) *StallDetector {
	if cfg.Frac <= 0 {
		cfg.Frac = 0.10
	}
	if cfg.MinS <= 0 {
		cfg.MinS = 2
	}
	if cfg.Unit == "" {
		cfg.Unit = unitBytes
	}
	d := &StallDetector{cfg: cfg}
	d.clk.interval = cfg.Interval
	return d
}

// Add feeds the window ending at t with rate v and the device's sample of
// that window (nil if none), and returns the stalls that ended.
func (d *StallDetector) Add(t, v float64, dev *result.DeviceSample) []result.Finding {
	missing, dt := d.clk.step(t)
	var out []result.Finding
	for _, mt := range missing {
		out = append(out, d.add(mt, 0, nil, dt)...)
	}
	return append(out, d.add(t, v, dev, dt)...)
}

func (d *StallDetector) add(t, v float64, dev *result.DeviceSample, dt float64) []result.Finding {
	if p := d.pend; p != nil {
		if v >= d.cfg.Frac*p.ref {
			// The level from before the dip is back: the whole span was
			// one stall against it.
			d.pend = nil
			d.ref, d.top = p.hist, p.top
			d.in, d.start, d.last, d.refAt, d.minV, d.sum, d.cnt, d.dev = true, p.start, p.last, p.ref, p.minV, p.sum, p.cnt, p.dev
			out := d.end(false)
			return append(out, d.add(t, v, dev, dt)...)
		}
		p.last, p.sum, p.cnt, p.minV = t, p.sum+v, p.cnt+1, math.Min(p.minV, v)
		p.dev.add(dev, dt)
	}
	for i := range d.top {
		if v > d.top[i] {
			copy(d.top[i+1:], d.top[i:len(d.top)-1])
			d.top[i] = v
			break
		}
	}
	if v >= d.cfg.Frac*d.top[len(d.top)-1] {
		d.ref.add(v)
	}
	ref := d.ref.median()
	if d.in && d.sum/float64(d.cnt) >= d.cfg.Frac*ref {
		d.in = false // the level fell to the "stall's": it is the norm
	}
	low := d.ref.n >= 2 && v < d.cfg.Frac*ref
	switch {
	case low && !d.in:
		d.in, d.start, d.refAt, d.minV, d.dev, d.sum, d.cnt, d.tail = true, t-dt, ref, v, devAcc{}, 0, 0, d.tail[:0]
		fallthrough
	case low:
		d.last = t
		d.minV = math.Min(d.minV, v)
		d.sum += v
		d.cnt++
		d.dev.add(dev, dt)
		return d.settle(t, v, dt)
	case d.in:
		return d.end(false)
	}
	return nil
}

// Settling: a dip whose last settleS seconds hold within settleSpread of
// their median, at no less than newLevelFloor of the level before it, is
// the rate's new level, not a stall.
const (
	settleS       = 5
	settleSpread  = 0.25
	newLevelFloor = 0.01
)

// settle re-bases the reference when the dip has settled at a level of
// its own: what came before the settled windows is a stall only if it
// fell below Frac of the new level too.
func (d *StallDetector) settle(t, v, dt float64) []result.Finding {
	k := max(3, int(math.Round(settleS/math.Max(d.clk.interval, 1e-3))))
	d.tail = append(d.tail, v)
	if len(d.tail) > k {
		d.tail = append(d.tail[:0], d.tail[len(d.tail)-k:]...)
	}
	if len(d.tail) < k {
		return nil
	}
	m := median(d.tail)
	if m <= 0 || m < newLevelFloor*d.refAt {
		return nil
	}
	for _, x := range d.tail {
		if math.Abs(x-m) > settleSpread*m {
			return nil
		}
	}
	if d.pend == nil {
		d.pend = &pending{ref: d.refAt, start: d.start, last: t, sum: d.sum, cnt: d.cnt, minV: d.minV, hist: d.ref, top: d.top, dev: d.dev}
	}
	var tailSum float64
	for _, x := range d.tail {
		tailSum += x
	}
	var out []result.Finding
	if n := d.cnt - k; n > 0 && float64(n)*dt >= d.cfg.MinS-1e-9 && (d.sum-tailSum)/float64(n) < d.cfg.Frac*m {
		// The part before the new level collapsed below it too: a stall
		// between two levels.
		d.last, d.refAt = t-float64(k)*dt, m
		out = d.end(false)
	}
	d.in = false
	d.ref = levelHist{}
	d.top = [3]float64{}
	for _, x := range d.tail {
		d.ref.add(x)
		for i := range d.top {
			if x > d.top[i] {
				copy(d.top[i+1:], d.top[i:len(d.top)-1])
				d.top[i] = x
				break
			}
		}
	}
	return out
}

// Flush reports a stall still going on at the end of the series.
func (d *StallDetector) Flush() []result.Finding {
	var out []result.Finding
	if d.in {
		out = d.end(true)
	}
	if p := d.pend; p != nil && p.stalls == 0 && len(out) == 0 {
		// Settled low and never back, with no stall of its own at the
		// new level: the series ended in one long stall (a cliff, if the
		// cliff detector finds a plateau there, tells it instead).
		d.pend = nil
		d.in, d.start, d.last, d.refAt, d.minV, d.sum, d.cnt, d.dev = true, p.start, p.last, p.ref, p.minV, p.sum, p.cnt, p.dev
		out = d.end(true)
	}
	return out
}

func (d *StallDetector) end(open bool) []result.Finding {
	out := d.finding(open)
	if d.pend != nil && len(out) > 0 {
		d.pend.stalls++
	}
	return out
}

// finding is the stall that just ended, if it lasted.
func (d *StallDetector) finding(open bool) []result.Finding {
	d.in = false
	dur := d.last - d.start
	if dur < d.cfg.MinS-1e-9 {
		return nil
	}
	f := result.Finding{Kind: KindStall, Code: result.CodeStall, StartS: f64(d.start), DurationS: f64(dur), Evidence: map[string]float64{
		"reference": d.refAt, "min_during": d.minV, "mean_during": d.sum / math.Max(1, float64(d.cnt)), "threshold_frac": d.cfg.Frac,
	}}
	until := ""
	if open {
		until = ", still stalled when the series ended"
	}
	head := fmt.Sprintf("throughput stalled for %.0f s from t=%.0fs (below %.0f%% of the typical %s%s)",
		dur, d.start, d.cfg.Frac*100, units.PlainRate(d.refAt, d.cfg.Unit), until)
	a := d.dev
	if a.n == 0 {
		f.Severity = SevWarn
		f.Summary = head + "; no device samples to tell a device stall from an idle application"
		return []result.Finding{f}
	}
	q := a.queue / float64(a.n)
	util := a.util / float64(a.n)
	devRate := a.bytes / math.Max(a.dt, 1e-9)
	devIOPS := a.ios / math.Max(a.dt, 1e-9)
	f.Evidence["device_queue_mean"] = q
	f.Evidence["device_queue_max"] = a.maxQueue
	f.Evidence["device_util_pct_mean"] = util
	f.Evidence["device_bytes_per_s"] = devRate
	f.Evidence["device_iops"] = devIOPS
	f.Evidence["device_await_max_ms"] = math.Max(a.writeAwaitMaxMs, a.readAwaitMaxMs)
	devLevel := devRate
	if d.cfg.Unit == UnitIOPS {
		devLevel = devIOPS
	}
	queued := q >= 0.5 || a.maxQueue >= 1
	busy := util >= 80
	idleBytes := devLevel < d.cfg.Frac*d.refAt
	switch {
	case queued && idleBytes:
		f.Severity = SevWarn
		if dur >= 10 {
			f.Severity = SevFail
		}
		f.Summary = fmt.Sprintf("%s; the device held IO (queue %.1f, util %.0f%%) yet moved %s: a draining cache or a throttle, not an idle application",
			head, q, util, units.PlainRate(devRate, unitBytes))
	case !queued && !busy && d.cfg.Loaded:
		f.Severity = SevWarn
		if dur >= 10 {
			f.Severity = SevFail
		}
		f.Summary = fmt.Sprintf("%s; the application had IO outstanding but the device saw none queued (util %.0f%%): held above the device by a throttle (cgroup io.max, hypervisor)", head, util)
	case !queued && !busy:
		f.Severity = SevInfo
		f.Summary = fmt.Sprintf("%s; the device had nothing queued (util %.0f%%): the application was idle, not the device", head, util)
	default:
		f.Severity = SevWarn
		f.Summary = fmt.Sprintf("%s; the device kept working (queue %.1f, util %.0f%%, %s): writeback or other IO held it",
			head, q, util, units.PlainRate(devRate, unitBytes))
	}
	return []result.Finding{f}
}

// CliffConfig tunes a CliffDetector. Zero values take the defaults.
type CliffConfig struct {
	// Drop: the lower plateau is at most (1-Drop) x the burst rate
	// (default 0.3).
	Drop float64
	// MinBurstS and MinLowS are the shortest high and low plateaus
	// (defaults 5 s and 10 s).
	MinBurstS, MinLowS float64
	// MaxTrend bounds how far a line fitted to each plateau moves across
	// it, as a fraction of its mean (default 0.2): a ramp is not a cliff.
	// MaxCV bounds their variability (default 0.3); one dip does not
	// undo a plateau.
	MaxTrend, MaxCV float64
	// Interval is the sample period in seconds (default 1).
	Interval float64
	// Unit of the values: UnitBytes (default) or UnitIOPS.
	Unit string
}

// CliffDetector finds a sustained high rate that drops to a lower plateau
// and stays there: burst credits running out, a write cache filling. A
// drop to near zero is a stall, not a cliff, and is left to
// StallDetector.
type CliffDetector struct {
	cfg       CliffConfig
	clk       clock
	high      welford
	highStart float64
	// pending holds the first windows below the threshold until there
	// are enough to call it a drop.
	pending []sample
	// rising holds the first windows well above the high plateau: a
	// sustained step up (a slow start, a warm-up) starts the plateau
	// again at the new level.
	rising []sample
	// highs and lows are the samples of the high plateau (the most
	// recent maxHighs) and of the candidate low one; the low plateau
	// starts at cStart.
	highs, lows []sample
	candidate   bool
	cStart      float64
	recent      [3]float64
	nRecent     int
}

type sample struct{ t, v, dt float64 }

// NewCliffDetector returns a detector with cfg's defaults filled in.
func NewCliffDetector(cfg CliffConfig) *CliffDetector {
	if cfg.Drop <= 0 {
		cfg.Drop = 0.3
	}
	if cfg.MinBurstS <= 0 {
		cfg.MinBurstS = 5
	}
	if cfg.MinLowS <= 0 {
		cfg.MinLowS = 10
	}
	if cfg.MaxCV <= 0 {
		cfg.MaxCV = 0.3
	}
	if cfg.MaxTrend <= 0 {
		cfg.MaxTrend = 0.2
	}
	if cfg.Unit == "" {
		cfg.Unit = unitBytes
	}
	d := &CliffDetector{cfg: cfg}
	d.clk.interval = cfg.Interval
	return d
}

// Add feeds the window ending at t with rate v; dev is accepted for
// symmetry with StallDetector and may be nil. It returns a cliff once the
// lower plateau has lasted MinLowS.
func (d *CliffDetector) Add(t, v float64, _ *result.DeviceSample) []result.Finding {
	missing, dt := d.clk.step(t)
	var out []result.Finding
	for _, mt := range missing {
		out = append(out, d.add(mt, 0, dt)...)
	}
	return append(out, d.add(t, v, dt)...)
}

// Flush ends the series. A drop that has not lasted MinLowS is not
// reported: a cliff must stay down.
func (d *CliffDetector) Flush() []result.Finding { return nil }

func (d *CliffDetector) add(t, v, dt float64) []result.Finding {
	d.recent[d.nRecent%len(d.recent)] = v
	d.nRecent++
	if d.high.n == 0 && len(d.pending) == 0 {
		d.highStart = t - dt
		if v <= 0 {
			return nil // nothing has started yet
		}
	}
	hm := d.high.mean
	stalled := d.high.n > 0 && v < 0.1*hm
	if stalled {
		return nil // stalls are neither plateau
	}
	if d.candidate {
		if d.recentMedian() >= (1-d.cfg.Drop/2)*hm {
			// Back up: a dip, not a cliff.
			d.candidate = false
			d.lows = d.lows[:0]
			d.addHigh(sample{t, v, dt})
			return nil
		}
		d.lows = append(d.lows, sample{t, v, dt})
		if t-d.cStart < d.cfg.MinLowS-1e-9 {
			return nil
		}
		d.candidate = false
		at, lows := d.cStart, d.lows
		low, rest := plateau(lows), plateau(lows[1:])
		if lo, f := rest.mean, lows[0]; rest.n >= 2 && f.v < hm && (f.v-lo > 0.1*(hm-lo) || lo-f.v > 0.1*lo) {
			// The first low window is off the new level: the rate fell
			// inside it (it ran partly at each rate: place the drop by
			// the mix), or it ran below the new level while things
			// settled. Judge the plateau without it.
			low, at, lows = rest, d.cStart+max(0, (f.v-lo)/(hm-lo))*f.dt, lows[1:]
		}
		stable := func(w *welford) bool { return w.cv() <= d.cfg.MaxCV && w.excursion() <= d.cfg.MaxTrend }
		high, hStart := d.high, d.highStart
		if !stable(&high) {
			// A slow start (a warm-up, a loaded machine) makes the whole
			// burst look like a ramp: judge it from where it held level.
			if w, from, ok := d.stableSuffix(stable); ok {
				high, hStart = w, from
			}
		}
		var out []result.Finding
		if stable(&high) && stable(&low) && low.mean <= (1-d.cfg.Drop)*high.mean {
			out = append(out, d.finding(hStart, &high, at, &low))
		}
		// The new plateau is the level a further drop is measured from;
		// if this was not two stable plateaus (a ramp, noise), it starts
		// over from there all the same.
		d.high, d.highStart = low, at
		d.highs = append(d.highs[:0], lows...)
		d.lows = d.lows[:0]
		return out
	}
	if d.high.n >= 3 && v > hm/(1-d.cfg.Drop) {
		for _, p := range d.pending {
			d.addHigh(p)
		}
		d.pending = d.pending[:0]
		d.rising = append(d.rising, sample{t, v, dt})
		if len(d.rising) < 3 {
			return nil
		}
		d.high, d.highs = welford{}, d.highs[:0]
		d.highStart = d.rising[0].t - d.rising[0].dt
		for _, p := range d.rising {
			d.addHigh(p)
		}
		d.rising = d.rising[:0]
		return nil
	}
	for _, p := range d.rising {
		d.addHigh(p)
	}
	d.rising = d.rising[:0]
	burst := d.high.n > 0 && (t-dt)-d.highStart >= d.cfg.MinBurstS-1e-9
	if burst && v < (1-d.cfg.Drop)*hm {
		d.pending = append(d.pending, sample{t, v, dt})
		if len(d.pending) < 3 {
			return nil
		}
		d.candidate = true
		d.cStart = d.pending[0].t - d.pending[0].dt
		d.lows = append(d.lows[:0], d.pending...)
		d.pending = d.pending[:0]
		return nil
	}
	for _, p := range d.pending {
		d.addHigh(p)
	}
	d.pending = d.pending[:0]
	d.addHigh(sample{t, v, dt})
	return nil
}

// maxHighs bounds the samples kept of the current high plateau (an hour
// at 1 s).
const maxHighs = 3600

func (d *CliffDetector) addHigh(p sample) {
	d.high.add(p.t, p.v)
	if len(d.highs) == maxHighs {
		d.highs = append(d.highs[:0], d.highs[1:]...)
	}
	d.highs = append(d.highs, p)
}

// plateau summarises samples.
func plateau(ps []sample) welford {
	var w welford
	for _, p := range ps {
		w.add(p.t, p.v)
	}
	return w
}

// stableSuffix finds the longest end of the high plateau, at least
// MinBurstS long, that is stable, with the time it starts.
func (d *CliffDetector) stableSuffix(stable func(*welford) bool) (welford, float64, bool) {
	n := len(d.highs)
	if n == 0 {
		return welford{}, 0, false
	}
	end := d.highs[n-1].t
	for i := 1; i < n; i++ {
		from := d.highs[i].t - d.highs[i].dt
		if end-from < d.cfg.MinBurstS-1e-9 {
			break
		}
		if w := plateau(d.highs[i:]); stable(&w) {
			return w, from, true
		}
	}
	return welford{}, 0, false
}

func (d *CliffDetector) recentMedian() float64 {
	n := min(d.nRecent, len(d.recent))
	a := append([]float64(nil), d.recent[:n]...)
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
	return a[n/2]
}

func (d *CliffDetector) finding(hStart float64, high *welford, at float64, low *welford) result.Finding {
	burst := at - hStart
	hi, lo := high.mean, low.mean
	return result.Finding{
		Kind: KindCliff, Code: result.CodeCliff, Severity: SevWarn,
		StartS: f64(at), DurationS: f64(burst),
		Summary: fmt.Sprintf("cliff at t=%.0fs: %s for %.0f s, then %s (%.0f%% lower) and it stayed there: burst credits or a write cache ran out",
			at, units.PlainRate(hi, d.cfg.Unit), burst, units.PlainRate(lo, d.cfg.Unit), (1-lo/hi)*100),
		Evidence: map[string]float64{
			"burst_start_s": hStart, "burst_duration_s": burst,
			"burst_rate": hi, "plateau_rate": lo, "burst_cv": high.cv(), "plateau_cv": low.cv(),
			"burst_trend": high.excursion(), "plateau_trend": low.excursion(),
		},
	}
}
