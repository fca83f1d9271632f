package result

// The NDJSON records iolens watch streams, and their conversion back into
// results, so that report and analyze read a watch log like any benchmark
// result.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/units"
)

// WatchSchema names the version of watch records.
const WatchSchema = "iolens.watch/v1"

// WatchRecord types.
const (
	WatchTypeStart   = "start"
	WatchTypeSample  = "sample"
	WatchTypeFinding = "finding"
)

// WatchRecord is one line of a watch stream. Type says which of the optional
// parts are present.
type WatchRecord struct {
	Schema string    `json:"schema"`
	Type   string    `json:"type"`
	Time   time.Time `json:"time"`
	// T is seconds since watch started.
	T    float64 `json:"t_s"`
	Host string  `json:"host,omitempty"`

	// WatchStart records: what is watched and how.
	Start *WatchStart `json:"start,omitempty"`
	// Sample records: one row per device, host-wide state, top cgroups.
	Devices []WatchDevice `json:"devices,omitempty"`
	System  *SystemSample `json:"system,omitempty"`
	// IOPressurePct is the share of the interval in which some task
	// waited on IO (/proc/pressure/io "some"); -1 when the kernel has no
	// PSI.
	IOPressurePct *float64      `json:"io_pressure_pct,omitempty"`
	Top           []WatchCgroup `json:"top,omitempty"`
	// Etcd: the WAL fsync of each etcd member watched (watch --etcd).
	Etcd []WatchEtcd `json:"etcd,omitempty"`
	// WatchFinding records.
	Finding *WatchFinding `json:"finding,omitempty"`
}

// WatchStart describes a watch session.
type WatchStart struct {
	IntervalS float64           `json:"interval_s"`
	Devices   []WatchDeviceInfo `json:"devices"`
	// Expect names the disk whose ceiling rows are compared with.
	Expect string   `json:"expect,omitempty"`
	Notes  []string `json:"notes,omitempty"`
}

// WatchDeviceInfo is a watched device.
type WatchDeviceInfo struct {
	Name   string `json:"name"`
	MajMin string `json:"maj_min"`
	// Parallel is true for devices that serve requests in parallel
	// (non-rotational), on which utilization does not show saturation.
	Parallel bool `json:"parallel"`
	// Mounts lists the mount points the device backs.
	Mounts []string `json:"mounts,omitempty"`
	// Expect names the disk the device is compared with, when it has its
	// own (a node's volumes are different disks).
	Expect string `json:"expect,omitempty"`
}

// WatchDevice is one device's row over one interval.
type WatchDevice struct {
	Device string `json:"device"`
	State  string `json:"state"`
	DeviceSample
	// CeilingPct is the rate as a share of the expected ceiling in force
	// (burst or baseline); nil without --expect.
	CeilingPct *float64 `json:"ceiling_pct,omitempty"`
	// BurstCreditPct is the estimated burst credit left; nil when the disk
	// does not burst or without --expect.
	BurstCreditPct *float64 `json:"burst_credit_pct,omitempty"`
	// BurstLeftS is how long the credit lasts at the current rate; nil
	// when the rate is at or below baseline (credit is not draining).
	BurstLeftS *float64 `json:"burst_left_s,omitempty"`
	// TopCgroup names the heaviest cgroup on the device in this interval.
	TopCgroup string `json:"top_cgroup,omitempty"`
}

