package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Thresholds of the limit inference.
const (
	// capTolerance: two tests at the same IOPS (or MB/s) within 3% sit
	// at one ceiling. Throttles pace a test's mean to within a fraction
	// of a percent; two points of a rising curve differ by far more.
	capTolerance = 0.03
	// heldFraction: IO is held above the device when the device's queue
	// holds less than a quarter of what fio keeps outstanding.
	heldFraction = 0.25
	// fullFraction: the device's own queue holds most of fio's IO.
	fullFraction = 0.7
	// latencyGain: a deeper queue of the same pattern doing 25% more
	// means the shallower one was latency-bound.
	latencyGain = 1.25
	// cpuBound: fio's job used this share of a CPU.
	cpuBound = 85
	// largeBlock is where bandwidth, not IOPS, is the likely cap.
	largeBlock = 64 << 10
	// flatCV: a rate this steady second to second (0.5%) is paced by a
	// throttle; a saturated device wanders by more.
	flatCV = 0.005
)

// dirFacts is what the limit inference reads of one direction of a result.
type dirFacts struct {
	r          *result.Result
	dir        string
	d          *result.DirResult
	qd         int
	bs         int64
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
}

func factsOf(r *result.Result, dir string) (dirFacts, bool) {
	d := r.Dir(dir)
	if r.Status != "ok" || d == nil || d.IOPS <= 0 || dir == "sync" {
		return dirFacts{}, false
	}
	f := dirFacts{r: r, dir: dir, d: d, qd: max(1, r.Test.IODepth) * max(1, r.Test.NumJobs), bs: r.Test.BlockSize,
		devQueue: -1, fioCPU: -1, hostBusy: -1, cv1s: -1, spread1s: -1}
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
	if len(r.FioJSON) > 0 {
		if o, err := fio.Decode(r.FioJSON); err == nil {
			for _, j := range o.AllJobs() {
				f.fioCPU = math.Max(f.fioCPU, j.UsrCPU+j.SysCPU)
			}
		}
	}
	f.cv1s, f.spread1s = secondCV(Series(r), r.Interval())
	return f, true
}

// secondCV returns the coefficient of variation of a series summed into
// 1 s windows, and the windows' median relative spread (see spread1s):
// finer windows alias with a throttle's dispatch slices (a cgroup
// throttle releases IO every 100 ms), which says nothing about the level.
// Both are -1 with fewer than three windows.
func secondCV(pts []Point, iv float64) (cv, spread float64) {
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
		return -1, -1
	}
	med := median(xs)
	if med <= 0 {
		return Describe(xs).CV, -1
	}
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x-med) / med
	}
	return Describe(xs).CV, median(dev)
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

// LimitFindings names, for each direction of r, the limit that binds it:
// a flat IOPS or bandwidth ceiling, latency, the device itself, the CPU,
// or unknown with why. others are the run's other results on the same
// target (those known so far, when results are analysed as they come): the
// inference is drawn across them, because one test alone cannot tell a
// cap from latency: the same IOPS at QD1 and QD32 is a cap.
func LimitFindings(r *result.Result, others []*result.Result) []result.Finding {
	var peers []dirFacts
	for _, o := range others {
		if o == r || targetKey(o) != targetKey(r) {
			continue
		}
		peers = append(peers, allFacts(o)...)
	}
	return limitFindings(r, peers)
}

// allFacts gathers the facts of every direction of r.
func allFacts(r *result.Result) []dirFacts {
	var out []dirFacts
	for _, dir := range []string{"read", "write"} {
		if f, ok := factsOf(r, dir); ok {
			out = append(out, f)
		}
	}
	return out
}

func limitFindings(r *result.Result, peers []dirFacts) []result.Finding {
	var out []result.Finding
	for _, f := range allFacts(r) {
		var same []dirFacts
		for _, p := range peers {
			if p.dir == f.dir && targetKey(p.r) == targetKey(r) {
				same = append(same, p)
			}
		}
		out = append(out, limitFinding(f, same))
	}
	return out
}

