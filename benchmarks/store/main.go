// Command store measures the history and the HTML report:
//
//   - save: the time to save one run of 1, 100 and 1,000 results as a run
//     does (each result as it completes), into a fresh database;
//   - history: imports N runs (default 10,000) into a fresh database, then
//     times listing them (all, newest 20, by label selector), selecting
//     results by label, and the whole 'iolens history' command;
//   - html: renders a report of 50 tests x 1 hour of 1 s samples, with and
//     without downsampling, and (when Chromium is installed) times how long
//     the browser takes to load and draw it.
//
// Every figure is the median of -reps repetitions in the same process.
//
//	go build -o bin/iolens ./cmd/iolens && go run ./benchmarks/store -iolens bin/iolens
//	go run ./benchmarks/store -only save
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/store"
)

func main() {
	runs := flag.Int("runs", 10000, "runs to store")
	perRun := flag.Int("tests", 4, "results per run")
	reps := flag.Int("reps", 5, "repetitions of each timing")
	tests := flag.Int("html-tests", 50, "tests in the HTML report")
	secs := flag.Int("html-seconds", 3600, "1 s samples per test in the HTML report")
	iolens := flag.String("iolens", "", "iolens binary, to time 'iolens history' end to end")
	only := flag.String("only", "", "save, history or html (default all)")
	sizes := flag.String("save-sizes", "1,100,1000", "results per run for the save timing")
	saveReps := flag.Int("save-reps", 3, "repetitions of each save timing")
	flag.Parse()
	dir, err := os.MkdirTemp("", "iolens-bench-store-")
	check(err)
	defer os.RemoveAll(dir)
	if *only == "" || *only == "save" {
		saveBench(dir, parseSizes(*sizes), *saveReps, []savePattern{eachThenAll, keeperSaves})
	}
	if *only == "" || *only == "history" {
		historyBench(dir, *runs, *perRun, *reps, *iolens)
	}
	if *only == "" || *only == "html" {
		htmlBench(dir, *tests, *secs, *reps)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func median(reps int, f func()) time.Duration {
	ds := make([]time.Duration, reps)
	for i := range ds {
		t := time.Now()
		f()
		ds[i] = time.Since(t)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[reps/2]
}

// mkResult is a realistic record: 60 s of 1 s samples on both sides, a
// json+ histogram and labels.
func mkResult(run string, idx int, start time.Time, secs int, labels map[string]string) result.Result {
	qd := 1 << (idx % 6)
	spec := result.TestSpec{Name: fmt.Sprintf("randwrite-4k-qd%d-%d", qd, idx), RW: "randwrite", BlockSize: 4096, IODepth: qd, NumJobs: 1, Direct: true, RuntimeS: float64(secs)}
	if idx < 6 {
		spec.Group = "qd-sweep:randwrite-4k"
	}
	iops := 1000 * math.Min(float64(qd), 8)
	stallAt, stallLen := float64(secs/3), 20.0
	r := result.Result{Schema: result.Schema, RunID: run, Suite: "standard", Index: idx + 1, Repeat: 1, Test: spec,
		Target: result.Target{Kind: "dir", Path: "/mnt/data", Device: "vdb", Filesystem: "ext4", Labels: labels},
		Host:   result.Host{Hostname: "node-1", Kernel: "6.1.0", CPUs: 2, MemTotalBytes: 4 << 30, IolensVersion: "bench"},
		Start:  start, End: start.Add(time.Duration(secs) * time.Second), Status: "ok", FioVersion: "fio-3.33",
		Write: &result.DirResult{IOPS: iops, BWBytes: iops * 4096, LatKind: "lat",
			Lat:  result.Latency{N: 1000, P50Ns: 1003520, P99Ns: 4046848},
			Hist: result.HistogramOf(map[uint64]uint64{995328: 400, 1003520: 500, 2023424: 90, 4046848: 9, 16252928: 1})},
		Findings: []result.Finding{{Kind: result.KindStall, Severity: "fail", Summary: "IO stopped for 20 s", StartS: &stallAt, DurationS: &stallLen,
			Evidence: map[string]float64{"duration_s": 20}}},
	}
	dev := result.DeviceSeries{Device: "vdb", Role: "direct"}
	for t := 0; t < secs; t++ {
		v := iops * (1 + 0.05*math.Sin(float64(t)))
		if float64(t) >= stallAt && float64(t) < stallAt+stallLen {
			v = 0
		}
		r.FioSeries = append(r.FioSeries, result.FioSample{T: float64(t + 1), WriteIOPS: v, WriteBWBytes: v * 4096, WriteLatMeanNs: 1e6 + float64(t%17)*1e4})
		dev.Samples = append(dev.Samples, result.DeviceSample{T: float64(t) + 0.5, WriteIOPS: v, WriteBWBytes: v * 4096, WriteAwaitMs: 1 + float64(t%13)/10, QueueSize: float64(qd), UtilPct: 99})
		r.System = append(r.System, result.SystemSample{T: float64(t) + 0.5, DirtyBytes: uint64(t%60) << 20, WritebackBytes: 1 << 20, IowaitPct: 12})
	}
	r.Devices = []result.DeviceSeries{dev}
	return r
}

func historyBench(dir string, runs, perRun, reps int, iolens string) {
	ctx := context.Background()
	path := filepath.Join(dir, "history.db")
	s, err := store.Open(ctx, path)
	check(err)
	defer s.Close()
	classes := []string{"managed-premium", "managed-csi", "default", "azurefile", "premium-lrs"}
	t0 := time.Now()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	const batch = 100
	var rs []result.Result
	for i := 0; i < runs; i++ {
		id := fmt.Sprintf("%s-%06x", base.Add(time.Duration(i)*time.Hour).Format("20060102-150405"), i)
		labels := map[string]string{"storage-class": classes[i%len(classes)], "cluster": "c" + strconv.Itoa(i%20)}
		for j := 0; j < perRun; j++ {
			rs = append(rs, mkResult(id, j, base.Add(time.Duration(i)*time.Hour+time.Duration(j)*time.Minute), 60, labels))
		}
		if len(rs) >= batch*perRun || i == runs-1 {
			_, err := s.Import(ctx, rs)
			check(err)
			rs = rs[:0]
		}
	}
	imp := time.Since(t0)
	fi, _ := os.Stat(path)
	fmt.Printf("history: %d runs x %d results imported in %.1f s (%.0f results/s); database %.0f MB (%.1f KB per result)\n",
		runs, perRun, imp.Seconds(), float64(runs*perRun)/imp.Seconds(), float64(fi.Size())/1e6, float64(fi.Size())/1e3/float64(runs*perRun))

	var n int
	all := median(reps, func() {
		l, err := s.List(ctx, store.ListOptions{})
		check(err)
		n = len(l)
	})
	top := median(reps, func() { _, err := s.List(ctx, store.ListOptions{Limit: 20}); check(err) })
	sel, _ := store.ParseSelector("storage-class=managed-premium,cluster=c5")
	var nsel int
	bySel := median(reps, func() {
		l, err := s.List(ctx, store.ListOptions{Selector: sel})
		check(err)
		nsel = len(l)
	})
	var nres int
	selRes := median(reps, func() {
		r, err := s.Select(ctx, sel)
		check(err)
		nres = len(r)
	})
	fmt.Printf("history: list all %d runs %.1f ms; newest 20 %.2f ms; by selector (%d runs) %.1f ms; select results by label (%d results, decoded) %.1f ms\n",
		n, ms(all), ms(top), nsel, ms(bySel), nres, ms(selRes))
	if iolens != "" {
		cmd := func(args ...string) time.Duration {
			return median(reps, func() {
				c := exec.Command(iolens, append(args, "--db", path)...)
				c.Stdout, c.Stderr = nil, os.Stderr
				check(c.Run())
			})
		}
		fmt.Printf("history: 'iolens history' (all %d runs, text) %.0f ms; 'iolens history --limit 20' %.0f ms; 'iolens --version' %.0f ms (process start)\n",
			n, ms(cmd("history")), ms(cmd("history", "--limit", "20")), ms(median(reps, func() { check(exec.Command(iolens, "--version").Run()) })))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

func htmlBench(dir string, tests, secs, reps int) {
	var rs []result.Result
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for i := 0; i < tests; i++ {
		rs = append(rs, mkResult("20240501-120000-abcdef", i, start.Add(time.Duration(i*secs)*time.Second), secs, map[string]string{"storage-class": "managed-premium"}))
	}
	var nd bytes.Buffer
	check(report.NDJSON(&nd, rs))
	render := func(points int) ([]byte, time.Duration) {
		var out []byte
		d := median(reps, func() {
			var b bytes.Buffer
			page := report.ResultsPage(diagnosis.Replay(rs))
			page.Points = points
			check(report.WriteHTML(&b, page))
			out = b.Bytes()
		})
		return out, d
	}
	small, tSmall := render(report.MaxPoints)
	full, tFull := render(math.MaxInt32)
	fmt.Printf("html: %d tests x %d s: results %.1f MB as NDJSON\n", tests, secs, float64(nd.Len())/1e6)
	fmt.Printf("html: downsampled to %d points per series: %.2f MB, rendered in %.0f ms\n", report.MaxPoints, float64(len(small))/1e6, ms(tSmall))
	fmt.Printf("html: every sample kept:             %.2f MB, rendered in %.0f ms (downsampled is %.1fx smaller, %.1fx faster)\n",
		float64(len(full))/1e6, ms(tFull), float64(len(full))/float64(len(small)), float64(tFull)/float64(tSmall))
	browser := ""
	for _, b := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
		}
	}
	if browser == "" {
		fmt.Println("html: chromium not installed: no browser timing")
		return
	}
	re := regexp.MustCompile(`data-draw-ms="(\d+)" data-render-ms="(\d+)"`)
	for _, page := range []struct {
		name string
		b    []byte
	}{{"downsampled", small}, {"every sample", full}} {
		p := filepath.Join(dir, "report.html")
		check(os.WriteFile(p, page.b, 0o644))
		var draws, totals []float64
		for i := 0; i < reps; i++ {
			prof, err := os.MkdirTemp(dir, "profile-")
			check(err)
			out, err := exec.Command(browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir="+prof,
				"--window-size=1200,900", "--dump-dom", "file://"+p).Output()
			check(err)
			m := re.FindSubmatch(out)
			if m == nil {
				fmt.Println("html: the page did not finish drawing in the browser")
				return
			}
			d, _ := strconv.ParseFloat(string(m[1]), 64)
			t, _ := strconv.ParseFloat(string(m[2]), 64)
			draws, totals = append(draws, d), append(totals, t)
			os.RemoveAll(prof)
		}
		sort.Float64s(draws)
		sort.Float64s(totals)
		fmt.Printf("html: in headless Chromium (%s): charts drawn in %.0f ms, page ready %.0f ms after navigation (medians of %d)\n",
			page.name, draws[reps/2], totals[reps/2], reps)
	}
}