// WatchCgroup is the IO a cgroup issued to one device over one interval.
type WatchCgroup struct {
	Device       string  `json:"device"`
	Cgroup       string  `json:"cgroup"`
	ReadIOPS     float64 `json:"r_s"`
	WriteIOPS    float64 `json:"w_s"`
	ReadBWBytes  float64 `json:"r_bytes_s"`
	WriteBWBytes float64 `json:"w_bytes_s"`
	// Processes are a few of the cgroup's processes, "pid comm".
	Processes []string `json:"processes,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Pod       string   `json:"pod,omitempty"`
	PodUID    string   `json:"pod_uid,omitempty"`
	Container string   `json:"container,omitempty"`
}

// Name is how the cgroup is shown: the pod when known, else the first
// process, else the path.
func (c WatchCgroup) Name() string {
	switch {
	case c.Pod != "" && c.Namespace != "":
		return c.Namespace + "/" + c.Pod
	case c.Pod != "":
		return c.Pod
	case c.PodUID != "":
		return "pod " + c.PodUID
	case len(c.Processes) > 0:
		return c.Processes[0]
	}
	return c.Cgroup
}

// WatchFinding is one entry of the findings log. Phase is "start" when a
// condition begins (its duration is not known yet), "end" when it ends
// (the finding carries the duration), PhaseWithdrawn when what started
// turned out not to be that condition, and "" for one-off findings.
// PhaseWithdrawn closes a condition that started without keeping it: the
// interval that opened it is explained otherwise (a stall on host-wide
// evidence alone, followed by a quiet device, was the workload stopping).
const PhaseWithdrawn = "withdrawn"

type WatchFinding struct {
	Device string `json:"device,omitempty"`
	Phase  string `json:"phase,omitempty"`
	Finding
}

// watchResults turns a watch stream into results, one per watch session (a
// start record begins a session). Each result carries the device and
// system series on the watch's time axis and the findings that ended or
// were still open at the end of the stream.
func watchResults(recs []WatchRecord, name string) ([]Result, error) {
	ws := &watchStream{name: name}
	var out []Result
	for _, r := range recs {
		rs, err := ws.add(r)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	rs, err := ws.end()
	return append(out, rs...), err
}

// watchStream rebuilds results from watch records as they are read: only
// the session in progress is held.
type watchStream struct {
	name string
	n    int // records read
	cur  *session
	out  int // sessions emitted
}

// add takes the next record and returns the session it completes.
func (w *watchStream) add(r WatchRecord) ([]Result, error) {
	w.n++
	if r.Schema != WatchSchema {
		return nil, fmt.Errorf("watch record %d has schema %q; this iolens reads %s", w.n, r.Schema, WatchSchema)
	}
	var done []Result
	if r.Type == WatchTypeStart || w.cur == nil {
		done = w.flush()
		w.cur = newSession(w.name, w.out+1, r)
	}
	w.cur.add(r)
	return done, nil
}

func (w *watchStream) flush() []Result {
	defer func() { w.cur = nil }()
	if w.cur != nil && w.cur.samples > 0 {
		w.out++
		return []Result{w.cur.result()}
	}
	return nil
}

// end returns the last session.
func (w *watchStream) end() ([]Result, error) {
	rs := w.flush()
	if w.out == 0 {
		return nil, fmt.Errorf("watch stream has no samples")
	}
	return rs, nil
}

// DecodeWatch reads one watch record from a line.
func DecodeWatch(line []byte) (WatchRecord, error) {
	var r WatchRecord
	if err := json.Unmarshal(line, &r); err != nil {
		if fe := integerRange(err); fe != nil {
			return WatchRecord{}, fmt.Errorf("watch record at %.0f s: %w", units.TimeOffsetFigure.Or(r.T), fe)
		}
		return r, err
	}
	if err := checkRecord(&r); err != nil {
		return WatchRecord{}, fmt.Errorf("watch record at %.0f s: %w", units.TimeOffsetFigure.Or(r.T), err)
	}
	return r, nil
}

// IsWatch reports whether a schema names a watch record.
func IsWatch(schema string) bool { return strings.HasPrefix(schema, "iolens.watch/") }

type session struct {
	res      Result
	series   map[string]*DeviceSeries
	order    []string
	open     map[string]WatchFinding // key: device/kind
	lastT    float64
	samples  int
	interval float64
}

func newSession(name string, index int, r WatchRecord) *session {
	s := &session{series: map[string]*DeviceSeries{}, open: map[string]WatchFinding{}, interval: 1}
	s.res = Result{Schema: Schema, RunID: "watch:" + name, Suite: "watch", Index: index, Repeat: 1,
		Test:   TestSpec{Name: "watch"},
		Target: Target{Kind: "watch", Path: name}, Host: Host{Hostname: r.Host},
		Start: r.Time.Add(-time.Duration(r.T * float64(time.Second))), Status: "ok",
		FioSeries: []FioSample{}, Devices: []DeviceSeries{}, System: []SystemSample{}}
	if r.Start != nil {
		s.interval = r.Start.IntervalS
		for _, d := range r.Start.Devices {
			s.device(d.Name)
		}
		s.res.Target.Labels = map[string]string{}
		if r.Start.Expect != "" {
			s.res.Target.Labels["expect"] = r.Start.Expect
		}
		s.res.Notes = append(s.res.Notes, r.Start.Notes...)
	}
	return s
}

func (s *session) device(name string) *DeviceSeries {
	if ds, ok := s.series[name]; ok {
		return ds
	}
	ds := &DeviceSeries{Device: name, Role: "direct", Samples: []DeviceSample{}}
	s.series[name] = ds
	s.order = append(s.order, name)
	return ds
}

func (s *session) add(r WatchRecord) {
	s.res.End = r.Time
	s.lastT = r.T
	switch r.Type {
	case WatchTypeSample:
		s.samples++
		for _, d := range r.Devices {
			ds := s.device(d.Device)
			smp := d.DeviceSample
			smp.T = r.T
			ds.Samples = append(ds.Samples, smp)
		}
		if r.System != nil {
			sys := *r.System
			sys.T = r.T
			s.res.System = append(s.res.System, sys)
		}
	case WatchTypeFinding:
		if r.Finding == nil {
			return
		}
		f := *r.Finding
		key := f.Device + "/" + f.Kind
		switch f.Phase {
		case "start":
			s.open[key] = f
		case "end":
			delete(s.open, key)
			s.res.Findings = append(s.res.Findings, s.labelled(f))
		case PhaseWithdrawn:
			delete(s.open, key)
		default:
			s.res.Findings = append(s.res.Findings, s.labelled(f))
		}
	}
}

func (s *session) labelled(f WatchFinding) Finding {
	out := f.Finding
	if f.Device != "" && !strings.Contains(out.Summary, f.Device) {
		out.Summary = f.Device + ": " + out.Summary
	}
	return out
}

func (s *session) result() Result {
	keys := make([]string, 0, len(s.open))
	for k := range s.open {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := s.labelled(s.open[k])
		if f.StartS != nil {
			d := s.lastT - *f.StartS + s.interval
			f.DurationS = &d
		}
		f.Summary += " (still going when the log ends)"
		s.res.Findings = append(s.res.Findings, f)
	}
	for _, n := range s.order {
		s.res.Devices = append(s.res.Devices, *s.series[n])
	}
	if len(s.res.Devices) > 0 {
		s.res.Target.Device = s.res.Devices[0].Device
		for _, d := range s.res.Devices {
			s.res.Target.Devices = append(s.res.Target.Devices, d.Device)
		}
	}
	return s.res
}
