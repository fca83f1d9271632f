package promhist

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/watch"
)

// Flat ceilings. A live watch is told the ceiling (--expect); history
// often has no one to tell it, so the series itself has to show it: a
// rate that stays flat, to a few percent, while IO waits for it (the
// device busy all the time, or tasks in iowait). A throttle paces IO
// that evenly; a workload left to itself wanders, and one that paces
// itself (a rate limit) leaves nothing waiting.
const (
	// flatBand: an interval within this share of the plateau's mean,
	// beyond one request's worth, stays on it.
	flatBand = 0.05
	// flatRMS: the plateau's deviations, beyond one request's worth,
	// average at most this share of its mean.
	flatRMS = 0.02
	// ceilingMinS and ceilingMinIntervals: the shortest plateau.
	ceilingMinS         = 10
	ceilingMinIntervals = 5
	// ceilingIowaitPct: host-wide iowait that counts as IO waiting on a
	// ceiling. It is the whole host's, so more than the 1% that tips a
	// collapse into a stall: a flat rate is no collapse.
	ceilingIowaitPct = 5
	// heldShare: the share of a plateau's intervals with IO waiting.
	heldShare = 0.8
	// sameCeiling: plateaus within 3% are one ceiling (as the limit
	// inference of fio results has it).
	sameCeiling = 0.03
	// largeRequest: from this mean request size on, a plateau flat in
	// both MB/s and IOPS is a bandwidth ceiling, below it an IOPS one.
	largeRequest = 64 << 10
	// maxLevels and maxEpisodes bound what a device keeps.
	maxLevels   = 8
	maxEpisodes = 20
)

// stream is one figure of a device a ceiling can hold: a direction (or
// both) in bytes or in IOs per second.
type stream struct {
	dir   string // read, write, total
	bytes bool
}

var streams = [...]stream{{"read", true}, {"write", true}, {"total", true}, {"read", false}, {"write", false}, {"total", false}}

func (st stream) of(s *result.DeviceSample) (v, ios, bytes float64) {
	switch st.dir {
	case "read":
		ios, bytes = s.ReadIOPS, s.ReadBWBytes
	case "write":
		ios, bytes = s.WriteIOPS, s.WriteBWBytes
	default:
		ios, bytes = s.ReadIOPS+s.WriteIOPS, s.ReadBWBytes+s.WriteBWBytes
	}
	if st.bytes {
		return bytes, ios, bytes
	}
	return ios, ios, bytes
}

// plateau is a run of intervals at one level.
type plateau struct {
	start, end time.Time
	n, held    int
	dur        float64 // seconds
	sum        float64 // rate x seconds
	ios, bytes float64 // IOs and bytes in it
	dev2       float64 // sum of squared excess deviations x seconds
	iowait     float64 // peak iowait %
	queue      float64 // peak aqu-sz
	util       float64 // mean util x seconds
	// pending is an interval off the level, held until the next.
	pending *interval
}

func (p *plateau) mean() float64 { return p.sum / p.dur }

// episode is one plateau kept for the report.
type episode struct {
	Start, End time.Time
}

// level is a ceiling: the plateaus at one rate.
type level struct {
	st         stream
	sum, dur   float64
	ios, bytes float64
	episodes   []episode
	n          int
	iowait     float64
	queue      float64
	util       float64
}

func (l *level) rate() float64 { return l.sum / l.dur }

// ceilings follows one device's streams.
type ceilings struct {
	device string
	th     watch.Thresholds
	runs   [len(streams)]*plateau
	levels [len(streams)][]*level
}

func newCeilings(device string, th watch.Thresholds) *ceilings {
	return &ceilings{device: device, th: th}
}

// interval is one interval of one stream.
type interval struct {
	end              time.Time
	dt               float64
	v, ios, bytes    float64
	util, iowait, qu float64
	held             bool
	n                int // intervals merged into it
}

// merged is two consecutive intervals as one.
func merged(a, b interval) interval {
	dt := a.dt + b.dt
	return interval{end: b.end, dt: dt, v: (a.v*a.dt + b.v*b.dt) / dt, ios: (a.ios*a.dt + b.ios*b.dt) / dt, bytes: (a.bytes*a.dt + b.bytes*b.dt) / dt,
		util: (a.util*a.dt + b.util*b.dt) / dt, iowait: max(a.iowait, b.iowait), qu: max(a.qu, b.qu), held: a.held && b.held, n: a.n + b.n}
}

