package fio

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"syscall"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// FillFromFio sets a result's directions and fio's own figures (res.Fio)
// from the job entries of one test. Several entries (numjobs clones
// without group_reporting, one host each in client mode) ran at once and
// are summed as fio sums a reporting group: IOs and bytes add over the
// longest runtime, latency means weigh by samples, histograms merge
// exactly and percentiles are read from the merged histogram. Each entry
// is kept as a part, and each host's subtotal when a host ran several.
func FillFromFio(res *result.Result, jobs []Job) error {
	for _, j := range jobs {
		if err := checkFigures(j); err != nil {
			return err
		}
	}
	for _, name := range result.DirNames {
		d, err := sumDir(jobs, name, true)
		if err != nil {
			return fmt.Errorf("%s latency: %w", name, err)
		}
		res.SetDir(name, d)
	}
	res.Fio = fioInfo(jobs)
	return nil
}

// dirOf is a job's direction by name; nil when the job has none.
func dirOf(j *Job, name string) *DirStats {
	switch name {
	case "read":
		return &j.Read
	case "write":
		return &j.Write
	case "trim":
		return &j.Trim
	case "mixed":
		return j.Mixed
	}
	return nil
}

// sumDir sums one direction over jobs; nil when none did any of it.
func sumDir(jobs []Job, name string, hist bool) (*result.DirResult, error) {
	var a dirAcc
	for i := range jobs {
		j := &jobs[i]
		if name == "sync" {
			if j.Sync.LatNs.N > 0 {
				// fio up to 3.42 miscounts fdatasync in total_ios; the
				// latency sample count is right.
				rt := max(j.Write.Runtime, j.Read.Runtime)
				a.add(&DirStats{TotalIOs: int64(j.Sync.LatNs.N), Runtime: rt, LatNs: j.Sync.LatNs}, true)
			}
			continue
		}
		if d := dirOf(j, name); d != nil {
			a.add(d, false)
		}
	}
	return a.dir(hist)
}

type dirAcc struct {
	n          int
	iops, bw   float64
	bytes      int64
	ios        int64
	runtime    int64
	latN       uint64
	latSum     float64
	totN       uint64
	totSum     float64
	min, max   float64
	kind       string
	hist       result.Histogram
	binned     int
	fioPct     map[string]float64 // fio's own, kept for a lone entry
	sync       bool
	noIOCounts bool
}

func (a *dirAcc) add(d *DirStats, sync bool) {
	if d.TotalIOs == 0 && d.IOBytes == 0 && d.LatNs.N == 0 && d.ClatNs.N == 0 {
		return
	}
	a.sync = sync
	lat, kind := d.LatNs, "lat"
	// Without lat_percentiles, fio has percentiles only for clat.
	if len(lat.Bins) == 0 && len(lat.Percentile) == 0 && (len(d.ClatNs.Bins) > 0 || len(d.ClatNs.Percentile) > 0) {
		lat, kind = d.ClatNs, "clat"
	}
	if lat.N == 0 && d.LatNs.N == 0 && d.ClatNs.N > 0 {
		lat, kind = d.ClatNs, "clat" // no total latency at all (disable_lat)
	}
	if sync {
		kind = "sync"
		a.iops += float64(d.TotalIOs) * 1000 / math.Max(1, float64(d.Runtime))
	} else {
		a.iops += d.IOPS
		a.bw += float64(d.BWBytes)
	}
	a.n++
	a.kind = kind
	a.bytes += d.IOBytes
	a.ios += d.TotalIOs
	if d.TotalIOs == 0 {
		a.noIOCounts = true
	}
	a.runtime = max(a.runtime, d.Runtime)
	if lat.N > 0 {
		if a.latN == 0 || lat.Min < a.min {
			a.min = lat.Min
		}
		a.max = math.Max(a.max, lat.Max)
		a.latSum += lat.Mean * float64(lat.N)
		a.latN += lat.N
	}
	if tot := d.LatNs; tot.N > 0 {
		a.totSum += tot.Mean * float64(tot.N)
		a.totN += tot.N
	}
	if len(lat.Bins) > 0 {
		if h, err := result.HistogramFromBins(lat.Bins); err == nil {
			a.hist.Merge(&h)
			a.binned++
		}
	}
	if a.n == 1 {
		a.fioPct = lat.Percentile
	} else {
		a.fioPct = nil // fio's percentiles of several jobs cannot be combined
	}
}

