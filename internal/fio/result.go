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