func limitFinding(f dirFacts, peers []dirFacts) result.Finding {
	fd := result.Finding{Kind: result.KindLimit, Severity: SevInfo, Dir: f.dir, Evidence: map[string]float64{
		"iops": f.d.IOPS, "bw_bytes": f.d.BWBytes, "qd": float64(f.qd), "io_size_bytes": float64(f.bs),
		"lat_mean_ns": f.d.Lat.MeanNs, "lat_p50_ns": f.d.Lat.P50Ns, "lat_p99_9_ns": f.d.Lat.P999Ns,
	}}
	ev := fd.Evidence
	for k, v := range map[string]float64{"device_queue": f.devQueue, "device_util_pct": f.devUtil, "fio_cpu_pct": f.fioCPU,
		"host_cpu_busy_pct": f.hostBusy, "iops_cv_1s": f.cv1s} {
		if v >= 0 {
			ev[k] = v
		}
	}
	iops, bw := f.d.IOPS, f.d.BWBytes
	rate := fmt.Sprintf("%s IOPS, %s MB/s", units.Figure(iops), units.Figure(bw/1e6))
	how := fmt.Sprintf("%s at QD%d, %s", f.dir, f.qd, units.FormatSize(f.bs))
	setCap := func(bandwidth bool, why string) result.Finding {
		if bandwidth {
			fd.Code, ev["limit_bw_bytes"] = result.CodeBandwidthCap, bw
			fd.Summary = fmt.Sprintf("%s: a flat bandwidth ceiling binds at %s MB/s (%s); %s; more throughput needs a larger disk, tier or VM, not a deeper queue",
				how, units.Figure(bw/1e6), rate, why)
		} else {
			fd.Code, ev["limit_iops"] = result.CodeIOPSCap, iops
			fd.Summary = fmt.Sprintf("%s: a flat IOPS ceiling binds at %s IOPS (%s); %s; more IOPS need a larger disk, tier or VM, not a deeper queue",
				how, units.Figure(iops), rate, why)
		}
		return fd
	}
	bimodal := f.d.Lat.P50Ns > 0 && f.d.Lat.P999Ns > 20*f.d.Lat.P50Ns
	heldWhy := func() string {
		s := fmt.Sprintf("IO held above the device (fio keeps %d outstanding, the device's queue holds %.1f)", f.qd, f.devQueue)
		if bimodal {
			s += fmt.Sprintf(", with latency p50 %s but p99.9 %s: a throttle pacing IO", units.Latency(f.d.Lat.P50Ns), units.Latency(f.d.Lat.P999Ns))
		}
		return s
	}

	cpu := func(who string) result.Finding {
		fd.Code, ev["limit_iops"] = result.CodeCPU, iops
		fd.Summary = fmt.Sprintf("%s: the CPU binds at %s: %s, so the disk was not the limit; add numjobs, use io_uring, or test from a larger VM", how, rate, who)
		return fd
	}
	if rt := float64(f.d.RuntimeMs) / 1000; rt > 0 && rt < 1 {
		fd.Code = result.CodeUnknown
		fd.Summary = fmt.Sprintf("%s: %s over %.2f s, too short to tell what binds it", how, rate, rt)
		return fd
	}
	// fio's own CPU first: a disk cannot be judged through a saturated
	// fio. (A busy host is judged last: other tenants keep a host busy
	// while a throttle still sets the pace.)
	if f.fioCPU >= cpuBound {
		return cpu(fmt.Sprintf("fio used %.0f%% of a CPU", f.fioCPU))
	}

	// The same level at another depth or block size is a ceiling.
	large := f.bs >= largeBlock
	for _, p := range peers {
		switch {
		case large && p.bs != f.bs && sameLevel(p.d.BWBytes, bw):
			return setCap(true, fmt.Sprintf("%s at %s gives the same MB/s", p.r.Test.Name, units.FormatSize(p.bs)))
		case !large && p.bs == f.bs && p.qd != f.qd && sameLevel(p.d.IOPS, iops):
			if f.full() && p.full() && f.cv1s > 0.1 {
				break // a saturated device plateaus too, but not flat
			}
			why := fmt.Sprintf("%s at QD%d gives the same IOPS", p.r.Test.Name, p.qd)
			if bimodal {
				why += fmt.Sprintf("; latency p50 %s but p99.9 %s: a throttle pacing IO", units.Latency(f.d.Lat.P50Ns), units.Latency(f.d.Lat.P999Ns))
			}
			return setCap(false, why)
		}
	}
	if f.held() {
		// Paced above the device: a cap at this level. Which one it is
		// follows from the block size and what larger blocks reached.
		maxBW := bw
		for _, p := range peers {
			maxBW = math.Max(maxBW, p.d.BWBytes)
		}
		return setCap(large && bw >= (1-capTolerance)*maxBW, heldWhy())
	}

	// Part of the IO held above the device, the rest in it (a throttle in
	// front of a device with latency of its own), at a rate flat to a
	// fraction of a percent: a throttle paces it.
	if f.qd >= 4 && !f.full() && f.devQueue >= 0 && f.spread1s >= 0 && f.spread1s <= flatCV {
		why := fmt.Sprintf("the rate is flat to %.2f%% second to second with the device's queue at %.1f of %d: a throttle pacing IO", 100*f.spread1s, f.devQueue, f.qd)
		return setCap(large, why)
	}

	// A deeper queue of the same pattern did much more: latency binds.
	var deeper *dirFacts
	for i, p := range peers {
		if p.bs == f.bs && p.qd > f.qd && p.d.IOPS >= latencyGain*iops && (deeper == nil || p.d.IOPS > deeper.d.IOPS) {
			deeper = &peers[i]
		}
	}
	perIO := f.d.Lat.MeanNs
	syncNote := ""
	if s := f.r.Sync; s != nil && f.r.Test.Fdatasync > 0 && s.Lat.MeanNs > 0 {
		// Each write waits for its share of the syncs.
		perIO += s.Lat.MeanNs / float64(f.r.Test.Fdatasync)
		syncNote = fmt.Sprintf(" (the write and its fdatasync, %s)", units.Latency(s.Lat.MeanNs))
	}
	if perIO > 0 {
		allowed := float64(f.qd) / (perIO / 1e9)
		ev["little_max_iops"] = allowed
		if deeper != nil || f.qd <= 2 && !f.full() {
			fd.Code, ev["limit_iops"] = result.CodeLatency, allowed
			need := ""
			if deeper != nil {
				need = fmt.Sprintf("; %s at QD%d reached %s IOPS: raise queue depth or parallelism", deeper.r.Test.Name, deeper.qd, units.Figure(deeper.d.IOPS))
			} else {
				need = "; a deeper queue or more parallel clients would do more"
			}
			fd.Summary = fmt.Sprintf("%s: latency binds: %s per IO%s with %d outstanding allows %s IOPS (measured %s)%s",
				how, units.Latency(perIO), syncNote, f.qd, units.Figure(allowed), units.Figure(iops), need)
			return fd
		}
	}
	// IO queued in the device and spending its time there: the device
	// itself sets the pace. (Utilization says little on devices that
	// serve requests in parallel, so it is evidence, not the test.)
	if f.full() && f.devAwaitMs*1e6 >= 0.5*f.d.Lat.MeanNs {
		fd.Code, ev["limit_iops"] = result.CodeDevice, iops
		fd.Summary = fmt.Sprintf("%s: the device itself is saturated at %s: its queue held %.1f of %d IOs, each %.2f ms in the device (util %.0f%%), with no flat ceiling seen; a faster device or fewer competing IOs",
			how, rate, f.devQueue, f.qd, f.devAwaitMs, f.devUtil)
		return fd
	}
	if f.hostBusy >= 97 {
		return cpu(fmt.Sprintf("the host's CPUs were %.0f%% busy", f.hostBusy))
	}
	fd.Code = result.CodeUnknown
	var why []string
	if f.devQueue < 0 {
		why = append(why, "no device samples")
	} else {
		why = append(why, fmt.Sprintf("device queue %.1f of %d", f.devQueue, f.qd))
	}
	if len(peers) == 0 {
		why = append(why, "no other test to compare with")
	}
	fd.Summary = fmt.Sprintf("%s: no single limit explains %s (%s); diagnose measures the other depths and sizes that tell, or give --expect DISK", how, rate, strings.Join(why, ", "))
	return fd
}
