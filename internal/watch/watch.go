package watch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"time"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diskstats"
	"github.com/iolens/iolens/internal/result"
	"github.com/prometheus/procfs"
)

// Detector is a streaming detector fed one device interval at a time, for
// findings the state machine does not make itself (cliffs). value is the
// device's throughput in bytes/s; Flush returns what is still open when
// watching ends.
type Detector interface {
	Add(t float64, value float64, s *result.DeviceSample) []result.Finding
	Flush() []result.Finding
}

// CliffDetectors gives each device analysis' streaming cliff detector,
// on its throughput and on its IOPS. Stalls are not left to a
// throughput-only detector: a live workload may simply stop, so the state
// machine asks for evidence that IO is pending as well.
func CliffDetectors(interval time.Duration) func(string) []Detector {
	return func(string) []Detector {
		cfg := analysis.CliffConfig{Interval: interval.Seconds(), MinBurstS: 5, MinLowS: 5}
		byIOPS := cfg
		byIOPS.Unit = analysis.UnitIOPS
		return []Detector{&cliffs{bytes: analysis.NewCliffDetector(cfg), iops: analysis.NewCliffDetector(byIOPS), gap: cfg.MinLowS,
			activeIOPS: DefaultThresholds().ActiveIOPS}}
	}
}

// cliffs looks for a cliff in throughput and in IOPS. A disk capped in
// IOPS drops to a steady IOPS plateau whose throughput moves with the
// request size (a file system journal's commit every few seconds is
// enough to make it look like a ramp), and a disk capped in bandwidth the
// other way round. A drop seen in both is logged once, by whichever sees
// it first.
//
// Idle intervals, and the first active one after them, are shown to the
// detectors as no IO: a workload starts, or resumes after a stall,
// anywhere inside an interval, and that partial first interval would make
// the start of a short burst look like a ramp, which is no plateau. The
// first interval watched counts as following an active one, since a
// workload already running fills it.
type cliffs struct {
	bytes, iops *analysis.CliffDetector
	gap         float64
	last        *float64
	idleBefore  bool
	// activeIOPS: below it an interval is idle, as for the stall
	// reference.
	activeIOPS float64
}

func (c *cliffs) Add(t, v float64, s *result.DeviceSample) []result.Finding {
	var iops float64
	if s != nil {
		iops = s.ReadIOPS + s.WriteIOPS
	}
	idle := iops < c.activeIOPS
	if idle || c.idleBefore {
		v, iops = 0, 0
	}
	c.idleBefore = idle
	return c.once(append(c.bytes.Add(t, v, s), c.iops.Add(t, iops, s)...))
}

func (c *cliffs) Flush() []result.Finding { return c.once(append(c.bytes.Flush(), c.iops.Flush()...)) }

// once drops a cliff placed within gap seconds of the last one logged.
func (c *cliffs) once(fs []result.Finding) []result.Finding {
	var out []result.Finding
	for _, f := range fs {
		if f.StartS != nil {
			if c.last != nil && math.Abs(*f.StartS-*c.last) < c.gap {
				continue
			}
			at := *f.StartS
			c.last = &at
		}
		out = append(out, f)
	}
	return out
}

// Config says what to watch and how.
type Config struct {
	// ProcRoot and SysRoot default to /proc and /sys; a pod reading the
	// host mounts them elsewhere.
	ProcRoot, SysRoot string
	// Devices are kernel names; empty means DefaultDevices.
	Devices []string
	// Mounts optionally lists the mount points of each device (shown in
	// the start record).
	Mounts   map[string][]string
	Interval time.Duration
	Th       Thresholds
	// Ceiling, when set, adds % of ceiling, the at-cap state and the
	// burst credit estimate (--expect) to every device; Ceilings, per
	// device, take precedence (a node's volumes are different disks).
	Ceiling  *Ceiling
	Ceilings map[string]*Ceiling
	// Discover, when set, is asked every Rediscover (default a minute)
	// which devices to watch and what each is expected to be: on a
	// Kubernetes node, volumes are attached and mounted as pods come.
	// New devices are watched from then on and a device whose expected
	// disk changed gets a fresh credit estimate, each with a finding
	// that says so; devices it no longer lists stay, showing idle.
	Discover   func() (Discovery, error)
	Rediscover time.Duration
	// Cgroups, when set, attributes IO; Top is how many cgroups each
	// sample lists.
	Cgroups *Cgroups
	Top     int
	// Detectors makes the streaming detectors of one device.
	Detectors func(device string) []Detector
	Host      string
	Notes     []string
	// Etcd, when set, also follows etcd members' WAL fsync p99.
	Etcd *Etcd
}