func (a *dirAcc) dir(hist bool) (*result.DirResult, error) {
	if a.n == 0 {
		return nil, nil
	}
	d := &result.DirResult{IOPS: a.iops, BWBytes: a.bw, IOBytes: a.bytes, TotalIOs: a.ios, RuntimeMs: a.runtime, LatKind: a.kind}
	if a.n > 1 && a.runtime > 0 && !a.sync {
		// A group's rate, as fio reports one: what all did over the
		// longest runtime.
		if !a.noIOCounts {
			d.IOPS = float64(a.ios) * 1000 / float64(a.runtime)
		}
		if a.bytes > 0 {
			d.BWBytes = float64(a.bytes) * 1000 / float64(a.runtime)
		}
	}
	d.Lat = result.Latency{N: a.latN, MinNs: a.min, MaxNs: a.max}
	if a.latN > 0 {
		d.Lat.MeanNs = a.latSum / float64(a.latN)
	}
	d.TotalLatMeanNs = d.Lat.MeanNs
	if a.totN > 0 {
		d.TotalLatMeanNs = a.totSum / float64(a.totN)
	}
	var fromHist []float64
	if a.binned == a.n {
		fromHist = a.hist.Percentiles([]float64{50, 90, 99, 99.9, 99.99})
	}
	for i, x := range []struct {
		key string
		dst *float64
	}{{"50.000000", &d.Lat.P50Ns}, {"90.000000", &d.Lat.P90Ns}, {"99.000000", &d.Lat.P99Ns}, {"99.900000", &d.Lat.P999Ns}, {"99.990000", &d.Lat.P9999Ns}} {
		// fio's own figures are exact for one entry, whatever grid its
		// histogram was on (fio 2.x's was in µs); a percentile its list
		// left out comes from the histogram, as for several entries.
		if v, ok := a.fioPct[x.key]; ok && a.n == 1 {
			*x.dst = v
		} else if fromHist != nil {
			*x.dst = fromHist[i]
		}
	}
	if hist && a.binned == a.n {
		d.Hist = a.hist
	}
	d.Lat.ClipToMax()
	return d, nil
}

// fioInfo gathers what fio reported beside the figures.
func fioInfo(jobs []Job) *result.FioInfo {
	if len(jobs) == 0 {
		return nil
	}
	info := &result.FioInfo{GroupID: jobs[0].GroupID, Jobs: len(jobs)}
	host := hostLabels(jobs)
	perHost := map[string]int{}
	for i := range jobs {
		j := &jobs[i]
		if cpu := j.UsrCPU + j.SysCPU; i == 0 || cpu > info.CPUPct {
			info.CPUPct, info.UsrCPUPct, info.SysCPUPct = cpu, j.UsrCPU, j.SysCPU
		}
		if j.Sync.LatNs.N > 0 && j.Sync.TotalIOs == 0 {
			info.SyncTotalIOsZero = true
		}
		if ss := steadyState(j.Steadystate); ss != nil {
			info.SteadyState = ss // fio keeps it on a group's last job
		}
		if j.LatencyTarget > 0 && info.LatencyTarget == nil {
			info.LatencyTarget = &result.FioLatencyTarget{TargetNs: j.LatencyTarget, WindowUs: j.LatencyWindow,
				Percentile: j.LatencyPercentile, Depth: j.LatencyDepth}
		}
		if h := host[i]; h != "" {
			if _, ok := perHost[h]; !ok {
				info.Hosts = append(info.Hosts, h)
			}
			perHost[h]++
		}
	}
	if len(jobs) == 1 {
		return info
	}
	for i := range jobs {
		info.Parts = append(info.Parts, partOf(jobs[i:i+1], jobs[i].JobName, host[i]))
	}
	if len(info.Hosts) > 1 {
		for _, h := range info.Hosts {
			if perHost[h] < 2 {
				continue
			}
			var mine []Job
			for i, j := range jobs {
				if host[i] == h {
					mine = append(mine, j)
				}
			}
			info.Parts = append(info.Parts, partOf(mine, "all jobs", h))
		}
	}
	return info
}

// hostLabels names each job's server in a client/server run: its
// hostname, with the port when one host ran several servers.
func hostLabels(jobs []Job) []string {
	ports := map[string]map[int]bool{}
	for _, j := range jobs {
		if ports[j.Hostname] == nil {
			ports[j.Hostname] = map[int]bool{}
		}
		ports[j.Hostname][j.Port] = true
	}
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Hostname
		if j.Hostname != "" && len(ports[j.Hostname]) > 1 {
			out[i] = j.Hostname + ":" + strconv.Itoa(j.Port)
		}
	}
	return out
}

// partOf sums jobs into one row, without histograms.
func partOf(jobs []Job, name, host string) result.Part {
	p := result.Part{Job: name, Host: host, Jobs: len(jobs)}
	for _, j := range jobs {
		if j.Error != 0 && p.Error == 0 {
			p.Error = j.Error
		}
	}
	p.Read, _ = sumDir(jobs, "read", false)
	p.Write, _ = sumDir(jobs, "write", false)
	p.Trim, _ = sumDir(jobs, "trim", false)
	p.Mixed, _ = sumDir(jobs, "mixed", false)
	p.Sync, _ = sumDir(jobs, "sync", false)
	return p
}

// steadyState reads fio's steadystate block; nil when there is none.
func steadyState(raw json.RawMessage) *result.FioSteadyState {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var b struct {
		SS           string   `json:"ss"`
		Duration     float64  `json:"duration"`
		Attained     int      `json:"attained"`
		Criterion    string   `json:"criterion"`
		MaxDeviation *float64 `json:"max_deviation"`
		Slope        *float64 `json:"slope"`
	}
	if json.Unmarshal(raw, &b) != nil || b.SS == "" {
		return nil
	}
	ss := &result.FioSteadyState{Criterion: b.SS, DurationS: b.Duration, Attained: b.Attained != 0, Measured: b.Criterion}
	if b.MaxDeviation != nil {
		ss.MaxDeviation = *b.MaxDeviation
	}
	if b.Slope != nil {
		ss.Slope = *b.Slope
	}
	return ss
}

