package promhist

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// rates are what a device does over one interval of a synthetic node.
type rates struct {
	rIOPS, wIOPS, rBytes, wBytes float64 // per second
	util                         float64 // 0..1
	queue                        float64 // mean requests in flight
	rAwaitMs, wAwaitMs           float64
}

// hostRates are a synthetic node's host-wide state over one interval.
type hostRates struct {
	iowait        float64 // share of all CPU time, 0..1
	dirty, wb     float64 // bytes at the end of the interval
	pressureShare float64 // share of the interval with IO waiting
}

// synth is a node exporter's history, written by hand: samples every
// step from start, counters integrated from per-interval rates.
type synth struct {
	instance string
	start    time.Time
	step     time.Duration
	n        int // samples
	devices  []string
	cpus     int
	dev      func(dev string, i int) rates // interval i ends at sample i (i >= 1)
	host     func(i int) hostRates
	// missing samples (a gap); reset: the device counters start again
	// from zero at that sample (a reboot, a re-attached device).
	missing map[int]bool
	reset   map[int]bool
}

// series is one series' samples.
type series struct {
	labels map[string]string
	ts     []int64 // ms
	v      []float64
}

func (s *synth) at(i int) time.Time { return s.start.Add(time.Duration(i) * s.step) }

// build integrates the counters.
func (s *synth) build() []*series {
	var out []*series
	mk := func(name string, kv ...string) *series {
		l := map[string]string{"__name__": name, "instance": s.instance, "job": "node"}
		for i := 0; i+1 < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		se := &series{labels: l}
		out = append(out, se)
		return se
	}
	dt := s.step.Seconds()
	for _, d := range s.devices {
		names := []string{mReads, mWrites, mReadBytes, mWrittenBytes, mIOTime, mWeighted, mReadTime, mWriteTime}
		ss := make([]*series, len(names))
		for k, n := range names {
			ss[k] = mk(n, "device", d)
		}
		now := mk(mIONow, "device", d)
		info := mk("node_disk_info", "device", d, "major", "8", "minor", "0", "serial", "ser-"+d)
		var c [8]float64
		// Counters do not start at zero on a node that has run a while.
		for k := range c {
			c[k] = 1e6 * float64(k+1)
		}
		for i := 0; i < s.n; i++ {
			if s.reset[i] {
				c = [8]float64{}
			}
			if i > 0 {
				r := s.dev(d, i)
				c[0] += math.Round(r.rIOPS * dt)
				c[1] += math.Round(r.wIOPS * dt)
				c[2] += math.Round(r.rBytes*dt/512) * 512
				c[3] += math.Round(r.wBytes*dt/512) * 512
				c[4] += math.Round(r.util*dt*1000) / 1000
				c[5] += math.Round(r.queue*dt*1000) / 1000
				c[6] += math.Round(r.rAwaitMs*r.rIOPS*dt) / 1000
				c[7] += math.Round(r.wAwaitMs*r.wIOPS*dt) / 1000
			}
			if s.missing[i] {
				continue
			}
			ts := s.at(i).UnixMilli()
			for k := range ss {
				ss[k].ts = append(ss[k].ts, ts)
				ss[k].v = append(ss[k].v, c[k])
			}
			q := 0.0
			if i > 0 {
				q = math.Round(s.dev(d, i).queue)
			}
			now.ts, now.v = append(now.ts, ts), append(now.v, q)
			info.ts, info.v = append(info.ts, ts), append(info.v, 1)
		}
	}
	modes := []string{"idle", "iowait", "user", "system"}
	cpu := make([][]*series, s.cpus)
	var cc = make([][]float64, s.cpus)
	for k := 0; k < s.cpus; k++ {
		cc[k] = make([]float64, len(modes))
		for m, mode := range modes {
			cpu[k] = append(cpu[k], mk(mCPU, "cpu", fmt.Sprint(k), "mode", mode))
			cc[k][m] = 1000
		}
	}
	dirty, wb, pres := mk(mDirty), mk(mWriteback), mk(mPressure)
	uname := mk("node_uname_info", "nodename", strings.Split(s.instance, ":")[0])
	var p float64
	for i := 0; i < s.n; i++ {
		h := hostRates{}
		if i > 0 {
			h = s.host(i)
			for k := 0; k < s.cpus; k++ {
				cc[k][1] += h.iowait * dt
				cc[k][0] += (1 - h.iowait) * dt * 0.8
				cc[k][2] += (1 - h.iowait) * dt * 0.15
				cc[k][3] += (1 - h.iowait) * dt * 0.05
			}
			p += h.pressureShare * dt
		}
		if s.missing[i] {
			continue
		}
		ts := s.at(i).UnixMilli()
		for k := 0; k < s.cpus; k++ {
			for m := range modes {
				cpu[k][m].ts, cpu[k][m].v = append(cpu[k][m].ts, ts), append(cpu[k][m].v, cc[k][m])
			}
		}
		dirty.ts, dirty.v = append(dirty.ts, ts), append(dirty.v, h.dirty)
		wb.ts, wb.v = append(wb.ts, ts), append(wb.v, h.wb)
		pres.ts, pres.v = append(pres.ts, ts), append(pres.v, p)
		uname.ts, uname.v = append(uname.ts, ts), append(uname.v, 1)
	}
	return out
}

