// Command analysis measures the analysis package: the time to analyse a
// one-hour 1 s result, and the rate and peak memory of streaming a
// 10-million-row per-IO latency log (against loading it whole and sorting,
// in the same run). With -emulated-iops it also compares iolens run
// --until-steady with fixed 60 s runs on the same emulated disk, in
// alternating pairs (steady.go; needs root).
//
//	go run ./benchmarks/analysis -rows 10000000
//	go run ./benchmarks/analysis -rows 0 -emulated-iops 1000 -pairs 3   (as root)
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
)

func main() {
	rows := flag.Int("rows", 10_000_000, "rows of the per-IO latency log")
	reps := flag.Int("reps", 5, "repetitions of the one-hour analysis")
	tmp := flag.String("tmp", os.TempDir(), "where the latency log is written (removed afterwards)")
	emuIOPS := flag.Float64("emulated-iops", 0, "if > 0: compare --until-steady with fixed 60 s runs on an emulated disk with this IOPS cap")
	pairs := flag.Int("pairs", 3, "alternating pairs for the --until-steady comparison on the static cap")
	cachePairs := flag.Int("cache-pairs", 1, "pairs on a write-cache disk, which is never steady")
	flag.Parse()

	hourSeries(*reps)
	if *rows > 0 {
		if err := latencyLog(*rows, *tmp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if *emuIOPS > 0 {
		if err := untilSteady(*emuIOPS, *pairs, *cachePairs); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// hourSeries times ResultFindings on one hour of 1 s samples with a cliff,
// eight stalls and a device series.
func hourSeries(reps int) {
	r := result.Result{Status: "ok", Test: result.TestSpec{Name: "hour", RW: "write", RuntimeS: 3600},
		Write: &result.DirResult{RuntimeMs: 3600_000, IOBytes: 1}, Target: result.Target{Device: "vdb"}}
	rng := rand.New(rand.NewPCG(1, 2))
	dev := result.DeviceSeries{Device: "vdb"}
	for i := 1; i <= 3600; i++ {
		v := 250e6
		if i > 900 {
			v = 60e6
		}
		if i > 1200 && (i-1200)%300 < 20 {
			v = 0
		}
		v *= 1 + 0.05*rng.NormFloat64()
		if v > 0 {
			r.FioSeries = append(r.FioSeries, result.FioSample{T: float64(i), WriteBWBytes: v, WriteIOPS: v / 1e6})
		}
		dev.Samples = append(dev.Samples, result.DeviceSample{T: float64(i) + 0.3, WriteBWBytes: math.Max(v, 0), QueueSize: 8, UtilPct: 100})
	}
	r.Devices = []result.DeviceSeries{dev}
	var ts []float64
	var n int
	for range reps {
		t0 := time.Now()
		n = len(analysis.ResultFindings(&r))
		ts = append(ts, time.Since(t0).Seconds())
	}
	m := median(ts)
	fmt.Printf("one-hour 1 s series (3600 samples + device series): median %.2f ms per analysis over %d runs, %.0f samples/s, %d findings\n",
		m*1e3, reps, 3600/m, n)
}

// latencyLog writes a per-IO log of n rows (4 KiB writes at 50k IOPS with
// a 3 s stall), then reads it three ways in the same run: scan only,
// scan + streaming analysis, and scan + load every latency and sort.
func latencyLog(n int, tmp string) error {
	dir, err := os.MkdirTemp(tmp, "iolens-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "lat.1.log")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var line []byte
	for i := 0; i < n; i++ {
		ms := int64(i) / 50
		lat := 150000 + (i*7919)%200000
		if ms >= 60_000 && ms < 63_000 {
			ms = 63_001
		}
		line = strconv.AppendInt(line[:0], ms, 10)
		line = append(line, ", "...)
		line = strconv.AppendInt(line, int64(lat), 10)
		line = append(line, ", 1, 4096, 0\n"...)
		w.Write(line)
	}
	if err := errorsJoin(w.Flush(), f.Close()); err != nil {
		return err
	}
	st, _ := os.Stat(path)
	fmt.Printf("per-IO latency log: %d rows, %.0f MB on disk\n", n, float64(st.Size())/1e6)

	type mode struct {
		name string
		run  func() (string, error)
	}
	modes := []mode{
		{"scan only (fio.ScanLog)", func() (string, error) {
			var c int
			err := scanFile(path, func(fio.LogEntry) { c++ })
			return fmt.Sprint(c, " rows"), err
		}},
		{"streaming analysis (analysis.LatLog)", func() (string, error) {
			a := analysis.NewLatLog()
			if err := scanFile(path, func(e fio.LogEntry) { a.Add(e.TimeMs, e.Value, e.BS) }); err != nil {
				return "", err
			}
			s := a.Finish()
			return fmt.Sprintf("p99 %.0f µs, %d findings", s.P99Ns/1e3, len(s.Findings)), nil
		}},
		{"load all and sort (for comparison)", func() (string, error) {
			var all []float64
			if err := scanFile(path, func(e fio.LogEntry) { all = append(all, e.Value) }); err != nil {
				return "", err
			}
			sort.Float64s(all)
			return fmt.Sprintf("p99 %.0f µs", all[int(0.99*float64(len(all)))]/1e3), nil
		}},
	}
	for _, m := range modes {
		runtime.GC()
		debug.FreeOSMemory()
		base := heapInUse()
		peak := base
		done := make(chan struct{})
		go func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(20 * time.Millisecond):
					peak = max(peak, heapInUse())
				}
			}
		}()
		t0 := time.Now()
		what, err := m.run()
		el := time.Since(t0).Seconds()
		peak = max(peak, heapInUse())
		close(done)
		if err != nil {
			return err
		}
		fmt.Printf("  %-38s %6.2f s  %5.2f M rows/s  peak heap +%6.1f MiB  (%s)\n", m.name, el, float64(n)/el/1e6, float64(peak-base)/(1<<20), what)
	}
	return nil
}

func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func scanFile(path string, fn func(fio.LogEntry)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return fio.ScanLog(bufio.NewReaderSize(f, 1<<20), func(e fio.LogEntry) error { fn(e); return nil })
}

func errorsJoin(errs ...error) error {
	var s []string
	for _, e := range errs {
		if e != nil {
			s = append(s, e.Error())
		}
	}
	if len(s) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(s, "; "))
}
