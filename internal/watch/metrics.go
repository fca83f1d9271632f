package watch

import (
	"math"
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics exports watch records as Prometheus metrics. Rates are
// exported as counters, so that rate() over any scrape interval sees every
// IO: a gauge of the last interval would show one second of the fifteen
// between two scrapes. Only what is a level now stays a gauge: the state,
// requests in flight, dirty pages, the burst credit.
//
// The counters are rebuilt from the records (rate times interval, rounded
// to the kernel's whole units), so they count from when watching started
// and equal the kernel's own deltas over that time.
type Metrics struct {
	ios, bytes, wait        *prometheus.CounterVec
	busy, queue             *prometheus.CounterVec
	stateTime, findings     *prometheus.CounterVec
	iowait, pressure        *prometheus.CounterVec
	inflight, state, code   *prometheus.GaugeVec
	credit, left            *prometheus.GaugeVec
	expIOPS, expBW, expInfo *prometheus.GaugeVec
	mem, cgroup             *prometheus.GaugeVec
	disks                   map[string]string
	lastT                   float64
	states                  []string
	// devs holds each device's series, looked up once: a sample touches
	// some twenty per device.
	devs map[string]*devSeries
}

type devSeries struct {
	ios, bytes, wait [2]prometheus.Counter // read, write
	busy, queue      prometheus.Counter
	inflight, code   prometheus.Gauge
	state            []prometheus.Gauge
	stateTime        []prometheus.Counter
}

func (m *Metrics) dev(n string) *devSeries {
	if d, ok := m.devs[n]; ok {
		return d
	}
	d := &devSeries{busy: m.busy.WithLabelValues(n), queue: m.queue.WithLabelValues(n),
		inflight: m.inflight.WithLabelValues(n), code: m.code.WithLabelValues(n)}
	for i, op := range []string{"read", "write"} {
		d.ios[i], d.bytes[i], d.wait[i] = m.ios.WithLabelValues(n, op), m.bytes.WithLabelValues(n, op), m.wait.WithLabelValues(n, op)
	}
	for _, st := range m.states {
		d.state = append(d.state, m.state.WithLabelValues(n, st))
		d.stateTime = append(d.stateTime, m.stateTime.WithLabelValues(n, st))
	}
	m.devs[n] = d
	return d
}

// States lists the device states as metric label values, in the order of
// the state code (0 ok ... 4 stalled).
var States = []string{StateOK, StateBusy, StateSaturated, StateAtCap, StateStalled}

// StateLabel is a state as a label value: states are single words, and
// older logs' "at cap" reads as at_cap.
func StateLabel(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), " ", "_") }

// NewMetrics registers the watch metrics with reg; node, when set, is a
// constant label (the DaemonSet passes the node name).
func NewMetrics(reg prometheus.Registerer, node string) *Metrics {
	cl := prometheus.Labels{}
	if node != "" {
		cl["node"] = node
	}
	g := func(name, help string, labels ...string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "iolens", Subsystem: "watch", Name: name, Help: help, ConstLabels: cl}, labels)
		reg.MustRegister(v)
		return v
	}
	c := func(name, help string, labels ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "iolens", Subsystem: "watch", Name: name, Help: help, ConstLabels: cl}, labels)
		reg.MustRegister(v)
		return v
	}
	return &Metrics{
		ios:   c("device_io_operations_total", "Requests completed (diskstats reads/writes completed); rate() is iostat's r/s and w/s.", "device", "op"),
		bytes: c("device_bytes_total", "Bytes transferred (diskstats sectors x 512); rate() is rkB/s and wkB/s in bytes.", "device", "op"),
		wait: c("device_io_wait_seconds_total", "Time completed requests spent from issue to completion, queueing included, summed over requests "+
			"(diskstats read/write ticks); rate() of it over rate() of io_operations_total is iostat's r_await/w_await.", "device", "op"),
		busy: c("device_busy_seconds_total", "Time with at least one request in flight (diskstats io_ticks); rate() is iostat's %util/100, "+
			"which does not show saturation on parallel devices.", "device"),
		queue: c("device_queue_seconds_total", "Requests in flight integrated over time (diskstats weighted io_ticks); rate() is iostat's aqu-sz.", "device"),
		stateTime: c("device_state_seconds_total", "Time the device spent in each state (ok, busy, saturated, at_cap, stalled), "+
			"judged every sampling interval; rate() is the share of time.", "device", "state"),
		findings: c("findings_total", "Findings logged, by kind (stall, cliff, saturation, cap, writeback, burst).", "device", "kind"),
		iowait:   c("host_iowait_seconds_total", "Time weighted by the share of CPU time in iowait (/proc/stat); rate() is iostat's %iowait/100."),
		pressure: c("host_io_pressure_seconds_total", "Time in which some task waited on IO (PSI io some); rate() is the share of time."),
		inflight: g("device_in_flight", "Requests in flight at the last sample.", "device"),
		state:    g("device_state", "1 for the device's current state (ok, busy, saturated, at_cap, stalled), else 0.", "device", "state"),
		code:     g("device_state_code", "The device's current state as a number, for state timelines: 0 ok, 1 busy, 2 saturated, 3 at_cap, 4 stalled.", "device"),
		credit:   g("device_burst_credit_ratio", "Estimated burst credit left, 0 to 1 (expected disks that burst).", "device", "disk"),
		left:     g("device_burst_remaining_seconds", "How long the burst credit lasts at the current rate; absent when it is not draining.", "device", "disk"),
		expIOPS: g("device_expected_iops", "The expected disk's IOPS limit, by kind: baseline, burst (while credit lasts) and vm "+
			"(the VM's limit on its disks' traffic).", "device", "disk", "limit"),
		expBW:   g("device_expected_bytes_per_second", "The expected disk's bandwidth limit, by kind: baseline, burst and vm.", "device", "disk", "limit"),
		expInfo: g("device_expected_info", "1 for the disk a device is expected to be (--expect, or the node's volumes).", "device", "disk"),
		mem:     g("host_memory_bytes", "Dirty and writeback page cache at the last sample.", "kind"),
		cgroup: g("cgroup_bytes_per_second", "Bytes per second of the heaviest cgroups (--top) over the last interval, by device and pod when known. "+
			"A ranking of now, not a rate to integrate: a cgroup leaves it when others outweigh it.", "device", "cgroup", "namespace", "pod", "op"),
		disks:  map[string]string{},
		states: States,
		devs:   map[string]*devSeries{},
	}
}

