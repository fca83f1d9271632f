package watch

import (
	"github.com/iolens/iolens/internal/result"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics exports watch records as Prometheus metrics. Names follow
// node_exporter's where the meaning is the same, under iolens_watch_.
type Metrics struct {
	iops, bw, await, reqSize *prometheus.GaugeVec
	queue, util, inflight    *prometheus.GaugeVec
	state, stall, code       *prometheus.GaugeVec
	stallSeconds             *prometheus.CounterVec
	ceiling, credit, left    *prometheus.GaugeVec
	iowait, pressure, mem    *prometheus.GaugeVec
	cgroup                   *prometheus.GaugeVec
	findings                 *prometheus.CounterVec
	seen                     map[string]bool
	states                   []string
}

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
	m := &Metrics{
		iops:     g("device_iops", "Completed requests per second over the last interval.", "device", "op"),
		bw:       g("device_bytes_per_second", "Bytes per second transferred over the last interval.", "device", "op"),
		await:    g("device_await_seconds", "Mean time per completed request, queueing included (iostat r_await/w_await).", "device", "op"),
		reqSize:  g("device_request_bytes", "Mean request size (iostat rareq-sz/wareq-sz).", "device", "op"),
		queue:    g("device_queue_size", "Mean requests in flight (iostat aqu-sz).", "device"),
		util:     g("device_utilization_ratio", "Share of time with at least one request in flight; does not show saturation on parallel devices.", "device"),
		inflight: g("device_in_flight", "Requests in flight at the end of the interval.", "device"),
		state:    g("device_state", "1 for the device's current state (ok, busy, saturated, stalled, at cap).", "device", "state"),
		code:     g("device_state_code", "The device's state as a number for state timelines: 0 ok, 1 busy, 2 saturated, 3 at cap, 4 stalled.", "device"),
		stall:    g("device_stall_active", "1 while the device is stalled: IO pending and completions collapsed.", "device"),
		ceiling:  g("device_ceiling_ratio", "Rate as a share of the expected ceiling in force (--expect).", "device", "disk"),
		credit:   g("device_burst_credit_ratio", "Estimated burst credit left (--expect, bursting disks).", "device", "disk"),
		left:     g("device_burst_remaining_seconds", "How long the burst credit lasts at the current rate; absent when not draining.", "device", "disk"),
		iowait:   g("host_iowait_ratio", "Share of all CPU time spent in iowait."),
		pressure: g("host_io_pressure_ratio", "Share of time some task waited on IO (PSI)."),
		mem:      g("host_memory_bytes", "Dirty and writeback page cache.", "kind"),
		cgroup:   g("cgroup_bytes_per_second", "IO of the heaviest cgroups (--top), by device and pod when known.", "device", "cgroup", "namespace", "pod", "op"),
		seen:     map[string]bool{},
		states:   []string{StateOK, StateBusy, StateSaturated, StateStalled, StateAtCap},
	}
	m.stallSeconds = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "iolens", Subsystem: "watch", Name: "device_stall_seconds_total",
		Help: "Time the device has spent stalled.", ConstLabels: cl}, []string{"device"})
	m.findings = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "iolens", Subsystem: "watch", Name: "findings_total",
		Help: "Findings logged, by kind (stall, cliff, saturation, cap, writeback, burst).", ConstLabels: cl}, []string{"device", "kind"})
	reg.MustRegister(m.stallSeconds, m.findings)
	return m
}

// Observe updates the metrics from one record. disk names the expected
// disk for the ceiling metrics; interval is the sampling interval in s.
func (m *Metrics) Observe(r result.WatchRecord, disk string, interval float64) {
	switch r.Type {
	case result.WatchTypeFinding:
		if r.Finding != nil && r.Finding.Phase != "end" {
			m.findings.WithLabelValues(r.Finding.Device, r.Finding.Kind).Inc()
		}
		return
	case result.WatchTypeSample:
	default:
		return
	}
	for _, d := range r.Devices {
		n := d.Device
		m.iops.WithLabelValues(n, "read").Set(d.ReadIOPS)
		m.iops.WithLabelValues(n, "write").Set(d.WriteIOPS)
		m.bw.WithLabelValues(n, "read").Set(d.ReadBWBytes)
		m.bw.WithLabelValues(n, "write").Set(d.WriteBWBytes)
		m.await.WithLabelValues(n, "read").Set(d.ReadAwaitMs / 1000)
		m.await.WithLabelValues(n, "write").Set(d.WriteAwaitMs / 1000)
		m.reqSize.WithLabelValues(n, "read").Set(d.ReadReqBytes)
		m.reqSize.WithLabelValues(n, "write").Set(d.WriteReqBytes)
		m.queue.WithLabelValues(n).Set(d.QueueSize)
		m.util.WithLabelValues(n).Set(d.UtilPct / 100)
		m.inflight.WithLabelValues(n).Set(float64(d.InFlight))
		for _, s := range m.states {
			v := 0.0
			if s == d.State {
				v = 1
			}
			m.state.WithLabelValues(n, s).Set(v)
		}
		m.code.WithLabelValues(n).Set(float64(map[string]int{StateOK: 0, StateBusy: 1, StateSaturated: 2, StateAtCap: 3, StateStalled: 4}[d.State]))
		stalled := 0.0
		if d.State == StateStalled {
			stalled = 1
			m.stallSeconds.WithLabelValues(n).Add(interval)
		} else {
			m.stallSeconds.WithLabelValues(n).Add(0)
		}
		m.stall.WithLabelValues(n).Set(stalled)
		if d.CeilingPct != nil {
			m.ceiling.WithLabelValues(n, disk).Set(*d.CeilingPct / 100)
		}
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
		m.iowait.WithLabelValues().Set(r.System.IowaitPct / 100)
		m.mem.WithLabelValues("dirty").Set(float64(r.System.DirtyBytes))
		m.mem.WithLabelValues("writeback").Set(float64(r.System.WritebackBytes))
	}
	if r.IOPressurePct != nil {
		m.pressure.WithLabelValues().Set(*r.IOPressurePct / 100)
	}
	// The top list changes every interval: old series go, so that a pod
	// that stopped doing IO does not stay on the graph at its last rate.
	m.cgroup.Reset()
	for _, c := range r.Top {
		m.cgroup.WithLabelValues(c.Device, c.Cgroup, c.Namespace, c.Pod, "read").Set(c.ReadBWBytes)
		m.cgroup.WithLabelValues(c.Device, c.Cgroup, c.Namespace, c.Pod, "write").Set(c.WriteBWBytes)
	}
}
