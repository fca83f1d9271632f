package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Thresholds of the limit inference.
const (
	// capTolerance: two curves at the same IOPS (or MB/s) within 3% sit
	// at one ceiling. Throttles pace a test's mean to within a fraction
	// of a percent; two points of a rising curve differ by far more.
	capTolerance = 0.03
	// heldFraction: IO is held above the device when the device's queue
	// holds less than 40% of what fio keeps outstanding: by Little's law,
	// each IO then spends more than half its time above the device.
	heldFraction = 0.4
	// fullFraction: the device's own queue holds most of fio's IO.
	fullFraction = 0.7
	// cpuBound: fio's job used this share of a CPU; hostBusy: the host's
	// CPUs were this busy, and fio used at least cpuShare of one: a fio
	// that waits for IO uses little CPU however busy its neighbours keep
	// the host.
	cpuBound = 85
	hostBusy = 95
	cpuShare = 30
	// cpuNeed: on a busy host, fio using this much of a CPU with a rate
	// that moves from depth to depth is starved of CPU.
	cpuNeed = 10
	// largeBlock is where bandwidth, not IOPS, is the likely cap.
	largeBlock = 64 << 10
	// flatCV: a rate this steady second to second (0.5%) may be paced by
	// a throttle; a saturated device wanders by more unless its rate is
	// so high that its own randomness averages out (see paced).
	flatCV = 0.005
	// pacedRenewal: a paced rate varies less than this share of what IOs
	// completing at the pace of their own service times would; pacedMax
	// bounds it whatever the service times.
	pacedRenewal = 0.5
	pacedMax     = 0.02
)

// dirFacts is what the limit inference reads of one direction of a result.
type dirFacts struct {
	r          *result.Result
	dir        string
	d          *result.DirResult
	qd         int // iodepth x numjobs
	jobs       int
	bs         int64
	latNs      float64 // mean total latency (submission to completion)
	devQueue   float64 // mean device queue (aqu-sz) while fio ran; -1 unknown
	devAwaitMs float64
	devUtil    float64
	fioCPU     float64 // usr+sys of fio's busiest job, % of one CPU; -1 unknown
	hostBusy   float64 // mean host CPU busy %, -1 unknown
	cv1s       float64 // CV of the IOPS series in 1 s windows; -1 unknown
	// spread1s is the median distance of the 1 s windows from their
	// median, over the median: like cv1s, but one start-up transient (a
	// throttle's first budget) does not move it. -1 unknown.
	spread1s float64
	windows  int // 1 s windows behind cv1s
	// fineCV is the coefficient of variation of the series at its
	// own interval (fineS seconds), the first second left out, over fineN
	// windows; -1 unknown.
	fineCV float64
	fineS  float64
	fineN  int
	// pooled is the median paceRatio over the plateau's tests (set by the
	// model; 0 unknown).
	pooled float64
	// serviceCV is the coefficient of variation of one IO's latency at
	// the curve's base depth (set by the model; -1 unknown): how much a
	// rate set by service times alone varies.
	serviceCV float64
	// hostServed names what on this host serves the device with the
	// host's own CPUs (a loop device, a FUSE file system, a network block
	// device's local daemon, a RAM disk); "" for a device of its own.
	hostServed string
	// rise is set by the model on a plateau's tests: how much more the
	// deepest depth got than the one before it on the plateau, beyond
	// what their own intervals allow (0 when it did not); riseWhy says
	// it in words.
	rise    float64
	riseWhy string
}

// hostServedPrefixes are block devices whose IO the host's own CPUs
// serve: a loop device (its worker thread, and whatever serves its
// backing file), a network block device's local client, RAM disks, and
// user-space block devices.
var hostServedPrefixes = []string{"loop", "nbd", "zram", "ram", "ublk", "pmem"}

// hostServedBy names what serves r's device on the host, "" for a device
// of its own (a disk, a cloud volume).
func hostServedBy(r *result.Result) string {
	t := r.Target
	if strings.HasPrefix(t.Filesystem, "fuse") {
		return "a FUSE file system (" + t.Filesystem + ")"
	}
	for _, p := range hostServedPrefixes {
		if rest, ok := strings.CutPrefix(t.Device, p); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return t.Device
		}
	}
	return ""
}

