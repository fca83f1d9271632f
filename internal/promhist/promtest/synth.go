package promtest

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/units"
)

// Rates are what a device does over one interval of a synthetic node.
type Rates struct {
	ReadIOPS, WriteIOPS, ReadBytes, WriteBytes float64 // per second
	Util                                       float64 // share of the interval busy, 0..1
	Queue                                      float64 // mean requests in flight
	ReadAwaitMs, WriteAwaitMs                  float64
}

// HostRates are a synthetic node's host-wide state over one interval.
type HostRates struct {
	Iowait        float64 // share of all CPU time, 0..1
	Dirty, WB     float64 // bytes at the end of the interval
	PressureShare float64 // share of the interval with IO waiting
}

// Synth is a node exporter's history, written by hand: samples every
// Step from Start, counters integrated from per-interval rates, as the
// node exporter would have exported them.
type Synth struct {
	Instance string
	Start    time.Time
	Step     time.Duration
	N        int // samples
	Devices  []string
	CPUs     int
	// Dev and Host give interval i, which ends at sample i (i >= 1).
	Dev  func(dev string, i int) Rates
	Host func(i int) HostRates
	// Missing samples make a gap; at a Reset sample the device counters
	// start again from zero (a reboot, a re-attached device).
	Missing map[int]bool
	Reset   map[int]bool
}

// Series is one series' samples.
type Series struct {
	Labels map[string]string
	TS     []int64 // ms since the epoch
	V      []float64
}

// At is the instant of sample i.
func (s *Synth) At(i int) time.Time { return s.Start.Add(time.Duration(i) * s.Step) }

// Build integrates the counters into series.
func (s *Synth) Build() []*Series {
	var out []*Series
	mk := func(name string, kv ...string) *Series {
		l := map[string]string{"__name__": name, "instance": s.Instance, "job": "node"}
		for i := 0; i+1 < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		se := &Series{Labels: l}
		out = append(out, se)
		return se
	}
	add := func(se *Series, ts int64, v float64) { se.TS, se.V = append(se.TS, ts), append(se.V, v) }
	dt := s.Step.Seconds()
	names := []string{"node_disk_reads_completed_total", "node_disk_writes_completed_total", "node_disk_read_bytes_total",
		"node_disk_written_bytes_total", "node_disk_io_time_seconds_total", "node_disk_io_time_weighted_seconds_total",
		"node_disk_read_time_seconds_total", "node_disk_write_time_seconds_total"}
	for _, d := range s.Devices {
		ss := make([]*Series, len(names))
		for k, n := range names {
			ss[k] = mk(n, "device", d)
		}
		now := mk("node_disk_io_now", "device", d)
		var c [8]float64
		// Counters do not start at zero on a node that has run a while.
		for k := range c {
			c[k] = 1e6 * float64(k+1)
		}
		for i := 0; i < s.N; i++ {
			if s.Reset[i] {
				c = [8]float64{}
			}
			q := 0.0
			if i > 0 {
				r := s.Dev(d, i)
				c[0] += math.Round(r.ReadIOPS * dt)
				c[1] += math.Round(r.WriteIOPS * dt)
				c[2] += math.Round(r.ReadBytes*dt/512) * 512
				c[3] += math.Round(r.WriteBytes*dt/512) * 512
				c[4] += math.Round(r.Util*dt*1000) / 1000
				c[5] += math.Round(r.Queue*dt*1000) / 1000
				c[6] += math.Round(r.ReadAwaitMs*r.ReadIOPS*dt) / 1000
				c[7] += math.Round(r.WriteAwaitMs*r.WriteIOPS*dt) / 1000
				q = math.Round(r.Queue)
			}
			if s.Missing[i] {
				continue
			}
			ts := s.At(i).UnixMilli()
			for k := range ss {
				add(ss[k], ts, c[k])
			}
			add(now, ts, q)
		}
	}
	modes := []string{"idle", "iowait", "user", "system"}
	cpu := make([][]*Series, s.CPUs)
	cc := make([][]float64, s.CPUs)
	for k := range cpu {
		cc[k] = make([]float64, len(modes))
		for m, mode := range modes {
			cpu[k] = append(cpu[k], mk("node_cpu_seconds_total", "cpu", fmt.Sprint(k), "mode", mode))
			cc[k][m] = 1000
		}
	}
	dirty, wb, pres := mk("node_memory_Dirty_bytes"), mk("node_memory_Writeback_bytes"), mk("node_pressure_io_waiting_seconds_total")
	uname := mk("node_uname_info", "nodename", strings.Split(s.Instance, ":")[0])
	var p float64
	for i := 0; i < s.N; i++ {
		h := HostRates{}
		if i > 0 {
			h = s.Host(i)
			for k := range cc {
				cc[k][0] += (1 - h.Iowait) * dt * 0.8
				cc[k][1] += h.Iowait * dt
				cc[k][2] += (1 - h.Iowait) * dt * 0.15
				cc[k][3] += (1 - h.Iowait) * dt * 0.05
			}
			p += h.PressureShare * dt
		}
		if s.Missing[i] {
			continue
		}
		ts := s.At(i).UnixMilli()
		for k := range cpu {
			for m := range modes {
				add(cpu[k][m], ts, cc[k][m])
			}
		}
		add(dirty, ts, h.Dirty)
		add(wb, ts, h.WB)
		add(pres, ts, p)
		add(uname, ts, 1)
	}
	return out
}