// infoNotes says in words what fio's own checks found.
func infoNotes(info *result.FioInfo) []string {
	var out []string
	if ss := info.SteadyState; ss != nil {
		verdict := "not attained"
		if ss.Attained {
			verdict = "attained"
		}
		out = append(out, fmt.Sprintf("fio's own steady-state check (%s over %g s): %s, measured %s", ss.Criterion, ss.DurationS, verdict, ss.Measured))
	}
	if lt := info.LatencyTarget; lt != nil {
		out = append(out, fmt.Sprintf("fio searched for the queue depth that keeps p%g latency under %s (windows of %s): it settled at depth %d",
			lt.Percentile, units.Ms(lt.TargetNs/1e9, 4), units.Ms(lt.WindowUs/1e6, -1), lt.Depth))
	}
	if len(info.Hosts) > 1 {
		out = append(out, fmt.Sprintf("client/server run: %d hosts (%s) ran it at once; the figures are their sum", len(info.Hosts), strings.Join(info.Hosts, ", ")))
	} else if info.Jobs > 1 {
		out = append(out, fmt.Sprintf("%d fio jobs ran it at once (numjobs without group_reporting); the figures are their sum", info.Jobs))
	}
	return out
}

// errnoText names a job's error number.
func errnoText(n int) string {
	if n <= 0 || n > 4095 {
		return strconv.Itoa(n)
	}
	return fmt.Sprintf("%d (%s)", n, syscall.Errno(n).Error())
}

// Bounds on what fio can report. No device does ten billion IOPS or a
// petabyte a second, and no latency lasts a year: a figure past them is
// a corrupt or forged output, which would overflow the reports'
// arithmetic.
const (
	maxIOPS    = 1e10
	maxBWBytes = 1e15
	maxLatNs   = 365 * 24 * 3600 * 1e9
)

// FigureError is a figure in fio's output that cannot be a measurement.
type FigureError struct {
	Field string
	Value float64
	Max   float64
}

func (e *FigureError) Error() string {
	if math.IsNaN(e.Value) {
		return fmt.Sprintf("fio wrote nan for %s, and no other figure gives it: it is unknown", e.Field)
	}
	return fmt.Sprintf("fio reported %s = %g, outside 0 to %g: the output is corrupt", e.Field, e.Value, e.Max)
}

// Hint says what to do.
func (e *FigureError) Hint() string {
	return "re-run fio, or check that the file is fio's own output, unedited"
}

// checkFigures refuses a job whose figures are not finite, negative or
// beyond any device.
func checkFigures(j Job) error {
	check := func(field string, v, hi float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > hi {
			return &FigureError{Field: field, Value: v, Max: hi}
		}
		return nil
	}
	lat := func(dir, name string, l LatStats) error {
		if len(l.nan) > 0 && l.N > 0 {
			return &FigureError{Field: dir + "." + name + "." + l.nan[0], Value: math.NaN(), Max: maxLatNs}
		}
		for _, f := range []struct {
			k string
			v float64
		}{{"min", l.Min}, {"max", l.Max}, {"mean", l.Mean}, {"stddev", l.Stddev}} {
			if err := check(dir+"."+name+"."+f.k, f.v, maxLatNs); err != nil {
				return err
			}
		}
		for p, v := range l.Percentile {
			if err := check(dir+"."+name+".percentile."+p, v, maxLatNs); err != nil {
				return err
			}
		}
		return nil
	}
	dirs := []struct {
		name string
		d    DirStats
	}{{"read", j.Read}, {"write", j.Write}, {"trim", j.Trim}}
	if j.Mixed != nil {
		dirs = append(dirs, struct {
			name string
			d    DirStats
		}{"mixed", *j.Mixed})
	}
	for _, x := range dirs {
		d := x.d
		if len(d.nan) > 0 {
			return &FigureError{Field: x.name + "." + d.nan[0], Value: math.NaN(), Max: math.MaxInt64}
		}
		for _, f := range []struct {
			k     string
			v, hi float64
		}{{"iops", d.IOPS, maxIOPS}, {"bw_bytes", float64(d.BWBytes), maxBWBytes}, {"io_bytes", float64(d.IOBytes), math.MaxInt64},
			{"runtime", float64(d.Runtime), maxLatNs / 1e6}, {"total_ios", float64(d.TotalIOs), math.MaxInt64}} {
			if err := check(x.name+"."+f.k, f.v, f.hi); err != nil {
				return err
			}
		}
		for _, l := range []struct {
			name string
			s    LatStats
		}{{"lat_ns", d.LatNs}, {"clat_ns", d.ClatNs}, {"slat_ns", d.SlatNs}} {
			if err := lat(x.name, l.name, l.s); err != nil {
				return err
			}
		}
	}
	return lat("sync", "lat_ns", j.Sync.LatNs)
}