// openMetrics prints the series as OpenMetrics text, as promtool's
// backfilling reads it (one family after the other, samples in order).
func openMetrics(ss []*series) string {
	byName := map[string][]*series{}
	var names []string
	for _, s := range ss {
		n := s.labels["__name__"]
		if _, ok := byName[n]; !ok {
			names = append(names, n)
		}
		byName[n] = append(byName[n], s)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fam, typ := n, "gauge"
		if strings.HasSuffix(n, "_total") {
			fam, typ = strings.TrimSuffix(n, "_total"), "counter"
		}
		fmt.Fprintf(&b, "# TYPE %s %s\n", fam, typ)
		for _, s := range byName[n] {
			var ls []string
			for k, v := range s.labels {
				if k != "__name__" {
					ls = append(ls, fmt.Sprintf("%s=%q", k, v))
				}
			}
			sort.Strings(ls)
			lbl := "{" + strings.Join(ls, ",") + "}"
			for i := range s.ts {
				fmt.Fprintf(&b, "%s%s %s %s\n", n, lbl, fmtFloat(s.v[i]), fmtFloat(float64(s.ts[i])/1000))
			}
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

func fmtFloat(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

// scenario is the history most tests judge: a node with one disk doing
// 100 MB/s of writes with IO queued, a 15 s stall, a flat 50 MB/s
// ceiling, a counter reset while steady, and a minute without samples.
// Times are sample indexes at 1 s.
type scenario struct {
	stallFrom, stallTo int // intervals stalled: (stallFrom, stallTo]
	capFrom, capTo     int
	resetAt            int
	gapFrom, gapTo     int // missing samples [gapFrom, gapTo)
}

var defaultScenario = scenario{stallFrom: 100, stallTo: 115, capFrom: 200, capTo: 260, resetAt: 300, gapFrom: 400, gapTo: 460}

func (sc scenario) synth(start time.Time, n int) *synth {
	s := &synth{instance: "node-1:9100", start: start, step: time.Second, n: n, devices: []string{"sdb"}, cpus: 2,
		missing: map[int]bool{}, reset: map[int]bool{sc.resetAt: true}}
	for i := sc.gapFrom; i < sc.gapTo; i++ {
		s.missing[i] = true
	}
	s.dev = func(_ string, i int) rates {
		switch {
		case i > sc.stallFrom && i <= sc.stallTo:
			// The seed 003 signature: nothing completes, util 100%,
			// requests queued.
			return rates{wIOPS: 0, wBytes: 0, util: 1, queue: 9}
		case i > sc.capFrom && i <= sc.capTo:
			return rates{wIOPS: 200, wBytes: 50e6, util: 1, queue: 16, wAwaitMs: 80}
		}
		// A workload of its own pace: 100 MB/s give or take 10%.
		w := 100e6 * (1 + 0.1*math.Sin(float64(i)/3))
		return rates{wIOPS: w / 262144, wBytes: w, util: 0.6, queue: 2, wAwaitMs: 5}
	}
	s.host = func(i int) hostRates {
		h := hostRates{dirty: 200 << 20, wb: 8 << 20, pressureShare: 0.02}
		if i > sc.stallFrom && i <= sc.stallTo || i > sc.capFrom && i <= sc.capTo {
			h.iowait, h.pressureShare = 0.3, 0.6
		}
		return h
	}
	return s
}