// add takes the interval of dt ending at end.
func (c *ceilings) add(end time.Time, dt float64, s *result.DeviceSample, state string, sys *result.SystemSample, pressurePct, others float64) {
	// IO waits for a ceiling below the device (a cloud disk's cap) with
	// the device busy all the time, and for one above it (a cgroup
	// throttle) with tasks in iowait or stalled on IO (pressure; iowait
	// counts only the time a CPU has nothing else to do), beyond what
	// the other disks' busy time (others) can account for. A queue alone
	// is no evidence: a workload of its own pace queues in bursts, with
	// the device idle in between.
	held := s.UtilPct >= c.th.SaturatedUtilPct || pressurePct-others >= c.th.StallPressurePct
	var iowait float64
	if sys != nil {
		iowait = sys.IowaitPct
		held = held || iowait-others >= ceilingIowaitPct
	}
	for i, st := range streams {
		v, ios, bytes := st.of(s)
		if state == watch.StateStalled || s.ReadIOPS+s.WriteIOPS < c.th.ActiveIOPS || ios*dt < 1 {
			c.close(i)
			continue
		}
		c.take(i, interval{end: end, dt: dt, v: v, ios: ios, bytes: bytes, util: s.UtilPct, iowait: iowait, qu: s.QueueSize, held: held, n: 1})
	}
}

// take adds an interval to stream i's plateau, or ends the plateau and
// starts another. An interval off the plateau is held until the next
// one: a scrape late by a fraction of a second makes one interval long
// and the next short, and the two together are on the level again.
func (c *ceilings) take(i int, iv interval) {
	st := streams[i]
	p := c.runs[i]
	on := func(x interval) bool {
		// One request more or less in an interval is counting, not a
		// change of rate.
		q := 1 / x.dt
		if st.bytes && x.ios > 0 {
			q = x.bytes / x.ios / x.dt
		}
		m := p.mean()
		return math.Abs(x.v-m)-q <= flatBand*m
	}
	switch {
	case p == nil:
	case p.pending != nil:
		pend := *p.pending
		p.pending = nil
		if both := merged(pend, iv); on(both) {
			p.extend(both)
			return
		}
		// A new level from the held interval on.
		c.close(i)
		c.start(i, pend)
		c.take(i, iv)
		return
	case on(iv):
		p.extend(iv)
		return
	default:
		p.pending = &iv
		return
	}
	c.start(i, iv)
}

func (c *ceilings) start(i int, iv interval) {
	p := &plateau{start: iv.end.Add(-time.Duration(iv.dt * float64(time.Second)))}
	c.runs[i] = p
	p.extend(iv)
}

func (p *plateau) extend(iv interval) {
	if p.n > 0 {
		// As in take: a request's worth over the interval (v/ios is
		// the request size in bytes, or 1 for IOPS).
		q := 0.0
		if iv.ios > 0 {
			q = iv.v / (iv.ios * iv.dt)
		}
		if d := math.Abs(iv.v-p.mean()) - q; d > 0 {
			p.dev2 += d * d * iv.dt
		}
	}
	p.end = iv.end
	p.n += iv.n
	p.dur += iv.dt
	p.sum += iv.v * iv.dt
	p.ios += iv.ios * iv.dt
	p.bytes += iv.bytes * iv.dt
	p.util += iv.util * iv.dt
	p.iowait = max(p.iowait, iv.iowait)
	p.queue = max(p.queue, iv.qu)
	if iv.held {
		p.held += iv.n
	}
}

// close ends stream i's plateau and keeps it when it is a ceiling.
func (c *ceilings) close(i int) {
	p := c.runs[i]
	c.runs[i] = nil
	if p == nil || p.n < ceilingMinIntervals || p.dur < ceilingMinS || float64(p.held) < heldShare*float64(p.n) {
		return
	}
	m := p.mean()
	if m <= 0 || math.Sqrt(p.dev2/p.dur) > flatRMS*m {
		return
	}
	ls := c.levels[i]
	for _, l := range ls {
		if math.Abs(l.rate()-m) <= sameCeiling*math.Max(l.rate(), m) {
			l.add(p)
			return
		}
	}
	l := &level{st: streams[i]}
	l.add(p)
	ls = append(ls, l)
	if len(ls) > maxLevels {
		// The least held goes.
		sort.Slice(ls, func(a, b int) bool { return ls[a].dur > ls[b].dur })
		ls = ls[:maxLevels]
	}
	c.levels[i] = ls
}

func (l *level) add(p *plateau) {
	l.sum += p.sum
	l.dur += p.dur
	l.ios += p.ios
	l.bytes += p.bytes
	l.util += p.util
	l.iowait = max(l.iowait, p.iowait)
	l.queue = max(l.queue, p.queue)
	l.n++
	if len(l.episodes) < maxEpisodes {
		l.episodes = append(l.episodes, episode{Start: p.start, End: p.end})
	}
}