// Discovery is what Config.Discover finds.
type Discovery struct {
	Devices  []string
	Mounts   map[string][]string
	Ceilings map[string]*Ceiling
	// About says what a device carries ("PV pvc-1 (class premium)"),
	// for the finding that announces it.
	About map[string]string
}

// CeilingOf is the ceiling a device is compared with: its own, else the
// one for every device, else nil.
func (c *Config) CeilingOf(device string) *Ceiling {
	if x, ok := c.Ceilings[device]; ok && x != nil {
		return x
	}
	return c.Ceiling
}

// Watcher samples devices and turns each interval into records.
type Watcher struct {
	cfg      Config
	reader   *diskstats.Reader
	proc     procfs.FS
	psi      bool
	prev     diskstats.Snapshot
	prevPSI  uint64
	start    time.Time
	devs     []result.WatchDeviceInfo
	majmin   map[string]string
	trackers map[string]*tracker
	// family: by device, the devices tied to it (sysBlock.family).
	family   map[string]map[string]bool
	dets     map[string][]Detector
	credits  map[string]*credit
	atBase   map[string]int
	warned   map[string]bool
	storm    *storm
	throttle *throttles
	etcd     *etcdWatch
	started  bool
	// StallSeconds per device, for the metrics counter.
	last result.WatchRecord
	// discovered is when Discover last ran; discErr its last error, logged
	// once.
	discovered time.Time
	discErr    string
}

// ErrNoDevices means nothing could be watched.
var ErrNoDevices = errors.New("no block device to watch")

// New prepares a watcher; it reads nothing until Start.
func New(cfg Config) (*Watcher, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Th == (Thresholds{}) {
		cfg.Th = DefaultThresholds()
	}
	if len(cfg.Devices) == 0 {
		names, mounts, err := DefaultDevices(cfg.ProcRoot, cfg.SysRoot)
		if err != nil {
			return nil, err
		}
		cfg.Devices, cfg.Mounts = names, mounts
	}
	if len(cfg.Devices) == 0 {
		return nil, ErrNoDevices
	}
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	if cfg.Detectors == nil {
		cfg.Detectors = CliffDetectors(cfg.Interval)
	}
	sb := sysBlock{cfg.SysRoot}
	infos := make([]result.WatchDeviceInfo, 0, len(cfg.Devices))
	for _, n := range cfg.Devices {
		d, err := sb.info(n)
		if err != nil {
			return nil, err
		}
		d.Mounts = cfg.Mounts[n]
		infos = append(infos, d)
	}
	w := build(cfg, infos)
	w.family = sb.family(w.devs)
	w.throttle = newThrottles(cfg.Cgroups, cfg.SysRoot, w.majmin)
	if cfg.Etcd != nil {
		w.etcd = newEtcdWatch(*cfg.Etcd)
	}
	r, err := diskstats.NewReader(cfg.ProcRoot, cfg.SysRoot, cfg.Devices)
	if err != nil {
		return nil, err
	}
	w.reader = r
	if w.proc, err = procfs.NewFS(orDefault(cfg.ProcRoot, "/proc")); err != nil {
		return nil, err
	}
	return w, nil
}