// OpenMetrics prints series as OpenMetrics text, as promtool's
// backfilling reads it (one family after the other, samples in order).
func OpenMetrics(ss []*Series) string {
	byName := map[string][]*Series{}
	var names []string
	for _, s := range ss {
		n := s.Labels["__name__"]
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
			for k, v := range s.Labels {
				if k != "__name__" {
					ls = append(ls, fmt.Sprintf("%s=%q", k, v))
				}
			}
			sort.Strings(ls)
			lbl := "{" + strings.Join(ls, ",") + "}"
			for i := range s.TS {
				fmt.Fprintf(&b, "%s%s %s %s\n", n, lbl, units.Trim(s.V[i], 3), units.Trim(float64(s.TS[i])/1000, 3))
			}
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

// Scenario is the history most tests judge: a node with one disk doing
// about 100 MB/s of writes at its own pace, a 15 s stall, a flat 50 MB/s
// ceiling, a counter reset while steady, and a minute without samples.
// The fields are sample indexes at 1 s.
type Scenario struct {
	StallFrom, StallTo int // intervals stalled: (StallFrom, StallTo]
	CapFrom, CapTo     int // intervals at the ceiling
	ResetAt            int
	GapFrom, GapTo     int // missing samples [GapFrom, GapTo)
}

// DefaultScenario is the one the tests use.
var DefaultScenario = Scenario{StallFrom: 100, StallTo: 115, CapFrom: 200, CapTo: 260, ResetAt: 300, GapFrom: 400, GapTo: 460}

// Synth is the scenario's node from start, n samples at 1 s.
func (sc Scenario) Synth(start time.Time, n int) *Synth {
	s := &Synth{Instance: "node-1:9100", Start: start, Step: time.Second, N: n, Devices: []string{"sdb"}, CPUs: 2,
		Missing: map[int]bool{}, Reset: map[int]bool{sc.ResetAt: true}}
	for i := sc.GapFrom; i < sc.GapTo; i++ {
		s.Missing[i] = true
	}
	s.Dev = func(_ string, i int) Rates {
		switch {
		case i > sc.StallFrom && i <= sc.StallTo:
			// The seed 003 signature: nothing completes, util 100%,
			// requests queued.
			return Rates{Util: 1, Queue: 9}
		case i > sc.CapFrom && i <= sc.CapTo:
			return Rates{WriteIOPS: 200, WriteBytes: 50e6, Util: 1, Queue: 16, WriteAwaitMs: 80}
		}
		// A workload of its own pace: 100 MB/s give or take 10%.
		w := 100e6 * (1 + 0.1*math.Sin(float64(i)/3))
		return Rates{WriteIOPS: w / 262144, WriteBytes: w, Util: 0.6, Queue: 2, WriteAwaitMs: 5}
	}
	s.Host = func(i int) HostRates {
		h := HostRates{Dirty: 200 << 20, WB: 8 << 20, PressureShare: 0.02}
		if i > sc.StallFrom && i <= sc.StallTo || i > sc.CapFrom && i <= sc.CapTo {
			h.Iowait, h.PressureShare = 0.3, 0.6
		}
		return h
	}
	return s
}