func factsOf(r *result.Result, dir string) (dirFacts, bool) {
	d := r.Dir(dir)
	if r.Status != "ok" || d == nil || d.IOPS <= 0 || dir == "sync" || math.IsNaN(d.IOPS) || math.IsInf(d.IOPS, 0) {
		return dirFacts{}, false
	}
	f := dirFacts{r: r, dir: dir, d: d, qd: max(1, r.Test.IODepth) * max(1, r.Test.NumJobs), jobs: max(1, r.Test.NumJobs), bs: r.Test.BlockSize,
		devQueue: -1, fioCPU: -1, hostBusy: -1, cv1s: -1, spread1s: -1, serviceCV: -1, fineCV: -1, latNs: totalLatNs(d)}
	if f.bs <= 0 {
		f.bs = int64(d.BWBytes / d.IOPS)
	}
	if dev := primaryDevice(r.Devices, r.Target.Device); dev != nil {
		var q, aw, u float64
		n := 0
		for _, s := range dev.Samples {
			if s.T <= 0 {
				continue // the ramp
			}
			q += s.QueueSize
			aw += math.Max(s.ReadAwaitMs, s.WriteAwaitMs)
			u += s.UtilPct
			n++
		}
		if n > 0 {
			f.devQueue, f.devAwaitMs, f.devUtil = q/float64(n), aw/float64(n), u/float64(n)
		}
	}
	var busy float64
	nb := 0
	for _, s := range r.System {
		if s.T > 0 && s.CPUBusyPct > 0 {
			busy += s.CPUBusyPct
			nb++
		}
	}
	if nb > 0 {
		f.hostBusy = busy / float64(nb)
	}
	f.fioCPU = fioCPUOf(r)
	f.hostServed = hostServedBy(r)
	pts := Series(r)
	f.cv1s, f.spread1s, f.windows = secondCV(pts, r.Interval())
	f.fineS = r.Interval()
	f.fineCV, f.fineN = fineCV(pts, f.fineS)
	return f, true
}

// fioCPUOf is the usr+sys CPU of fio's busiest job, % of one CPU; -1
// unknown.
func fioCPUOf(r *result.Result) float64 {
	cpu := -1.0
	if r.Fio != nil {
		cpu = r.Fio.CPUPct
	}
	return cpu
}

// meanErr is the relative half-width of the 95% interval of the mean rate,
// from its 1 s windows (0 unknown).
func (f dirFacts) meanErr() float64 {
	if f.windows < 3 || f.cv1s < 0 {
		return 0
	}
	return 1.96 * f.cv1s / math.Sqrt(float64(f.windows))
}

// paced says the rate is held to a pace: flat second to second, and far
// flatter than IOs completing at the pace of their own service times
// would be (their count over a window of N IOs varies by about
// serviceCV / sqrt(N)).
func (f dirFacts) paced() (bool, string) {
	ratio := f.paceRatio()
	if f.pooled > 0 {
		ratio = f.pooled
	}
	var why string
	switch {
	case ratio >= 0 && ratio <= pacedRenewal && f.fineCV <= pacedMax:
		// Over the series' own windows (N IOs each), IOs completing at
		// the pace of their service times vary by about serviceCV /
		// sqrt(N); a token bucket's far less. A plateau's tests pool
		// their ratios (f.pooled), a few windows each being noisy.
		why = fmt.Sprintf("the rate is flat to %.2f%% from one %s window to the next, %.0fx flatter than the device's own service times would make it",
			100*f.fineCV, units.FormatSeconds(f.fineS), 1/math.Max(ratio, 0.01))
	case f.spread1s >= 0 && f.spread1s <= flatCV && f.windows >= 4 && f.flatterThanService():
		// Second to second (a cgroup throttle releases IO in slices
		// that alias with finer windows), flat to a fraction of a
		// percent, and far flatter than the service times would keep a
		// saturated device. Flat alone is no pace: a server whose IOs
		// all cost about the same (a CPU-bound daemon, a fixed latency)
		// is as flat at its own rate.
		why = fmt.Sprintf("the rate is flat to %.2f%% second to second, %.0fx flatter than the device's own service times would make it",
			100*f.spread1s, f.natural1s()/math.Max(f.spread1s, f.natural1s()/100))
	default:
		return false, ""
	}
	if f.rise > 0 {
		// A throttle gives every depth past its knee the same rate: a
		// deeper queue that still gets more is served, not paced.
		return false, ""
	}
	switch {
	case f.held():
		why += fmt.Sprintf(", with IO held above the device (its queue holds %.1f of %d): a throttle above the device (a cgroup or the VM)", f.devQueue, f.qd)
	case f.full():
		why += fmt.Sprintf(", with the device's queue full (%.1f of %d): a throttle inside the device or below the guest, as cloud disks enforce their caps", f.devQueue, f.qd)
	default:
		why += ": a throttle pacing IO"
	}
	return true, why
}

