package analysis

import (
	"fmt"
	"math"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// minSeriesS is the shortest 1 s series on which steady state, stalls and
// cliffs are judged; shorter ones get a "not enough data" finding. Finer
// series need at least 10 samples and 5 s (minSamples).
const minSeriesS = 10

// minSamples is the shortest series judged at interval iv seconds.
func minSamples(iv float64) int {
	return int(math.Max(minSeriesS, math.Min(5/iv, 2*minSeriesS)))
}

// Point is one window of a result's time series on a regular grid: the
// window ending at T, fio's total rates in it, and the primary device's
// sample of the same window (nil if none).
type Point struct {
	T, IOPS, BWBytes float64
	Dev              *result.DeviceSample
}

// Series puts a result's fio series on a regular grid of its sample
// interval, from the first window to the end of the measurement (less the
// last window). fio writes no log row for a window without completions,
// so missing windows are zeros: that is what a full stall looks like.
func Series(r *result.Result) []Point {
	if len(r.FioSeries) == 0 {
		return nil
	}
	iv := r.Interval()
	byK := map[int]result.FioSample{}
	last := 0
	for _, s := range r.FioSeries {
		x := math.Round(s.T / iv)
		if !(x > 0 && x < math.MaxInt32) {
			continue
		}
		k := int(x)
		byK[k] = s
		last = max(last, k)
	}
	if rt := r.RuntimeS(); rt > 0 && rt/iv < float64(math.MaxInt32) {
		// fio often writes no row for the last window when the job ends on
		// its boundary: only windows before it count as missing.
		last = max(last, int(math.Floor(rt/iv+0.25))-1)
	}
	dev := primaryDevice(r.Devices, r.Target.Device)
	// Missing windows are zeros, but a record cannot make the grid much
	// longer than the samples it holds (the device sampler writes a row
	// every interval, stalled or not, so a real gap mostly has rows under
	// it): memory follows the file, not a number in it.
	held := len(r.FioSeries)
	if dev != nil {
		held += len(dev.Samples)
	}
	last = min(last, 4*held+64)
	out := make([]Point, 0, last)
	j := 0
	for k := 1; k <= last; k++ {
		s := byK[k]
		p := Point{T: float64(k) * iv, IOPS: s.ReadIOPS + s.WriteIOPS, BWBytes: s.ReadBWBytes + s.WriteBWBytes}
		if dev != nil {
			// Device ticks are not in phase with fio's windows: take
			// the nearest within 0.6 of an interval.
			for j < len(dev.Samples) && dev.Samples[j].T < p.T-0.6*iv {
				j++
			}
			if j < len(dev.Samples) && math.Abs(dev.Samples[j].T-p.T) <= 0.6*iv {
				p.Dev = &dev.Samples[j]
			}
		}
		out = append(out, p)
	}
	return out
}

// primaryDevice picks the series of the target's own device, else the
// first one.
func primaryDevice(ds []result.DeviceSeries, name string) *result.DeviceSeries {
	for i := range ds {
		if ds[i].Device == name && name != "" {
			return &ds[i]
		}
	}
	if len(ds) > 0 {
		return &ds[0]
	}
	return nil
}

// ResultFindings analyses one result on its own: steady state, stalls,
// cliffs, writeback and page-cache inflation, and the etcd verdict for
// tests that sync. Failed results get none.
func ResultFindings(r *result.Result) []result.Finding {
	if r.Status != "ok" {
		return nil
	}
	var out []result.Finding
	pts := Series(r)
	if r.Test.RuntimeS > 0 || len(pts) > 0 {
		out = append(out, seriesFindings(pts, r.Interval(), closedLoop(r.Test))...)
	}
	out = append(out, writebackFindings(r)...)
	if f, ok := EtcdVerdict(r); ok {
		out = append(out, f)
	}
	return out
}

// closedLoop reports whether fio kept IO outstanding all along: no rate
// limit and no think time.
func closedLoop(t result.TestSpec) bool {
	for _, o := range t.Options {
		switch o.Key {
		case "rate", "rate_iops", "rate_min", "rate_iops_min", "thinktime", "rate_process":
			return false
		}
	}
	return true
}

func seriesFindings(pts []Point, iv float64, loaded bool) []result.Finding {
	iops := make([]float64, len(pts))
	for i, p := range pts {
		iops[i] = p.IOPS
	}
	sm := smooth(iops, iv)
	st := steady(sm, iv, SteadyConfig{})
	if st.State == steadyYes {
		st.FromS += float64(len(iops)-len(sm)) * iv // the first smoothed value ends a second in
	}
	win := float64(st.Window) * iv
	f := result.Finding{Kind: kindSteady, Code: result.CodeNotJudged, Severity: SevInfo, Summary: st.String(),
		Evidence: map[string]float64{"samples": float64(st.Samples), "window_s": win, "interval_s": iv}}
	dur := float64(len(pts)) * iv
	switch st.State {
	case steadyYes:
		f.Code = result.CodeSteady
		f.StartS = f64(st.FromS)
		f.Summary += fmt.Sprintf(" (%s window: %s, range %.0f%%, slope %.0f%% of the mean; SNIA PTS limits 20%% and 10%%)",
			units.FormatSeconds(win), units.IOPS(st.Mean), st.RangeFrac*100, st.SlopeFrac*100)
	case steadyNever:
		f.Code = result.CodeNotSteady
		f.Summary += fmt.Sprintf(": no %s window holds its level to the end (closest: range %.0f%%, slope %.0f%% of the mean; limits 20%% and 10%%)",
			units.FormatSeconds(win), st.RangeFrac*100, st.SlopeFrac*100)
	case steadyShort:
		if len(pts) == 0 {
			f.Summary = "no time series (plain fio output has none; iolens run records one): steady state, stalls and cliffs not judged"
			break
		}
		if len(pts) >= minSamples(iv) {
			f.Summary = fmt.Sprintf("steady state not judged: %s of %s samples, shorter than its %s window (run longer to judge it)", units.FormatSeconds(dur), units.FormatSeconds(iv), units.FormatSeconds(win))
			break
		}
		f.Summary = fmt.Sprintf("not enough data: %s of %s samples; steady state, stalls and cliffs need at least %d samples", units.FormatSeconds(dur), units.FormatSeconds(iv), minSamples(iv))
	}
	if st.State != steadyShort {
		f.Evidence["mean_iops"], f.Evidence["range_frac"], f.Evidence["slope_frac"] = st.Mean, st.RangeFrac, st.SlopeFrac
	}
	out := []result.Finding{f}
	if len(pts) < minSamples(iv) {
		return out
	}
	sd := newStallDetector(StallConfig{Unit: unitBytes, Loaded: loaded, Interval: iv})
	cd := NewCliffDetector(CliffConfig{Unit: unitBytes, Interval: iv})
	for _, p := range pts {
		out = append(out, sd.Add(p.T, p.BWBytes, p.Dev)...)
		out = append(out, cd.Add(p.T, p.BWBytes, p.Dev)...)
	}
	out = append(out, sd.Flush()...)
	return oneStory(append(out, cd.Flush()...), iv)
}

// oneStory tells each event once. When a cliff explains a drop, its lower
// plateau is no stall: a stall beside a cliff is judged against the
// plateau the rate returns to, and stays only when the rate fell below the
// stall fraction of that plateau too. Findings of the same kind on
// overlapping intervals merge into the first.
func oneStory(fs []result.Finding, iv float64) []result.Finding {
	var cliffs []result.Finding
	for _, f := range fs {
		if f.Kind == KindCliff && f.StartS != nil {
			cliffs = append(cliffs, f)
		}
	}
	out := fs[:0:0]
	for _, f := range fs {
		if f.Kind == KindStall && f.StartS != nil && explainedByCliff(f, cliffs, iv) {
			continue
		}
		if n := len(out); n > 0 && overlaps(out[n-1], f) {
			out[n-1] = mergeInto(out[n-1], f)
			continue
		}
		out = append(out, f)
	}
	return out
}

func explainedByCliff(stall result.Finding, cliffs []result.Finding, iv float64) bool {
	for _, c := range cliffs {
		plateau := c.Evidence["plateau_rate"]
		end := *stall.StartS
		if stall.DurationS != nil {
			end += *stall.DurationS
		}
		// The stall leads into the drop or follows it (a drop to a tenth
		// looks like a stall until the plateau has lasted).
		if end < *c.StartS-iv || plateau <= 0 {
			continue
		}
		// The stall's mean, not its worst window: one slow window of a
		// loaded machine is not a collapse.
		depth, ok := stall.Evidence["mean_during"]
		if !ok {
			depth = stall.Evidence["min_during"]
		}
		frac := stall.Evidence["threshold_frac"]
		if frac <= 0 {
			frac = 0.10
		}
		if depth >= frac*plateau {
			return true
		}
	}
	return false
}

func overlaps(a, b result.Finding) bool {
	if a.Kind != b.Kind || a.StartS == nil || b.StartS == nil || a.DurationS == nil || b.DurationS == nil {
		return false
	}
	return *b.StartS < *a.StartS+*a.DurationS && *a.StartS < *b.StartS+*b.DurationS
}

// mergeInto extends a to cover b, keeping the worse severity.
func mergeInto(a, b result.Finding) result.Finding {
	end := math.Max(*a.StartS+*a.DurationS, *b.StartS+*b.DurationS)
	start := math.Min(*a.StartS, *b.StartS)
	a.StartS, a.DurationS = f64(start), f64(end-start)
	if sevRank(b.Severity) > sevRank(a.Severity) {
		a.Severity = b.Severity
	}
	return a
}

func sevRank(s string) int {
	switch s {
	case SevFail:
		return 2
	case SevWarn:
		return 1
	}
	return 0
}

// Writeback thresholds: a tail is device writing above 512 KiB/s after
// fio ended; inflation is fio reporting 20% and 64 MiB more than reached
// the device.
const (
	tailMinBytesPerS = 512 << 10
	inflationRatio   = 1.2
	inflationMin     = 64 << 20
)

// writebackFindings quantifies what buffered writes hide: the device
// writing after fio ended (the tail), and fio counting more bytes than
// the device received while it ran.
func writebackFindings(r *result.Result) []result.Finding {
	if r.Write == nil || r.Write.IOBytes == 0 {
		return nil
	}
	dev := primaryDevice(r.Devices, r.Target.Device)
	if dev == nil || len(dev.Samples) == 0 {
		return nil
	}
	rt := r.RuntimeS()
	var during float64
	for i, s := range dev.Samples {
		if s.T > 0 && s.T <= rt+0.5 {
			during += s.WriteBWBytes * sampleDT(dev.Samples, i)
		}
	}
	var out []result.Finding
	if tail := primaryDevice(r.Tail, dev.Device); tail != nil {
		var bytes, end float64
		for i, s := range tail.Samples {
			if s.WriteBWBytes >= tailMinBytesPerS {
				end = s.T
			}
			bytes += s.WriteBWBytes * sampleDT(tail.Samples, i)
		}
		dur := end - rt
		if dur >= 2 || bytes >= 0.05*float64(r.Write.IOBytes) && bytes > inflationMin {
			out = append(out, result.Finding{Kind: kindWriteback, Code: result.CodeWritebackTail, Severity: SevWarn, Dir: "write",
				StartS: f64(rt), DurationS: f64(math.Max(dur, 0)),
				Summary: fmt.Sprintf("the device kept writing for %.0f s after fio ended (%s more): fio's figures finished before the data reached the disk",
					math.Max(dur, 0), units.HumanBytes(bytes)),
				Evidence: map[string]float64{"tail_s": math.Max(dur, 0), "tail_bytes": bytes, "fio_end_s": rt}})
		}
	}
	fioBytes := float64(r.Write.IOBytes)
	if during > 0 && fioBytes > inflationRatio*during && fioBytes-during > inflationMin {
		out = append(out, result.Finding{Kind: kindInflation, Code: result.CodePageCache, Severity: SevWarn, Dir: "write",
			Summary: fmt.Sprintf("fio wrote %s but only %s reached %s while it ran (%.1fx): the page cache inflated fio's throughput",
				units.HumanBytes(fioBytes), units.HumanBytes(during), dev.Device, fioBytes/during),
			Evidence: map[string]float64{"fio_bytes": fioBytes, "device_bytes": during, "ratio": fioBytes / during,
				"fio_bw_bytes": r.Write.BWBytes, "device_bw_bytes": during / math.Max(rt, 1e-3)}})
	}
	return out
}

// sampleDT is the interval a device sample covers.
func sampleDT(s []result.DeviceSample, i int) float64 {
	switch {
	case i > 0:
		return s[i].T - s[i-1].T
	case len(s) > 1:
		return s[1].T - s[0].T
	}
	return 1
}

// etcd's guidance: the 99th percentile of WAL fdatasync below 10 ms.
const (
	EtcdLimitNs = 10e6
	EtcdWarnNs  = 8.5e6
)

// EtcdVerdict judges a test that syncs against etcd's fdatasync
// guidance. The count comes from the sync latency samples: fio up to 3.42
// leaves sync.total_ios at 0 for fdatasync (fio-brief §1.6).
func EtcdVerdict(r *result.Result) (result.Finding, bool) {
	s := r.Sync
	if s == nil || s.Lat.N == 0 {
		return result.Finding{}, false
	}
	call := "fsync"
	if r.Test.Fdatasync > 0 {
		call = "fdatasync"
	}
	ev := map[string]float64{"p99_ns": s.Lat.P99Ns, "p99_9_ns": s.Lat.P999Ns, "max_ns": s.Lat.MaxNs,
		"mean_ns": s.Lat.MeanNs, "syncs": float64(s.Lat.N), "limit_ns": EtcdLimitNs}
	f := result.Finding{Kind: KindEtcd, Dir: "sync", Evidence: ev}
	if s.Lat.P99Ns == 0 {
		f.Severity, f.Code = SevWarn, result.CodeEtcdUnknown
		f.Summary = fmt.Sprintf("etcd: no %s percentiles recorded (%d syncs, mean %s ms): run fio with clat_percentiles or json+", call, s.Lat.N, units.Millis(s.Lat.MeanNs))
		return f, true
	}
	verdict := "pass"
	f.Severity, f.Code = SevInfo, result.CodeEtcdPass
	switch {
	case s.Lat.P99Ns >= EtcdLimitNs:
		verdict, f.Severity, f.Code = "FAIL", SevFail, result.CodeEtcdFail
	case s.Lat.P99Ns >= EtcdWarnNs:
		verdict, f.Severity, f.Code = "pass, but within 15% of the limit", SevWarn, result.CodeEtcdWarn
	}
	f.Summary = fmt.Sprintf("etcd: %s p99 %s ms against the 10 ms limit: %s (p99.9 %s ms, max %s ms, %d syncs)",
		call, units.Millis(s.Lat.P99Ns), verdict, units.Millis(s.Lat.P999Ns), units.Millis(s.Lat.MaxNs), s.Lat.N)
	if call == "fdatasync" && r.Fio != nil && r.Fio.SyncTotalIOsZero {
		// A flag, not a count: "fio_sync_total_ios=0" read as no syncs.
		ev["fio_sync_counter_bug"] = 1
		f.Detail = "fio reported sync.total_ios=0 (its fdatasync counter bug); the count is sync.lat_ns.N"
	}
	return f, true
}

// smooth averages a sub-second series over a sliding second: windows
// shorter than a second alias with a throttle's dispatch slices (a cgroup
// throttle releases IO every 100 ms, so 250 ms windows hold two or three
// slices' worth), which is noise about the level, not a change of it.
func smooth(vs []float64, iv float64) []float64 {
	k := int(math.Round(1 / iv))
	if k <= 1 || len(vs) < k {
		return vs
	}
	out := make([]float64, 0, len(vs)-k+1)
	var sum float64
	for i, v := range vs {
		sum += v
		if i >= k {
			sum -= vs[i-k]
		}
		if i >= k-1 {
			out = append(out, sum/float64(k))
		}
	}
	return out
}
