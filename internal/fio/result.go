package fio

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/result"
)

// FillFromFio sets a result's read, write and sync figures from fio's
// per-job entries. Several entries (a job file without group_reporting,
// or client mode) are merged: throughputs add, histograms merge exactly,
// and percentiles are read from the merged histogram.
func FillFromFio(res *result.Result, jobs []Job) error {
	var rd, wr, sy dirAcc
	for _, j := range jobs {
		if err := checkFigures(j); err != nil {
			return err
		}
		rd.add(j.Read, false)
		wr.add(j.Write, false)
		if j.Mixed != nil && j.Read.TotalIOs == 0 && j.Write.TotalIOs == 0 {
			rd.add(*j.Mixed, false)
		}
		if j.Sync.LatNs.N > 0 {
			// fio up to 3.42 miscounts fdatasync in total_ios; the
			// latency sample count is right.
			rt := max(j.Write.Runtime, j.Read.Runtime)
			sy.add(DirStats{TotalIOs: int64(j.Sync.LatNs.N), Runtime: rt, LatNs: j.Sync.LatNs}, true)
		}
	}
	var err error
	if res.Read, err = rd.dir(); err != nil {
		return fmt.Errorf("read latency: %w", err)
	}
	if res.Write, err = wr.dir(); err != nil {
		return fmt.Errorf("write latency: %w", err)
	}
	if res.Sync, err = sy.dir(); err != nil {
		return fmt.Errorf("sync latency: %w", err)
	}
	return nil
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

type dirAcc struct {
	n        int
	iops, bw float64
	bytes    int64
	ios      int64
	runtime  int64
	latN     uint64
	latSum   float64
	min, max float64
	kind     string
	hist     result.Histogram
	hasBins  bool
	fioPct   map[string]float64 // used only when fio wrote no bins
	sync     bool
}

func (a *dirAcc) add(d DirStats, sync bool) {
	if d.TotalIOs == 0 && d.IOBytes == 0 && d.LatNs.N == 0 && d.ClatNs.N == 0 {
		return
	}
	a.sync = sync
	lat, kind := d.LatNs, "lat"
	// Without lat_percentiles, fio has percentiles only for clat.
	if len(lat.Bins) == 0 && len(lat.Percentile) == 0 && (len(d.ClatNs.Bins) > 0 || len(d.ClatNs.Percentile) > 0) {
		lat, kind = d.ClatNs, "clat"
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
	a.runtime = max(a.runtime, d.Runtime)
	if lat.N > 0 {
		if a.latN == 0 || lat.Min < a.min {
			a.min = lat.Min
		}
		a.max = math.Max(a.max, lat.Max)
		a.latSum += lat.Mean * float64(lat.N)
		a.latN += lat.N
	}
	if len(lat.Bins) > 0 {
		if h, err := result.HistogramFromBins(lat.Bins); err == nil {
			a.hist.Merge(&h)
			a.hasBins = true
		}
	} else if a.n == 1 {
		a.fioPct = lat.Percentile
	} else {
		a.fioPct = nil // fio's percentiles of several jobs cannot be combined
	}
}

func (a *dirAcc) dir() (*result.DirResult, error) {
	if a.n == 0 {
		return nil, nil
	}
	d := &result.DirResult{IOPS: a.iops, BWBytes: a.bw, IOBytes: a.bytes, TotalIOs: a.ios, RuntimeMs: a.runtime, LatKind: a.kind}
	if a.sync {
		d.LatKind = "sync"
	}
	d.Lat = result.Latency{N: a.latN, MinNs: a.min, MaxNs: a.max}
	if a.latN > 0 {
		d.Lat.MeanNs = a.latSum / float64(a.latN)
	}
	if a.hasBins {
		p := a.hist.Percentiles([]float64{50, 90, 99, 99.9, 99.99})
		d.Lat.P50Ns, d.Lat.P90Ns, d.Lat.P99Ns, d.Lat.P999Ns, d.Lat.P9999Ns = p[0], p[1], p[2], p[3], p[4]
		d.Hist = a.hist
	} else if a.fioPct != nil {
		get := func(p string) float64 { return a.fioPct[p] }
		d.Lat.P50Ns, d.Lat.P90Ns, d.Lat.P99Ns, d.Lat.P999Ns, d.Lat.P9999Ns =
			get("50.000000"), get("90.000000"), get("99.000000"), get("99.900000"), get("99.990000")
	}
	return d, nil
}

// ReadFioLogs reads the windowed bw/iops/lat logs fio wrote with prefix
// in dir (one file per job, log_avg_msec = interval) into a series of
// that interval. Rates from several jobs add up; latencies are averaged
// weighted by each job's IOPS.
func ReadFioLogs(dir, prefix string, interval time.Duration) ([]result.FioSample, error) {
	ms := float64(interval.Milliseconds())
	if ms <= 0 {
		ms = 1000
	}
	type key struct {
		sec int64
		dir int
	}
	iops := map[key]float64{}
	bw := map[key]float64{}
	latW := map[key]float64{}
	latSum := map[key]float64{}
	secs := map[int64]bool{}
	read := func(kind string, fn func(file string, e LogEntry)) error {
		files, _ := filepath.Glob(filepath.Join(dir, prefix+"_"+kind+".*.log"))
		if len(files) == 0 {
			files, _ = filepath.Glob(filepath.Join(dir, prefix+"_"+kind+".log"))
		}
		for _, f := range files {
			fh, err := os.Open(f)
			if err != nil {
				return err
			}
			seen := map[key]bool{}
			err = ScanLog(fh, func(e LogEntry) error {
				// A window's row carries its end time; fio drifts by a few
				// ms per window, so round to the nearest window.
				k := key{sec: int64(math.Round(float64(e.TimeMs) / ms)), dir: e.Dir}
				if k.sec == 0 || seen[k] {
					return nil // fio's flush rows repeat the last window
				}
				seen[k] = true
				if kind != "lat" {
					// The lat log has a final flush row for a partial
					// window the rate logs leave out; rates define the
					// series' seconds.
					secs[k.sec] = true
				}
				fn(f, LogEntry{TimeMs: k.sec, Value: e.Value, Dir: e.Dir})
				return nil
			})
			fh.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", filepath.Base(f), err)
			}
		}
		return nil
	}
	perFileIOPS := map[string]map[key]float64{}
	if err := read("iops", func(f string, e LogEntry) {
		k := key{e.TimeMs, e.Dir}
		iops[k] += e.Value
		if perFileIOPS[f] == nil {
			perFileIOPS[f] = map[key]float64{}
		}
		perFileIOPS[f][k] = e.Value
	}); err != nil {
		return nil, err
	}
	if err := read("bw", func(_ string, e LogEntry) { bw[key{e.TimeMs, e.Dir}] += e.Value * 1024 }); err != nil {
		return nil, err
	}
	if err := read("lat", func(f string, e LogEntry) {
		k := key{e.TimeMs, e.Dir}
		w := 1.0
		if m := perFileIOPS[strings.Replace(f, prefix+"_lat.", prefix+"_iops.", 1)]; m != nil && m[k] > 0 {
			w = m[k]
		}
		latSum[k] += e.Value * w
		latW[k] += w
	}); err != nil {
		return nil, err
	}
	var keys []int64
	for s := range secs {
		keys = append(keys, s)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out := make([]result.FioSample, 0, len(keys))
	for _, s := range keys {
		lat := func(d int) float64 {
			k := key{s, d}
			if latW[k] == 0 {
				return 0
			}
			return latSum[k] / latW[k]
		}
		out = append(out, result.FioSample{T: float64(s) * ms / 1000, ReadIOPS: iops[key{s, 0}], WriteIOPS: iops[key{s, 1}],
			ReadBWBytes: bw[key{s, 0}], WriteBWBytes: bw[key{s, 1}], ReadLatMeanNs: lat(0), WriteLatMeanNs: lat(1)})
	}
	return out, nil
}