// flatterThanService says the service times vary enough that a saturated
// device would be at least four times less flat second to second than
// the rate was: only then is flatness evidence of a pace.
func (f dirFacts) flatterThanService() bool {
	natural := f.natural1s()
	return natural > 0 && f.spread1s >= 0 && f.spread1s <= 0.25*natural
}

// natural1s is how much a rate set by the service times alone moves from
// one second to the next (a normal's median deviation of a renewal
// count); 0 unknown.
func (f dirFacts) natural1s() float64 {
	if f.serviceCV <= 0 || f.d.IOPS <= 0 {
		return 0
	}
	return 0.6745 * f.serviceCV / math.Sqrt(f.d.IOPS)
}

// cpuBound says fio or the host ran out of CPU: fio used most of a CPU,
// or the host's CPUs were all busy while fio needed a fair share of one
// (a fio that waits for its IO uses little CPU however busy its
// neighbours keep the host) or its rate moved with the CPU it got
// (unsteady). Not when the IO waited in a full device queue: a saturated
// device beside busy neighbours.
func (f dirFacts) cpuBound(unsteady bool) bool {
	busyHost := f.hostBusy >= hostBusy && (f.fioCPU < 0 || f.fioCPU >= cpuShare || f.fioCPU >= cpuNeed && unsteady)
	if f.fioCPU < cpuBound && !busyHost {
		return false
	}
	// A full device queue on a busy host is a saturated device beside
	// busy neighbours only while fio itself wanted little CPU; a RAM or
	// loop device's queue fills because its worker waits for CPU too.
	return f.fioCPU >= cpuShare || !(f.full() && f.devAwaitMs*1e6 >= 0.5*f.latNs)
}

func (f dirFacts) cpuWhy() string {
	if f.fioCPU >= cpuBound {
		return fmt.Sprintf("fio used %.0f%% of a CPU: the disk was not the limit; more fio jobs, io_uring, or a larger VM show what it can do", f.fioCPU)
	}
	return fmt.Sprintf("the host's CPUs were %.0f%% busy and fio used %.0f%% of one: the disk was not the limit; with the CPU free (or a larger VM) it may do more", f.hostBusy, math.Max(f.fioCPU, 0))
}

// secondCV returns the coefficient of variation of a series summed into
// 1 s windows, and the windows' median relative spread (see spread1s):
// finer windows alias with a throttle's dispatch slices (a cgroup
// throttle releases IO every 100 ms), which says nothing about the level.
// Both are -1 with fewer than three windows.
func secondCV(pts []Point, iv float64) (cv, spread float64, n int) {
	k := max(1, int(math.Round(1/iv)))
	var xs []float64
	for i := k; i+k <= len(pts); i += k { // the first second holds the start
		var s float64
		for _, p := range pts[i : i+k] {
			s += p.IOPS
		}
		xs = append(xs, s/float64(k))
	}
	if len(xs) < 3 {
		return -1, -1, len(xs)
	}
	med := median(xs)
	if med <= 0 {
		return describe(xs).CV, -1, len(xs)
	}
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x-med) / med
	}
	return describe(xs).CV, median(dev), len(xs)
}

// fineCV is the robust coefficient of variation of a series' windows (the
// median absolute deviation, scaled to a normal's sigma, over the median:
// a window cut short or slowed by a neighbour does not move it), the first
// window left out (fio's first window holds the start), with how many
// windows it rests on; -1 with fewer than eight.
func fineCV(pts []Point, iv float64) (float64, int) {
	if len(pts) < 9 {
		return -1, max(0, len(pts)-1)
	}
	xs := make([]float64, 0, len(pts)-1)
	for _, p := range pts[1:] {
		xs = append(xs, p.IOPS)
	}
	med := median(xs)
	if med <= 0 {
		return -1, len(xs)
	}
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - med)
	}
	return 1.4826 * median(dev) / med, len(xs)
}

// paceRatio is how flat the rate is against how flat IOs completing at
// the pace of their own service times would keep it: about 1 for a
// saturated device, far below for a token bucket; -1 unknown.
func (f dirFacts) paceRatio() float64 {
	if f.serviceCV <= 0 || f.fineCV < 0 || f.fineN < 8 || f.d.IOPS <= 0 {
		return -1
	}
	return f.fineCV / (f.serviceCV / math.Sqrt(f.d.IOPS*f.fineS))
}

// median of xs (not modified).
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// held reports IO waiting above the device: fio keeps qd outstanding but
// the device sees a fraction of it (a cgroup or hypervisor throttle,
// before the block queue).
func (f dirFacts) held() bool {
	return f.qd >= 4 && f.devQueue >= 0 && f.devQueue < heldFraction*float64(f.qd)
}