// build makes the state machine of the given devices, which reads
// nothing: New adds the readers of a live watch, NewReplay none.
func build(cfg Config, devs []result.WatchDeviceInfo) *Watcher {
	w := &Watcher{cfg: cfg, majmin: map[string]string{}, trackers: map[string]*tracker{},
		dets: map[string][]Detector{}, credits: map[string]*credit{}, atBase: map[string]int{},
		warned: map[string]bool{}, storm: &storm{th: cfg.Th}}
	for _, d := range devs {
		n := d.Name
		if c := cfg.CeilingOf(n); c != nil {
			d.Expect = c.Name
		}
		w.devs = append(w.devs, d)
		w.majmin[d.MajMin] = n
		w.trackers[n] = newTracker(n, d.Parallel, cfg.Th)
		w.dets[n] = cfg.Detectors(n)
		if c := cfg.CeilingOf(n); c != nil {
			w.credits[n] = newCredit(*c)
		}
	}
	return w
}

// Devices lists the watched devices.
func (w *Watcher) Devices() []result.WatchDeviceInfo { return w.devs }

// Start takes the first snapshot and returns the start record.
func (w *Watcher) Start(now time.Time) (result.WatchRecord, error) {
	s, err := w.reader.Snapshot(now)
	if err != nil {
		return result.WatchRecord{}, err
	}
	for _, d := range w.devs {
		if _, ok := s.Devices[d.Name]; !ok {
			return result.WatchRecord{}, fmt.Errorf("%s is not in %s/diskstats", d.Name, orDefault(w.cfg.ProcRoot, "/proc"))
		}
	}
	w.prev, w.start, w.started, w.discovered = s, now, true, now
	w.throttle.sample(now, 0)
	w.prevPSI, w.psi = w.pressure()
	if w.cfg.Cgroups != nil {
		if _, err := w.cfg.Cgroups.Sample(0, w.majmin); err != nil {
			return result.WatchRecord{}, fmt.Errorf("reading cgroups: %w", err)
		}
		if w.cfg.Cgroups.ByProcess() {
			w.cfg.Notes = append(w.cfg.Notes, "the kernel accounts no block IO to cgroups for these devices (cgroup v1 without a throttle limit): "+
				"IO is attributed per process from /proc/PID/io, for all devices together, and buffered writes count when pages are dirtied")
		}
	}
	return w.startRecord(now), nil
}

// startRecord says what is watched and how, as of now.
func (w *Watcher) startRecord(now time.Time) result.WatchRecord {
	st := &result.WatchStart{IntervalS: w.cfg.Interval.Seconds(), Devices: w.devs, Notes: w.cfg.Notes}
	bursts := false
	for _, d := range w.devs {
		if c := w.cfg.CeilingOf(d.Name); c != nil {
			if c.Bursts() && !bursts {
				bursts = true
				st.Notes = append(st.Notes, fmt.Sprintf("burst credit is estimated from the observed rate, assuming %.0f%% when watching started", c.CreditStartPct))
			}
		}
	}
	if c := w.cfg.Ceiling; c != nil && len(w.cfg.Ceilings) == 0 {
		st.Expect = c.Name
	}
	return result.WatchRecord{Schema: result.WatchSchema, Type: result.WatchTypeStart, Time: now, Host: w.cfg.Host, Start: st}
}

func (w *Watcher) pressure() (uint64, bool) {
	p, err := w.proc.PSIStatsForResource("io")
	if err != nil || p.Some == nil {
		return 0, false
	}
	return p.Some.Total, true
}

