package promhist

import (
	"time"

	"github.com/iolens/iolens/internal/result"
)

// halving keeps a series for the reports in bounded memory: every
// interval until max are held, then pairs merge into intervals twice as
// long, and so on. merge adds a later point to one that holds n
// intervals (0: empty).
type halving[P any] struct {
	max     int
	per     int // intervals merged into each point
	pts     []P
	pending P
	npend   int
	merge   func(a, b P, n int) P
}

func (st *halving[P]) add(p P) {
	st.pending = st.merge(st.pending, p, st.npend)
	st.npend++
	if st.npend < st.per {
		return
	}
	st.pts = append(st.pts, st.pending)
	var zero P
	st.pending, st.npend = zero, 0
	if len(st.pts) >= st.max {
		half := st.pts[:0]
		for i := 0; i+1 < len(st.pts); i += 2 {
			half = append(half, st.merge(st.pts[i], st.pts[i+1], 1))
		}
		if len(st.pts)%2 == 1 {
			st.pending, st.npend = st.pts[len(st.pts)-1], st.per
		}
		st.pts = half
		st.per *= 2
	}
}

// points returns what is held, the last partial point included.
func (st *halving[P]) points() []P {
	if st.npend > 0 {
		return append(st.pts, st.pending)
	}
	return st.pts
}

// store is a device's series. Rates merge weighted by time, awaits by
// IOs, request sizes by requests; the queue and utilization are time
// means, requests in flight the peak.
type store struct{ halving[point] }

type point struct {
	end time.Time
	dt  float64 // seconds
	s   result.DeviceSample
}

func newStore(max int) *store { return &store{halving[point]{max: max, per: 1, merge: merge}} }

func (st *store) add(end time.Time, dt time.Duration, s result.DeviceSample) {
	st.halving.add(point{end: end, dt: dt.Seconds(), s: s})
}

// merge adds b (later) to a, which holds n intervals (0: a is empty).
func merge(a, b point, n int) point {
	if n == 0 || a.dt <= 0 {
		return b
	}
	ta, tb := a.dt, b.dt
	t := ta + tb
	w := func(x, y float64) float64 { return (x*ta + y*tb) / t }
	x, y := a.s, b.s
	out := result.DeviceSample{
		ReadIOPS: w(x.ReadIOPS, y.ReadIOPS), WriteIOPS: w(x.WriteIOPS, y.WriteIOPS),
		ReadBWBytes: w(x.ReadBWBytes, y.ReadBWBytes), WriteBWBytes: w(x.WriteBWBytes, y.WriteBWBytes),
		QueueSize: w(x.QueueSize, y.QueueSize), UtilPct: w(x.UtilPct, y.UtilPct), InFlight: max(x.InFlight, y.InFlight),
	}
	perIO := func(ma, ia, mb, ib float64) float64 {
		if ia*ta+ib*tb <= 0 {
			return 0
		}
		return (ma*ia*ta + mb*ib*tb) / (ia*ta + ib*tb)
	}
	out.ReadAwaitMs = perIO(x.ReadAwaitMs, x.ReadIOPS, y.ReadAwaitMs, y.ReadIOPS)
	out.WriteAwaitMs = perIO(x.WriteAwaitMs, x.WriteIOPS, y.WriteAwaitMs, y.WriteIOPS)
	out.ReadReqBytes = perIO(x.ReadReqBytes, x.ReadIOPS, y.ReadReqBytes, y.ReadIOPS)
	out.WriteReqBytes = perIO(x.WriteReqBytes, x.WriteIOPS, y.WriteReqBytes, y.WriteIOPS)
	return point{end: b.end, dt: t, s: out}
}

// sysStore is store for the host-wide series.
type sysStore struct{ halving[sysPoint] }

type sysPoint struct {
	end time.Time
	dt  float64
	s   result.SystemSample
}

func newSysStore(max int) *sysStore {
	return &sysStore{halving[sysPoint]{max: max, per: 1, merge: mergeSys}}
}

func mergeSys(a, b sysPoint, n int) sysPoint {
	if n == 0 || a.dt <= 0 {
		return b
	}
	t := a.dt + b.dt
	return sysPoint{end: b.end, dt: t, s: result.SystemSample{
		IowaitPct:      (a.s.IowaitPct*a.dt + b.s.IowaitPct*b.dt) / t,
		CPUBusyPct:     (a.s.CPUBusyPct*a.dt + b.s.CPUBusyPct*b.dt) / t,
		DirtyBytes:     max(a.s.DirtyBytes, b.s.DirtyBytes),
		WritebackBytes: max(a.s.WritebackBytes, b.s.WritebackBytes),
	}}
}

func (st *sysStore) add(end time.Time, dt time.Duration, s result.SystemSample) {
	st.halving.add(sysPoint{end: end, dt: dt.Seconds(), s: s})
}