// Ceiling is a flat ceiling a device was held at.
type Ceiling struct {
	Device string `json:"device"`
	// Dir is read, write or total (both directions under one cap).
	Dir string `json:"dir"`
	// Code is result.CodeBandwidthCap or result.CodeIOPSCap: which figure
	// held flat.
	Code    string  `json:"code"`
	BWBytes float64 `json:"bw_bytes"`
	IOPS    float64 `json:"iops"`
	// ReqBytes is the mean request size on the plateaus.
	ReqBytes float64 `json:"req_bytes"`
	// HeldS is the time spent at the ceiling, over Episodes plateaus
	// (the first ones are listed).
	HeldS     float64   `json:"held_s"`
	NEpisodes int       `json:"episodes"`
	Episodes  []episode `json:"spans"`
	// What showed IO waiting on it.
	PeakIowaitPct float64 `json:"peak_iowait_pct"`
	PeakQueue     float64 `json:"peak_aqu_sz"`
	MeanUtilPct   float64 `json:"mean_util_pct"`
	// Fits are catalog disks whose published limits are near it.
	Fits []Fit `json:"fits,omitempty"`
}

// Fit is a catalog disk (or VM size) near a ceiling.
type Fit struct {
	Name     string  `json:"name"`
	IOPS     float64 `json:"iops"`
	BWBytes  float64 `json:"bw_bytes"`
	Distance float64 `json:"distance"`
}

// CatalogFits names the catalog's disks (or VM sizes, when no disk fits)
// nearest a flat ceiling, three at most.
func CatalogFits(c *limits.Catalog) FitFunc {
	return func(iops, bw float64) []Fit {
		var out []Fit
		for _, f := range c.Fits(iops, bw, 3) {
			name := f.Disk
			if name == "" {
				name = "VM " + f.VM
			}
			out = append(out, Fit{Name: name, IOPS: f.IOPS, BWBytes: f.BWBytes, Distance: f.Distance})
		}
		return out
	}
}

// flush closes the open plateaus and returns the device's ceilings:
// each direction once, the figure that held flat (both: the one the
// request size says binds), and a total only where no direction alone
// explains it.
func (c *ceilings) flush() []Ceiling {
	for i := range streams {
		c.close(i)
	}
	type cand struct {
		l   *level
		idx int
	}
	var all []cand
	for i, ls := range c.levels {
		for _, l := range ls {
			if l.dur >= ceilingMinS {
				all = append(all, cand{l, i})
			}
		}
	}
	overlap := func(a, b *level) bool {
		for _, x := range a.episodes {
			for _, y := range b.episodes {
				if x.Start.Before(y.End) && y.Start.Before(x.End) {
					return true
				}
			}
		}
		return false
	}
	var out []Ceiling
	for _, a := range all {
		l := a.l
		req := 0.0
		if l.ios > 0 {
			req = l.bytes / l.ios
		}
		drop := false
		for _, b := range all {
			if b.l == l || !overlap(l, b.l) {
				continue
			}
			switch {
			case b.l.st.dir == l.st.dir && b.l.st.bytes != l.st.bytes:
				// Both figures flat: the request size says which binds.
				if l.st.bytes != (req >= largeRequest) {
					drop = true
				}
			case l.st.dir == "total" && b.l.st.dir != "total":
				// One direction carries it: say that direction.
				if b.l.st.bytes == l.st.bytes {
					drop = true
				}
			}
		}
		if drop {
			continue
		}
		cl := Ceiling{Device: c.device, Dir: l.st.dir, Code: result.CodeIOPSCap, HeldS: l.dur, NEpisodes: l.n, Episodes: l.episodes,
			IOPS: l.ios / l.dur, BWBytes: l.bytes / l.dur, ReqBytes: req, PeakIowaitPct: l.iowait, PeakQueue: l.queue, MeanUtilPct: l.util / l.dur}
		if l.st.bytes {
			cl.Code = result.CodeBandwidthCap
		}
		out = append(out, cl)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Episodes[0].Start.Before(out[j].Episodes[0].Start) })
	return out
}

// level prints the ceiling's figure.
func (cl Ceiling) level() string {
	if cl.Code == result.CodeBandwidthCap {
		return fmt.Sprintf("%s MB/s", units.Figure(cl.BWBytes/1e6))
	}
	return fmt.Sprintf("%s IOPS", units.Figure(cl.IOPS))
}