// Tick samples now and returns the interval's sample record followed by
// the findings it produced.
func (w *Watcher) Tick(now time.Time) ([]result.WatchRecord, error) {
	if !w.started {
		return nil, errors.New("watch: Tick before Start")
	}
	cur, err := w.reader.Snapshot(now)
	if err != nil {
		return nil, err
	}
	tk := diskstats.Diff(w.prev, cur)
	dt := cur.At.Sub(w.prev.At)
	w.prev = cur
	t := now.Sub(w.start).Seconds()
	holds := w.throttle.sample(now, dt.Seconds())
	host := Host{IowaitPct: tk.System.IowaitPct, DirtyBytes: tk.System.DirtyBytes, WritebackBytes: tk.System.WritebackBytes, PressurePct: -1,
		OtherUtilPct: tk.System.OtherUtilPct, holds: holds, heldRecently: w.throttle.recent(holds)}
	if w.psi {
		if tot, ok := w.pressure(); ok && dt > 0 {
			if tot >= w.prevPSI {
				host.PressurePct = min(100, float64(tot-w.prevPSI)/float64(dt.Microseconds())*100)
			}
			w.prevPSI = tot
		}
	}
	var top []result.WatchCgroup
	if w.cfg.Cgroups != nil {
		all, err := w.cfg.Cgroups.Sample(dt, w.majmin)
		if err != nil {
			return nil, fmt.Errorf("reading cgroups: %w", err)
		}
		top = w.topOf(all)
	}
	recs := w.step(now, t, dt.Seconds(), tk, host, top)
	if w.cfg.Discover != nil && now.Sub(w.discovered) >= orDefaultDuration(w.cfg.Rediscover, time.Minute) {
		w.discovered = now
		for _, f := range w.rediscover(t) {
			f := f
			recs = append(recs, result.WatchRecord{Schema: result.WatchSchema, Type: result.WatchTypeFinding, Time: now, T: t, Host: w.cfg.Host, Finding: &f})
		}
	}
	return recs, nil
}

func orDefaultDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// rediscover asks Discover and applies what it finds. A failure is
// logged once, until it changes or goes away.
func (w *Watcher) rediscover(t float64) []finding {
	d, err := w.cfg.Discover()
	if err != nil {
		if msg := err.Error(); msg != w.discErr {
			w.discErr = msg
			return []finding{newFinding("", result.KindDiscovery, "", "warn", t, 0, "looking for new devices and their expected disks failed: "+msg, nil)}
		}
		return nil
	}
	w.discErr = ""
	out, err := w.apply(d, t)
	if err != nil {
		out = append(out, newFinding("", result.KindDiscovery, "", "warn", t, 0, "watching new devices failed: "+err.Error(), nil))
	}
	return out
}

// apply watches the devices d adds and puts its ceilings in force.
func (w *Watcher) apply(d Discovery, t float64) ([]finding, error) {
	var out []finding
	sb := sysBlock{w.cfg.SysRoot}
	added := false
	for _, n := range d.Devices {
		if _, ok := w.trackers[n]; ok {
			continue
		}
		info, err := sb.info(n)
		if err != nil {
			continue // gone again
		}
		info.Mounts = d.Mounts[n]
		w.devs = append(w.devs, info)
		w.majmin[info.MajMin] = n
		w.trackers[n] = newTracker(n, info.Parallel, w.cfg.Th)
		w.dets[n] = w.cfg.Detectors(n)
		added = true
		msg := "watching " + n
		if a := d.About[n]; a != "" {
			msg += ": " + a
		}
		out = append(out, newFinding(n, result.KindDevice, "", "info", t, 0, msg, nil))
	}
	if added {
		names := make([]string, len(w.devs))
		for i, dv := range w.devs {
			names[i] = dv.Name
		}
		r, err := diskstats.NewReader(w.cfg.ProcRoot, w.cfg.SysRoot, names)
		if err != nil {
			return out, err
		}
		// The previous snapshot lacks the new devices: they show from the
		// next interval on.
		w.reader = r
		w.family = sb.family(w.devs)
	}
	if w.cfg.Ceilings == nil {
		w.cfg.Ceilings = map[string]*Ceiling{}
	}
	for i := range w.devs {
		dv := &w.devs[i]
		old := w.cfg.CeilingOf(dv.Name)
		nc := d.Ceilings[dv.Name]
		if nc == nil {
			delete(w.cfg.Ceilings, dv.Name)
			nc = w.cfg.Ceiling
		} else {
			w.cfg.Ceilings[dv.Name] = nc
		}
		if old == nc || old != nil && nc != nil && *old == *nc {
			continue
		}
		dv.Expect = ""
		delete(w.credits, dv.Name)
		delete(w.atBase, dv.Name)
		msg := dv.Name + " is no longer compared with an expected disk"
		if nc != nil {
			dv.Expect = nc.Name
			w.credits[dv.Name] = newCredit(*nc)
			msg = dv.Name + " is expected to be " + nc.Name
			if a := d.About[dv.Name]; a != "" {
				msg += " (" + a + ")"
			}
		}
		out = append(out, newFinding(dv.Name, result.KindExpect, "", "info", t, 0, msg, nil))
	}
	return out, nil
}