// Expect records the disk a device is expected to be, as gauges of its
// limits (a zero limit is no limit of that kind and is left out). A
// device expected to be another disk, or none (c nil), loses the series
// of the one before.
func (m *Metrics) Expect(device string, c *Ceiling) {
	dev := prometheus.Labels{"device": device}
	for _, v := range []*prometheus.GaugeVec{m.expIOPS, m.expBW, m.expInfo, m.credit, m.left} {
		v.DeletePartialMatch(dev)
	}
	delete(m.disks, device)
	if c == nil {
		return
	}
	m.disks[device] = c.Name
	m.expInfo.WithLabelValues(device, c.Name).Set(1)
	set := func(v *prometheus.GaugeVec, limit string, x float64) {
		if x > 0 {
			v.WithLabelValues(device, c.Name, limit).Set(x)
		}
	}
	set(m.expIOPS, "baseline", c.IOPS)
	set(m.expBW, "baseline", c.BWBytes)
	if c.Bursts() {
		set(m.expIOPS, "burst", c.BurstIOPS)
		set(m.expBW, "burst", c.BurstBWBytes)
	}
	set(m.expIOPS, "vm", c.VMIOPS)
	set(m.expBW, "vm", c.VMBWBytes)
}

// Observe updates the metrics from one record. Records must come in
// order: a sample's interval is the time since the previous record.
func (m *Metrics) Observe(r result.WatchRecord) {
	switch r.Type {
	case result.WatchTypeStart:
		m.lastT = r.T
		return
	case result.WatchTypeFinding:
		if r.Finding != nil && r.Finding.Phase != "end" && r.Finding.Phase != result.PhaseWithdrawn {
			m.findings.WithLabelValues(r.Finding.Device, r.Finding.Kind).Inc()
		}
		return
	case result.WatchTypeSample:
	default:
		return
	}
	dt := r.T - m.lastT
	m.lastT = r.T
	if dt < 0 || math.IsNaN(dt) {
		dt = 0
	}
	// whole rounds to the kernel's unit: counts are integers, ticks are
	// milliseconds, so the rounded product is the kernel's own delta.
	whole := func(x, unit float64) float64 {
		if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0
		}
		return math.Round(x/unit) * unit
	}
	for _, d := range r.Devices {
		n := d.Device
		ds := m.dev(n)
		reads, writes := whole(d.ReadIOPS*dt, 1), whole(d.WriteIOPS*dt, 1)
		ds.ios[0].Add(reads)
		ds.ios[1].Add(writes)
		ds.bytes[0].Add(whole(d.ReadBWBytes*dt, 512))
		ds.bytes[1].Add(whole(d.WriteBWBytes*dt, 512))
		ds.wait[0].Add(whole(d.ReadAwaitMs*reads, 1) / 1000)
		ds.wait[1].Add(whole(d.WriteAwaitMs*writes, 1) / 1000)
		ds.busy.Add(whole(d.UtilPct/100*dt, 0.001))
		ds.queue.Add(whole(d.QueueSize*dt, 0.001))
		ds.inflight.Set(float64(d.InFlight))
		cur := StateLabel(d.State)
		code := 0
		for i, s := range m.states {
			v := 0.0
			if s == cur {
				v, code = 1, i
				ds.stateTime[i].Add(dt)
			}
			ds.state[i].Set(v)
		}
		ds.code.Set(float64(code))
		disk := m.disks[n]
		if d.BurstCreditPct != nil {
			m.credit.WithLabelValues(n, disk).Set(*d.BurstCreditPct / 100)
		}
		if d.BurstLeftS != nil {
			m.left.WithLabelValues(n, disk).Set(*d.BurstLeftS)
		} else {
			m.left.DeleteLabelValues(n, disk)
		}
	}
	if r.System != nil {
		m.iowait.WithLabelValues().Add(max(0, r.System.IowaitPct/100*dt))
		m.mem.WithLabelValues("dirty").Set(float64(r.System.DirtyBytes))
		m.mem.WithLabelValues("writeback").Set(float64(r.System.WritebackBytes))
	}
	if r.IOPressurePct != nil && *r.IOPressurePct >= 0 {
		m.pressure.WithLabelValues().Add(*r.IOPressurePct / 100 * dt)
	}
	// The top list changes every interval: old series go, so that a pod
	// that stopped doing IO does not stay on the graph at its last rate.
	m.cgroup.Reset()
	for _, c := range r.Top {
		m.cgroup.WithLabelValues(c.Device, c.Cgroup, c.Namespace, c.Pod, "read").Set(c.ReadBWBytes)
		m.cgroup.WithLabelValues(c.Device, c.Cgroup, c.Namespace, c.Pod, "write").Set(c.WriteBWBytes)
	}
}