// full reports the device's own queue holding most of fio's IO.
func (f dirFacts) full() bool {
	return f.qd >= 4 && f.devQueue >= fullFraction*float64(f.qd)
}

func sameLevel(a, b float64) bool {
	return a > 0 && b > 0 && math.Abs(a-b) <= capTolerance*math.Max(a, b)
}

// allFacts gathers the facts of every direction of r.
func allFacts(r *result.Result) []dirFacts {
	if g := r.Test.Group; g == result.GroupLayout || g == result.GroupBurstCheck {
		return nil // probes: the layout and the burst check measure other things
	}
	var out []dirFacts
	for _, dir := range []string{"read", "write"} {
		if f, ok := factsOf(r, dir); ok {
			out = append(out, f)
		}
	}
	return out
}

// limitFindings reads r's directions off the model fitted over peers and
// r, and returns the curves r is on.
func limitFindings(r *result.Result, peers []dirFacts) ([]result.Finding, []*Curve) {
	own := allFacts(r)
	m := fitFacts(append(append([]dirFacts(nil), peers...), own...))
	var out []result.Finding
	var curves []*Curve
	for _, f := range own {
		c, p, pf := m.locate(r, f.dir)
		if c != nil {
			curves = append(curves, c)
		}
		if pf != nil {
			f = *pf // as the curve knows it (the service time's spread set)
		}
		out = append(out, limitFinding(f, c, p))
	}
	return out, curves
}

// limitFinding states what binds one direction of one test: its point on
// its curve, or (off any curve) its own evidence. f is the direction's
// facts as its point took them, when it did (Model.locate).
func limitFinding(f dirFacts, c *Curve, p *CurvePoint) result.Finding {
	if f.r.Test.IOEngine == "null" {
		// The null engine completes IO without doing any: the rate is
		// fio's own, and no disk was there to bind it (fitFacts leaves
		// it off every curve).
		return result.Finding{Kind: result.KindLimit, Severity: SevInfo, Dir: f.dir, Code: result.CodeUnknown,
			Evidence: map[string]float64{"iops": f.d.IOPS, "bw_bytes": f.d.BWBytes, "qd": float64(f.qd), "io_size_bytes": float64(f.bs)},
			Summary: fmt.Sprintf("%s at QD%d, %s: %s IOPS with ioengine=null, which does no IO: no disk was measured, only fio's own overhead",
				f.dir, f.qd, units.IOSize(f.bs), units.Figure(f.d.IOPS))}
	}
	fd := result.Finding{Kind: result.KindLimit, Severity: SevInfo, Dir: f.dir, Evidence: map[string]float64{
		"iops": f.d.IOPS, "bw_bytes": f.d.BWBytes, "qd": float64(f.qd), "io_size_bytes": float64(f.bs),
		"lat_mean_ns": f.latNs, "lat_p50_ns": f.d.Lat.P50Ns, "lat_p99_9_ns": f.d.Lat.P999Ns,
	}}
	ev := fd.Evidence
	for k, v := range map[string]float64{"device_queue": f.devQueue, "device_util_pct": f.devUtil, "fio_cpu_pct": f.fioCPU,
		"host_cpu_busy_pct": f.hostBusy, "iops_cv_1s": f.cv1s, "iops_spread_1s": f.spread1s, "iops_cv_fine": f.fineCV, "service_cv": f.serviceCV} {
		if v >= 0 {
			ev[k] = v
		}
	}
	iops, bw := f.d.IOPS, f.d.BWBytes
	rate := fmt.Sprintf("%s IOPS, %s MB/s", units.Figure(iops), units.Figure(bw/1e6))
	how := fmt.Sprintf("%s at QD%d, %s", f.dir, f.qd, units.IOSize(f.bs))
	if f.jobs > 1 {
		how = fmt.Sprintf("%s at QD%d (%d jobs), %s", f.dir, f.qd, f.jobs, units.IOSize(f.bs))
	}
	perIO := f.latNs
	allowed := 0.0
	if perIO > 0 {
		allowed = float64(f.qd) / (perIO / 1e9)
		ev["little_max_iops"] = allowed
	}
	if c == nil {
		return offCurve(fd, f, how, rate)
	}
	ev["model_base_lat_ns"], ev["model_knee_qd"], ev["model_ceiling_iops"], ev["model_level_iops"] = c.BaseLatNs, c.Knee, c.Ceiling, c.Level
	ev["model_plateau"] = b2f(c.State == StatePlateau)
	fd.Code = c.PointCode(p)
	if c.Kind == result.CodeUnknown && c.State == StateOneDepth && f.qd > 1 {
		fd.Code = result.CodeUnknown
	}
	switch fd.Code {
	case result.CodeLatency:
		ev["limit_iops"] = allowed
		var more string
		switch c.State {
		case StateLatency:
			more = fmt.Sprintf("no ceiling up to QD%d (%s IOPS, latency still %s): a deeper queue or more parallel clients give more",
				c.Deepest().QD, units.Figure(c.Deepest().IOPS), units.Latency(c.Deepest().LatNs))
		case StateApproaching:
			more = fmt.Sprintf("the curve still rises at QD%d (%s IOPS, +%.0f%% per doubling): its ceiling is above", c.Deepest().QD, units.Figure(c.Deepest().IOPS), 100*c.Gain)
		case StatePlateau:
			more = fmt.Sprintf("the plateau is %s IOPS (%s): %s; a deeper queue gets there", units.Figure(c.Level), limitName(c.Kind), c.KneeWords())
		default:
			more = "no deeper test of this shape"
		}
		fd.Summary = fmt.Sprintf("%s: latency binds: %s per IO with %d in flight allows %s IOPS (measured %s); %s",
			how, units.Latency(perIO), f.qd, units.Figure(allowed), units.Figure(iops), more)
	case result.CodeIOPSCap, result.CodeBandwidthCap:
		if fd.Code == result.CodeBandwidthCap {
			ev["limit_bw_bytes"] = c.LevelBW
			fd.Summary = fmt.Sprintf("%s: a flat bandwidth ceiling binds at %s MB/s (%s): %s; more throughput needs a larger disk, tier or VM, not a deeper queue",
				how, units.Figure(bw/1e6), rate, c.Why)
		} else {
			ev["limit_iops"] = c.Level
			fd.Summary = fmt.Sprintf("%s: a flat IOPS ceiling binds at %s IOPS (%s): %s; more IOPS need a larger disk, tier or VM, not a deeper queue",
				how, units.Figure(iops), rate, c.Why)
		}
	case result.CodeDevice:
		ev["limit_iops"] = c.Level
		fd.Summary = fmt.Sprintf("%s: the device itself saturates at %s: %s; a faster device, or less competing IO", how, rate, c.Why)
	case result.CodeCPU:
		ev["limit_iops"] = iops
		fd.Summary = fmt.Sprintf("%s: the CPU binds at %s: %s", how, rate, c.Why)
	default:
		fd.Summary = fmt.Sprintf("%s: %s: %s", how, rate, c.Why)
	}
	return fd
}