// CeilingOf is the ceiling a device is compared with now.
func (w *Watcher) CeilingOf(device string) *Ceiling { return w.cfg.CeilingOf(device) }

// topOf keeps the Top heaviest entries and the heaviest per device, and
// names them.
func (w *Watcher) topOf(all []result.WatchCgroup) []result.WatchCgroup {
	var out []result.WatchCgroup
	seen := map[string]bool{}
	for i, e := range all {
		if i < w.cfg.Top || !seen[e.Device] {
			w.cfg.Cgroups.Describe(&all[i], 3)
			out = append(out, all[i])
		}
		seen[e.Device] = true
	}
	return out
}

// step turns one interval into records. It is separate from Tick so that
// tests can feed recorded sequences.
func (w *Watcher) step(now time.Time, t, dt float64, tk diskstats.Tick, host Host, top []result.WatchCgroup) []result.WatchRecord {
	rec := result.WatchRecord{Schema: result.WatchSchema, Type: result.WatchTypeSample, Time: now, T: t, Host: w.cfg.Host}
	sys := result.SystemSample{T: t, IowaitPct: tk.System.IowaitPct, DirtyBytes: tk.System.DirtyBytes, WritebackBytes: tk.System.WritebackBytes,
		OtherUtilPct: tk.System.OtherUtilPct}
	rec.System = &sys
	host.family = w.family
	host.util = make(map[string]float64, len(w.devs))
	for _, d := range w.devs {
		if r, ok := tk.Devices[d.Name]; ok {
			host.util[d.Name] = r.UtilPct
		}
	}
	if host.PressurePct >= 0 {
		p := host.PressurePct
		rec.IOPressurePct = &p
	}
	var fs []finding
	for _, d := range w.devs {
		r, ok := tk.Devices[d.Name]
		if !ok {
			continue
		}
		s := result.DeviceSample{T: t, ReadIOPS: r.ReadIOPS, WriteIOPS: r.WriteIOPS, ReadBWBytes: r.ReadBWBytes, WriteBWBytes: r.WriteBWBytes,
			ReadAwaitMs: r.ReadAwaitMs, WriteAwaitMs: r.WriteAwaitMs, QueueSize: r.QueueSize, ReadReqBytes: r.ReadReqBytes,
			WriteReqBytes: r.WriteReqBytes, UtilPct: r.UtilPct, InFlight: r.InFlight}
		row := result.WatchDevice{Device: d.Name, DeviceSample: s}
		cv := ceilingView{}
		if cr := w.credits[d.Name]; cr != nil {
			iops, bw := s.ReadIOPS+s.WriteIOPS, s.ReadBWBytes+s.WriteBWBytes
			pct, cpct, left := cr.step(dt, iops, bw)
			cv = ceilingView{pct: pct, ok: true, name: cr.inForce()}
			row.CeilingPct = &pct
			if cpct >= 0 {
				fs = append(fs, w.burstCheck(d.Name, cr, t, iops, bw, &cpct, &left)...)
				row.BurstCreditPct = &cpct
				if left >= 0 {
					row.BurstLeftS = &left
				}
			}
		}
		tr := w.trackers[d.Name]
		fs = append(fs, tr.step(t, dt, s, host, cv)...)
		row.State = tr.state
		for _, det := range w.dets[d.Name] {
			for _, f := range det.Add(t, s.ReadBWBytes+s.WriteBWBytes, &s) {
				fs = append(fs, finding{Device: d.Name, Finding: f})
			}
		}
		for _, c := range top {
			if c.Device == d.Name || c.Device == "" {
				row.TopCgroup = c.Name()
				break
			}
		}
		rec.Devices = append(rec.Devices, row)
	}
	fs = append(fs, w.storm.step(t, dt, host)...)
	if w.cfg.Top > 0 {
		n := min(len(top), w.cfg.Top)
		rec.Top = top[:n]
	}
	out := []result.WatchRecord{rec}
	for i := range fs {
		f := fs[i]
		out = append(out, result.WatchRecord{Schema: result.WatchSchema, Type: result.WatchTypeFinding, Time: now, T: t, Host: w.cfg.Host, Finding: &f})
	}
	w.last = rec
	return out
}

