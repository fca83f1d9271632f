package watch

import (
	"fmt"
	"sort"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Device states, worst first.
const (
	StateStalled   = "stalled"
	StateAtCap     = "at_cap"
	StateSaturated = "saturated"
	StateBusy      = "busy"
	StateOK        = "ok"
)

// Thresholds decide the states. The defaults suit most devices; each is
// a flag of iolens watch.
type Thresholds struct {
	// BusyUtilPct: utilization at which a device counts as busy.
	BusyUtilPct float64
	// SaturatedQueue and SaturatedUtilPct: requests waiting (aqu-sz) at
	// high utilization mean the device has more work than it serves.
	SaturatedQueue   float64
	SaturatedUtilPct float64
	// StallRatio: a rate below this share of the device's recent active
	// median, with IO still pending, is a stall.
	StallRatio float64
	// StallMinIOPS: fewer completions than this per second, with
	// requests in flight, is a stall whatever the history (the seed 003
	// signature: util 100%, queue 9, zero bytes).
	StallMinIOPS float64
	// Host-side evidence that IO is pending when the device shows nothing
	// in flight, as when a block throttle holds the requests above the
	// device: iowait, IO pressure and pages under writeback. The host's
	// figures count for a device only beyond what the other disks' busy
	// time can explain (Host.OtherUtilPct).
	StallIowaitPct      float64
	StallPressurePct    float64
	StallWritebackBytes uint64
	// ActiveIOPS: intervals below this rate do not count towards the
	// recent median; RefWindow is how many active intervals it spans and
	// RefMaxAgeS how old they may be (outside a stall).
	ActiveIOPS float64
	RefWindow  int
	RefMaxAgeS float64
	// AtCapPct: share of the expected ceiling at which a device is at cap.
	AtCapPct float64
	// Sustain: intervals a saturated or at-cap state must last before it
	// is logged.
	Sustain int
	// StormWritebackBytes: pages under writeback, host-wide, that make a
	// writeback storm when they last StormIntervals intervals.
	StormWritebackBytes uint64
	StormIntervals      int
}

// DefaultThresholds are the thresholds iolens watch uses unless told.
func DefaultThresholds() Thresholds {
	return Thresholds{
		BusyUtilPct: 60, SaturatedQueue: 4, SaturatedUtilPct: 90,
		StallRatio: 0.1, StallMinIOPS: 1,
		StallIowaitPct: 1, StallPressurePct: 10, StallWritebackBytes: 1 << 20,
		ActiveIOPS: 5, RefWindow: 30, RefMaxAgeS: 300,
		AtCapPct: 95, Sustain: 3,
		StormWritebackBytes: 64 << 20, StormIntervals: 2,
	}
}

// Host is the host-wide state over one interval, the evidence for stalls
// that the device itself cannot show.
type Host struct {
	IowaitPct      float64
	PressurePct    float64 // -1 when unknown
	DirtyBytes     uint64
	WritebackBytes uint64
	// OtherUtilPct is the busy time of the disks not watched, summed (a
	// percent of the interval per disk).
	OtherUtilPct float64
	// util is each watched device's busy time in the interval.
	util map[string]float64
	// family are, by watched device, the devices that carry its IO or
	// whose IO it carries: its disk, its partitions' and its own disks
	// under a stacked device, the watched devices tied to those.
	family map[string]map[string]bool
	// holds are, by device, the throttle caps that cgroups' IO ran into;
	// heldRecently the devices with one in this interval or the one
	// before (a throttle's queue drains after the IO that fed it ends).
	holds        map[string][]hold
	heldRecently map[string]bool
}

// othersBusy is how much of the interval the disks other than dev kept
// busy, summed over them: a share of time in which a task waiting on
// one of them can account for the host's iowait or IO pressure.
func (h Host) othersBusy(dev string) float64 {
	b := h.OtherUtilPct
	for n, u := range h.util {
		if n != dev && !h.family[dev][n] {
			b += u
		}
	}
	return b
}

// quietOthersPct: the other disks, summed, busy less than this share of
// an interval are quiet (pages under writeback can only be dev's).
const quietOthersPct = 1

// pending says whether the host shows IO waiting that only dev can
// explain. iowait and IO pressure are shares of time in which some task
// waited on IO; beyond the other disks' busy time, the wait is on
// something no other disk shows: dev, or a throttle above it. Pages
// under writeback count only while no other disk is busy, and nothing
// counts while a throttle holds another disk's IO.
func (th Thresholds) pending(h Host, dev string) (bool, string) {
	// A throttle that holds another disk's IO keeps its tasks waiting
	// with that disk idle: the wait may be all theirs.
	for n := range h.heldRecently {
		if n != dev && !h.family[dev][n] {
			return false, ""
		}
	}
	others := h.othersBusy(dev)
	beside := ""
	if others > 0 {
		beside = fmt.Sprintf(", other disks busy %.0f%%", others)
	}
	switch {
	case h.PressurePct-others >= th.StallPressurePct:
		return true, fmt.Sprintf("IO pressure %.0f%%%s", h.PressurePct, beside)
	case h.WritebackBytes >= th.StallWritebackBytes && others < quietOthersPct:
		return true, fmt.Sprintf("%s under writeback", units.HumanBytes(float64(h.WritebackBytes)))
	case h.IowaitPct-others >= th.StallIowaitPct:
		return true, fmt.Sprintf("iowait %.0f%%%s", h.IowaitPct, beside)
	}
	return false, ""
}

// loweredShare: an interval that ran below this share of the recent rate
// and ended under a throttle cap lowered in it, far below that rate, is
// the start of a stall.
const loweredShare = 0.5

// heldBelow returns a throttle cap that holds IO below the given rates
// (IOs and bytes per second): the cap alone explains a collapse, and IO is
// waiting in the throttle's queue. With lowered, only a cap that went
// down during the interval counts.
func heldBelow(hs []hold, iops, bytes float64, lowered bool) (hold, bool) {
	for _, h := range hs {
		if lowered && !h.lowered {
			continue
		}
		if h.iops() && h.cap < iops || !h.iops() && h.cap < bytes {
			return h, true
		}
	}
	return hold{}, false
}

// tracker follows one device through time: its recent active rate, its
// state and the conditions in progress.
type tracker struct {
	name     string
	parallel bool
	th       Thresholds
	ref      []refPoint

	state     string
	stall     *episode
	saturated *episode
	atCap     *episode
	// idleBefore: the previous interval had fewer than ActiveIOPS;
	// quietBefore: it completed nothing and ended with nothing in flight.
	idleBefore, quietBefore bool
}

type refPoint struct {
	t, iops, bytes float64
}

type episode struct {
	start    float64
	n        int
	logged   bool
	peakQ    float64
	peakWait float64
	reason   string
	refBytes float64
	refIOPS  float64
	minBytes float64
	// hostOnly: every interval of the stall was judged on host-wide
	// evidence alone (iowait, IO pressure, writeback), none of the
	// device's own (its queue, its utilisation, a throttle holding it).
	hostOnly bool
}

func newTracker(name string, parallel bool, th Thresholds) *tracker {
	return &tracker{name: name, parallel: parallel, th: th, state: StateOK}
}

// reference returns the median rate (IOPS and bytes/s) of the recent
// active intervals; ok is false without history.
func (tr *tracker) reference() (iops, bytes float64, ok bool) {
	if len(tr.ref) == 0 {
		return 0, 0, false
	}
	a := make([]float64, len(tr.ref))
	b := make([]float64, len(tr.ref))
	for i, p := range tr.ref {
		a[i], b[i] = p.iops, p.bytes
	}
	return median(a), median(b), true
}

func median(v []float64) float64 {
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// ceilingView is what the ceiling says about one interval.
type ceilingView struct {
	pct float64 // rate as % of the ceiling in force
	ok  bool
	// name says which ceiling is in force: "the burst ceiling", "the base
	// ceiling" or "the VM's cap".
	name string
}

// step classifies one interval ending at t (seconds since start), of
// length dt, and returns the findings it opens or closes.
func (tr *tracker) step(t, dt float64, s result.DeviceSample, h Host, cv ceilingView) []finding {
	th := tr.th
	iops := s.ReadIOPS + s.WriteIOPS
	bytes := s.ReadBWBytes + s.WriteBWBytes
	refIOPS, refBytes, haveRef := tr.reference()
	var out []finding

	// Stalled: the device signature, or a collapse with IO pending.
	stalled, why, hostOnly := false, "", false
	queued := s.InFlight > 0 || s.QueueSize >= 0.5
	if iops < th.StallMinIOPS && (queued || s.UtilPct >= th.SaturatedUtilPct) {
		stalled = true
		why = fmt.Sprintf("%.0f completions/s with aqu-sz %.1f, %d in flight, util %.0f%%", iops, s.QueueSize, s.InFlight, s.UtilPct)
	} else if haveRef && refBytes > 0 && bytes < th.StallRatio*refBytes && iops < max(th.StallMinIOPS, th.ActiveIOPS, th.StallRatio*refIOPS) &&
		(tr.stall != nil || !tr.quietBefore || iops == 0 && s.InFlight == 0) {
		// (A workload that starts late in an interval after a quiet one
		// has IO in flight or a little done: not a collapse.)
		// Fewer IOs than an active interval has are a collapse whatever
		// the reference: a workload of large IOs runs at few IOPS, and a
		// journal commit or two must not end its stall.
		if queued || s.UtilPct >= th.SaturatedUtilPct {
			stalled, why = true, fmt.Sprintf("aqu-sz %.1f, util %.0f%%", s.QueueSize, s.UtilPct)
		} else if hd, ok := heldBelow(h.holds[tr.name], th.StallRatio*refIOPS, th.StallRatio*refBytes, false); ok {
			stalled, why = true, hd.String()
		} else if p, w := th.pending(h, tr.name); p {
			stalled, why, hostOnly = true, w, true
		}
		if stalled {
			why = fmt.Sprintf("%s/s, %.0f%% of the recent %s/s; %s", units.BytesSI(bytes), bytes/refBytes*100, units.BytesSI(refBytes), why)
		}
	} else if haveRef && refBytes > 0 && bytes < loweredShare*refBytes && iops < loweredShare*refIOPS {
		// A throttle cap that went down during the interval, far below
		// the recent rate, holds the device from now on: the part of the
		// interval that ran before it does not delay the stall by one.
		if hd, ok := heldBelow(h.holds[tr.name], th.StallRatio*refIOPS, th.StallRatio*refBytes, true); ok {
			stalled = true
			why = fmt.Sprintf("%s/s, %.0f%% of the recent %s/s; %s", units.BytesSI(bytes), bytes/refBytes*100, units.BytesSI(refBytes), hd.String())
		}
	}

	state := StateOK
	switch {
	case stalled:
		state = StateStalled
	case cv.ok && cv.pct >= th.AtCapPct:
		state = StateAtCap
	case s.UtilPct >= th.SaturatedUtilPct && s.QueueSize >= th.SaturatedQueue:
		state = StateSaturated
	case s.UtilPct >= th.BusyUtilPct || s.QueueSize >= 1:
		state = StateBusy
	}
	tr.state = state

	out = append(out, tr.sustained(&tr.saturated, state == StateSaturated, result.KindSaturation, t, dt, s,
		func(e *episode) string {
			return fmt.Sprintf("saturated: aqu-sz %.1f at util %.0f%%, await up to %s", e.peakQ, s.UtilPct, units.Latency(e.peakWait*1e6))
		})...)
	out = append(out, tr.sustained(&tr.atCap, state == StateAtCap, result.KindCap, t, dt, s,
		func(e *episode) string {
			name := cv.name
			if name == "" {
				name = "the expected ceiling"
			}
			return fmt.Sprintf("at %s: %.0f%% of it", name, cv.pct)
		})...)

	// Stall episodes start at once: a stall is the one thing not to wait for.
	if stalled {
		if tr.stall == nil {
			tr.stall = &episode{start: t - dt, reason: why, refBytes: refBytes, refIOPS: refIOPS, minBytes: bytes, hostOnly: true}
			f := newFinding(tr.name, result.KindStall, "start", "fail", t-dt, 0,
				fmt.Sprintf("stall started: %s", why),
				map[string]float64{"aqu_sz": s.QueueSize, "util_pct": s.UtilPct, "bytes_s": bytes, "ref_bytes_s": refBytes,
					"iowait_pct": h.IowaitPct, "writeback_bytes": float64(h.WritebackBytes)})
			out = append(out, f)
		}
		e := tr.stall
		e.n++
		e.hostOnly = e.hostOnly && hostOnly
		e.peakQ = max(e.peakQ, s.QueueSize)
		e.peakWait = max(e.peakWait, s.ReadAwaitMs, s.WriteAwaitMs)
		e.minBytes = min(e.minBytes, bytes)
	} else if e := tr.stall; e != nil && e.n == 1 && e.hostOnly && bytes < th.StallRatio*e.refBytes {
		// One interval, on host-wide evidence only, and the device is
		// quiet after it with nothing waiting: the workload stopped inside
		// that interval, and the wait was someone else's or its last IO's.
		out = append(out, newFinding(tr.name, result.KindStall, result.PhaseWithdrawn, "info", e.start, dt,
			fmt.Sprintf("not a stall: the IO stopped with nothing left waiting (%s was host-wide only)", e.reason),
			map[string]float64{"min_bytes_s": e.minBytes, "ref_bytes_s": e.refBytes}))
		tr.stall = nil
	} else if tr.stall != nil {
		e := tr.stall
		d := t - dt - e.start
		out = append(out, newFinding(tr.name, result.KindStall, "end", "fail", e.start, d,
			fmt.Sprintf("stalled for %s: throughput fell to %s/s from %s/s (peak aqu-sz %.1f)", units.FormatSeconds(d), units.BytesSI(e.minBytes), units.BytesSI(e.refBytes), e.peakQ),
			map[string]float64{"min_bytes_s": e.minBytes, "ref_bytes_s": e.refBytes, "ref_iops": e.refIOPS, "peak_aqu_sz": e.peakQ, "peak_await_ms": e.peakWait}))
		tr.stall = nil
	}

	// The recent median learns from active, healthy intervals only, and
	// stays frozen during a stall so a long stall does not become normal.
	// The first active interval after an idle one is left out too: the
	// workload started, or resumed, somewhere inside it.
	idleBefore := tr.idleBefore
	tr.idleBefore = iops < th.ActiveIOPS
	tr.quietBefore = iops == 0 && s.InFlight == 0
	if !stalled {
		if iops >= th.ActiveIOPS && !idleBefore {
			tr.ref = append(tr.ref, refPoint{t: t, iops: iops, bytes: bytes})
			if len(tr.ref) > th.RefWindow {
				tr.ref = tr.ref[len(tr.ref)-th.RefWindow:]
			}
		}
		for len(tr.ref) > 0 && t-tr.ref[0].t > th.RefMaxAgeS {
			tr.ref = tr.ref[1:]
		}
	}
	return out
}

// sustained logs a condition once it has lasted th.Sustain intervals, and
// its end with the duration.
func (tr *tracker) sustained(ep **episode, on bool, kind string, t, dt float64, s result.DeviceSample, msg func(*episode) string) []finding {
	if on {
		if *ep == nil {
			*ep = &episode{start: t - dt}
		}
		e := *ep
		e.n++
		e.peakQ = max(e.peakQ, s.QueueSize)
		e.peakWait = max(e.peakWait, s.ReadAwaitMs, s.WriteAwaitMs)
		if !e.logged && e.n >= tr.th.Sustain {
			e.logged = true
			return []finding{newFinding(tr.name, kind, "start", "warn", e.start, 0, msg(e),
				map[string]float64{"aqu_sz": s.QueueSize, "util_pct": s.UtilPct})}
		}
		return nil
	}
	e := *ep
	*ep = nil
	if e == nil || !e.logged {
		return nil
	}
	d := t - dt - e.start
	name := map[string]string{result.KindSaturation: "saturated", result.KindCap: "at the ceiling"}[kind]
	return []finding{newFinding(tr.name, kind, "end", "warn", e.start, d,
		fmt.Sprintf("%s for %s (peak aqu-sz %.1f, await up to %s)", name, units.FormatSeconds(d), e.peakQ, units.Latency(e.peakWait*1e6)),
		map[string]float64{"peak_aqu_sz": e.peakQ, "peak_await_ms": e.peakWait})}
}

// storm follows host-wide writeback.
type storm struct {
	th       Thresholds
	n        int
	start    float64
	logged   bool
	peakWB   uint64
	peakDirt uint64
	peakWait float64
}

func (st *storm) step(t, dt float64, h Host) []finding {
	if h.WritebackBytes >= st.th.StormWritebackBytes {
		if st.n == 0 {
			st.start = t - dt
		}
		st.n++
		st.peakWB = max(st.peakWB, h.WritebackBytes)
		st.peakDirt = max(st.peakDirt, h.DirtyBytes)
		st.peakWait = max(st.peakWait, h.IowaitPct)
		if !st.logged && st.n >= st.th.StormIntervals {
			st.logged = true
			return []finding{newFinding("", result.KindWriteback, "start", "warn", st.start, 0,
				fmt.Sprintf("writeback storm: %s under writeback, %s dirty, iowait %.0f%%",
					units.HumanBytes(float64(h.WritebackBytes)), units.HumanBytes(float64(h.DirtyBytes)), h.IowaitPct),
				map[string]float64{"writeback_bytes": float64(h.WritebackBytes), "dirty_bytes": float64(h.DirtyBytes), "iowait_pct": h.IowaitPct})}
		}
		return nil
	}
	defer func() { *st = storm{th: st.th} }()
	if !st.logged {
		return nil
	}
	d := t - dt - st.start
	return []finding{newFinding("", result.KindWriteback, "end", "warn", st.start, d,
		fmt.Sprintf("writeback storm for %s: up to %s under writeback, %s dirty, iowait up to %.0f%%",
			units.FormatSeconds(d), units.HumanBytes(float64(st.peakWB)), units.HumanBytes(float64(st.peakDirt)), st.peakWait),
		map[string]float64{"peak_writeback_bytes": float64(st.peakWB), "peak_dirty_bytes": float64(st.peakDirt), "peak_iowait_pct": st.peakWait})}
}