// offCurve states the limit of a test that is on no curve (mixed,
// buffered or syncing IO, a probe) from its own evidence.
func offCurve(fd result.Finding, f dirFacts, how, rate string) result.Finding {
	ev := fd.Evidence
	t := f.r.Test
	switch {
	case t.Fdatasync > 0 && f.r.Sync != nil && f.r.Sync.Lat.MeanNs > 0:
		// Each write waits for its share of the syncs.
		perIO := f.latNs + f.r.Sync.Lat.MeanNs/float64(t.Fdatasync)
		allowed := float64(f.qd) / (perIO / 1e9)
		fd.Code, ev["limit_iops"], ev["little_max_iops"] = result.CodeLatency, allowed, allowed
		fd.Summary = fmt.Sprintf("%s: latency binds: each write and its fdatasync take %s (the sync %s), which allows %s IOPS (measured %s); a WAL waits for every sync, so only lower sync latency helps",
			how, units.Latency(perIO), units.Latency(f.r.Sync.Lat.MeanNs), units.Figure(allowed), units.Figure(f.d.IOPS))
		return fd
	case t.Buffered() && t.Writes():
		fd.Code = result.CodeUnknown
		fd.Summary = fmt.Sprintf("%s: %s through the page cache (buffered IO): this measures memory and writeback, not the disk's limit", how, rate)
		return fd
	}
	code, why := kindOf(f, nil)
	fd.Code = code
	switch code {
	case result.CodeIOPSCap:
		ev["limit_iops"] = f.d.IOPS
	case result.CodeBandwidthCap:
		ev["limit_bw_bytes"] = f.d.BWBytes
	case result.CodeCPU, result.CodeDevice:
		ev["limit_iops"] = f.d.IOPS
	case result.CodeLatency:
		ev["limit_iops"] = ev["little_max_iops"]
	}
	fd.Summary = fmt.Sprintf("%s: %s: %s: %s", how, rate, limitName(code), why)
	return fd
}