// burstCheck keeps the credit model honest and warns when credit runs
// low. A rate held at baseline (within 5%) for 3 intervals right after
// running above it means the bucket is empty, whatever the model says.
func (w *Watcher) burstCheck(dev string, cr *credit, t, iops, bw float64, cpct, left *float64) []finding {
	c := cr.c
	near := func(v, base float64) bool { return base > 0 && v > 0.5*base && v <= burstingAbove*base }
	// Held at the base right after a burst: the bucket ran dry. A disk
	// never seen bursting says nothing about its credit.
	switch {
	case cr.bursting:
		w.atBase[dev] = 1
	case w.atBase[dev] > 0 && (near(iops, c.IOPS) || near(bw, c.BWBytes)) && *cpct > 0:
		w.atBase[dev]++
		if w.atBase[dev] > 3 {
			cr.exhausted()
			*cpct, *left = 0, -1
			w.atBase[dev] = 0
		}
	default:
		w.atBase[dev] = 0
	}
	var out []finding
	if *left >= 0 && *left < 600 && !w.warned[dev] {
		w.warned[dev] = true
		out = append(out, newFinding(dev, result.KindBurst, "", "warn", t, 0, BurstMessage(c.Name, iops, bw, *left),
			map[string]float64{"credit_pct": *cpct, "left_s": *left, "iops": iops, "bw_bytes": bw}))
	}
	if *left < 0 && *cpct >= 90 {
		w.warned[dev] = false // refilled: warn again next time
	}
	return out
}

// Message is the live burst estimate for a device row, empty when the
// credit is not draining.
func Message(c *Ceiling, d result.WatchDevice) string {
	if c == nil || d.BurstLeftS == nil {
		return ""
	}
	return BurstMessage(c.Name, d.ReadIOPS+d.WriteIOPS, d.ReadBWBytes+d.WriteBWBytes, *d.BurstLeftS)
}

// Flush closes what is still open (detectors' pending findings) when
// watching ends.
func (w *Watcher) Flush(now time.Time) []result.WatchRecord {
	t := now.Sub(w.start).Seconds()
	var out []result.WatchRecord
	names := make([]string, 0, len(w.dets))
	for n := range w.dets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, det := range w.dets[n] {
			for _, f := range det.Flush() {
				ff := finding{Device: n, Finding: f}
				out = append(out, result.WatchRecord{Schema: result.WatchSchema, Type: result.WatchTypeFinding, Time: now, T: t, Host: w.cfg.Host, Finding: &ff})
			}
		}
	}
	return out
}

// Run starts, then ticks every interval until ctx ends, passing every
// record to emit. An emit error ends the run with that error.
func (w *Watcher) Run(ctx context.Context, emit func(result.WatchRecord) error) error {
	st, err := w.Start(time.Now())
	if err != nil {
		return err
	}
	if err := emit(st); err != nil {
		return err
	}
	tick := time.NewTicker(w.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			for _, r := range w.Flush(time.Now()) {
				if err := emit(r); err != nil {
					return err
				}
			}
			return nil
		case now := <-tick.C:
			recs, err := w.Tick(now)
			if err != nil {
				return err
			}
			recs = w.withEtcd(ctx, now, recs)
			for _, r := range recs {
				if err := emit(r); err != nil {
					return err
				}
			}
		}
	}
}
