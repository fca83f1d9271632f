package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/emulate"
)

// devStats is one direction of a fio job (json+).
type devStats struct {
	IOPS float64 `json:"iops"`
	Lat  struct {
		Mean       float64            `json:"mean"`
		Percentile map[string]float64 `json:"percentile"`
	} `json:"lat_ns"`
	Clat struct {
		Bins map[string]float64 `json:"bins"`
	} `json:"clat_ns"`
}

type devRun struct {
	r, w    devStats
	sync    devStats
	cpu     float64   // fio's usr+sys, % of one core
	windows []float64 // IOPS per 250 ms window, reads and writes, first and last left out
	queue   float64   // the device's mean queue (aqu-sz)
}

func (s devStats) pct(p string) float64 { return s.Lat.Percentile[p] }

// devFio runs fio on the disk with json+ output, a 250 ms IOPS log and
// the device's queue measured around it.
func devFio(d *emulate.Disk, file string, args ...string) devRun {
	dir, err := os.MkdirTemp("", "iolens-bench-log")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	logp := filepath.Join(dir, "w")
	argv := append([]string{"emulate", "exec", d.Name, "--", "fio", "--name=b", "--filename=" + file, "--direct=1", "--ioengine=libaio",
		"--output-format=json+", "--lat_percentiles=1", "--percentile_list=50:90:99", "--write_iops_log=" + logp, "--log_avg_msec=250"}, args...)
	stat := filepath.Join("/sys/block", filepath.Base(d.Device), "stat")
	q0, t0 := queueMs(stat), time.Now()
	out := iolens(argv...)
	q1, t1 := queueMs(stat), time.Now()
	if i := strings.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	var doc struct {
		Jobs []struct {
			Read  devStats `json:"read"`
			Write devStats `json:"write"`
			Sync  struct {
				Lat struct {
					Mean       float64            `json:"mean"`
					Percentile map[string]float64 `json:"percentile"`
					Bins       map[string]float64 `json:"bins"`
				} `json:"lat_ns"`
			} `json:"sync"`
			Usr float64 `json:"usr_cpu"`
			Sys float64 `json:"sys_cpu"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Jobs) == 0 {
		fail(fmt.Errorf("fio output: %v", err))
	}
	j := doc.Jobs[0]
	r := devRun{r: j.Read, w: j.Write, cpu: j.Usr + j.Sys, queue: (q1 - q0) / float64(t1.Sub(t0).Milliseconds())}
	r.sync.Lat.Mean, r.sync.Lat.Percentile, r.sync.Clat.Bins = j.Sync.Lat.Mean, j.Sync.Lat.Percentile, j.Sync.Lat.Bins
	b, err := os.ReadFile(logp + "_iops.1.log")
	if err != nil {
		fail(err)
	}
	win := map[int64]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 2 {
			continue
		}
		ms, _ := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
		v, _ := strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
		win[(ms+125)/250] += v
	}
	var keys []int64
	for k := range win {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
	for i := 1; i+1 < len(keys); i++ {
		r.windows = append(r.windows, win[keys[i]])
	}
	return r
}

func queueMs(stat string) float64 {
	b, err := os.ReadFile(stat)
	if err != nil {
		fail(err)
	}
	f := strings.Fields(string(b))
	v, _ := strconv.ParseFloat(f[10], 64)
	return v
}

func windowCV(w []float64) float64 {
	var s, ss float64
	for _, x := range w {
		s += x
	}
	m := s / float64(len(w))
	for _, x := range w {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss/float64(len(w)-1)) / m
}

// share is the part of the histogram's IOs under ns.
func share(bins map[string]float64, ns float64) float64 {
	var under, all float64
	for k, n := range bins {
		v, _ := strconv.ParseFloat(k, 64)
		all += n
		if v < ns {
			under += n
		}
	}
	return under / all
}

func readJob(qd int) []string {
	return []string{"--size=64M", "--time_based", rt(), "--ramp_time=1", "--rw=randread", "--bs=4k", "--iodepth=" + strconv.Itoa(qd)}
}

// medianOf runs f repeat times and returns the median of each figure.
func medianOf(n int, f func() []float64) []float64 {
	var all [][]float64
	for i := 0; i < *repeat; i++ {
		all = append(all, f())
	}
	out := make([]float64, n)
	for k := range out {
		var v []float64
		for _, a := range all {
			v = append(v, a[k])
		}
		out[k] = median(v)
	}
	return out
}

// deviceRows: the device inside the latency layer. Channels (a fixed and a
// spread latency), the throttle inside the device against the cgroup's,
// hit/miss latencies, and a RAM disk against a capped one. Every disk is
// in RAM (--ram), as in the tests: the host's disk and its writeback play
// no part in the figures.
func deviceRows() []string {
	var cpu []string
	// Channels: 4 channels of 2 ms.
	d := create("dev-chan", "--ram", "--channels", "4", "--latency", "2ms")
	c := watchCPU(d, "dev-chan")
	f := fillFile(d, 64)
	var lat1 float64
	for _, qd := range []int{1, 4, 16} {
		m := medianOf(2, func() []float64 {
			r := devFio(d, f, readJob(qd)...)
			return []float64{r.r.IOPS, r.r.pct("50.000000")}
		})
		want := math.Min(float64(qd), 4) / 2e-3
		add("dev-chan", fmt.Sprintf("--channels 4 --latency 2ms: QD%d IOPS (median)", qd), want, m[0], "IOPS")
		add("dev-chan", fmt.Sprintf("QD%d latency p50 (median)", qd), math.Max(2, float64(qd)/4*2), m[1]/1e6, "ms")
		if qd == 1 {
			lat1 = m[1]
		} else if qd == 16 {
			add("dev-chan", "QD16 / QD1 latency p50", 4, m[1]/lat1, "x")
		}
	}
	cpu = append(cpu, c.done())
	iolens("emulate", "rm", "dev-chan")

	// Channels with a spread: the plateau is 4 / mean and the rate varies.
	dist, err := emulate.ParseDist("p50=2ms,p99=8ms")
	if err != nil {
		fail(err)
	}
	d = create("dev-spread", "--ram", "--channels", "4", "--latency", dist.String())
	f = fillFile(d, 64)
	plateau := 4 / dist.Mean().Seconds()
	s := math.Log(4) / 2.3263478740408408 // sigma of p50=2ms,p99=8ms
	predicted := math.Sqrt(math.Exp(s*s)-1) / math.Sqrt(plateau/4)
	m := medianOf(2, func() []float64 {
		r := devFio(d, f, readJob(16)...)
		return []float64{r.r.IOPS, windowCV(r.windows)}
	})
	add("dev-spread", "--channels 4 --latency p50=2ms,p99=8ms: QD16 IOPS = 4 / mean (median)", plateau, m[0], "IOPS")
	add("dev-spread", "QD16 250 ms window CV, renewal theory (median)", predicted*100, m[1]*100, "%")
	iolens("emulate", "rm", "dev-spread")

	// The throttle inside the device, and the same cap in the cgroup.
	const capIOPS = 2500.0
	d = create("dev-thr", "--ram", "--throttle-at", "device", "--total-iops", "2500")
	c = watchCPU(d, "dev-thr")
	f = fillFile(d, 64)
	for _, qd := range []int{8, 32} {
		m := medianOf(4, func() []float64 {
			r := devFio(d, f, readJob(qd)...)
			return []float64{r.r.IOPS, r.r.Lat.Mean, windowCV(r.windows), r.queue}
		})
		add("dev-thr", fmt.Sprintf("--throttle-at device --total-iops 2500: QD%d IOPS (median)", qd), capIOPS, m[0], "IOPS")
		add("dev-thr", fmt.Sprintf("QD%d latency mean = QD / cap (median)", qd), float64(qd)/capIOPS*1e3, m[1]/1e6, "ms")
		add("dev-thr", fmt.Sprintf("QD%d device queue aqu-sz = QD (median)", qd), float64(qd), m[3], "")
		add("dev-thr", fmt.Sprintf("QD%d 250 ms window CV, bound 1%% (median)", qd), 1, m[2]*100, "%")
	}
	m = medianOf(1, func() []float64 {
		r := devFio(d, f, "--size=64M", "--time_based", rt(), "--ramp_time=1", "--rw=randrw", "--bs=4k", "--iodepth=32")
		return []float64{r.r.IOPS + r.w.IOPS}
	})
	add("dev-thr", "QD32 randrw, reads + writes (median)", capIOPS, m[0], "IOPS")
	cpu = append(cpu, c.done())
	iolens("emulate", "rm", "dev-thr")
	d = create("dev-cg", "--ram", "--iops", "2500", "--latency", "0")
	f = fillFile(d, 64)
	m = medianOf(5, func() []float64 {
		r := devFio(d, f, readJob(32)...)
		return []float64{r.r.IOPS, r.r.Lat.Mean, r.queue, windowCV(r.windows), r.r.pct("50.000000")}
	})
	add("dev-cg", "--iops 2500 (cgroup): QD32 IOPS (median)", capIOPS, m[0], "IOPS")
	add("dev-cg", "QD32 latency mean = QD / cap (median)", 32/capIOPS*1e3, m[1]/1e6, "ms")
	notes = append(notes, fmt.Sprintf("the same 2,500 IOPS cap in the cgroup (medians): the device's queue (aqu-sz) at QD32 is %.2f, against about 32 inside the device, so IO waits above the device; "+
		"its 250 ms windows vary by %.1f%% (the kernel's throttle lets IO through in slices), and its p50 latency is %.2f ms against a mean of %.2f ms, where inside the device p50 and mean are both QD / cap",
		m[2], m[3]*100, m[4]/1e6, m[1]/1e6))
	iolens("emulate", "rm", "dev-cg")

	// Hit/miss latencies for reads, writes and flushes.
	rd := emulate.Dist{Hit: time.Millisecond, Miss: 8 * time.Millisecond, HitRatio: 0.75}
	wr := emulate.Dist{Hit: 500 * time.Microsecond, Miss: 4 * time.Millisecond, HitRatio: 0.4}
	fl := emulate.Dist{Hit: time.Millisecond, Miss: 6 * time.Millisecond, HitRatio: 0.5}
	d = create("dev-hit", "--ram", "--read-latency", rd.String(), "--write-latency", wr.String(), "--flush-latency", fl.String())
	f = fillFile(d, 64)
	mid := func(x emulate.Dist) float64 { return math.Sqrt(float64(x.Hit) * float64(x.Miss)) }
	m = medianOf(4, func() []float64 {
		r := devFio(d, f, readJob(1)...)
		return []float64{share(r.r.Clat.Bins, mid(rd)), r.r.pct("50.000000"), r.r.pct("90.000000"), r.r.IOPS}
	})
	add("dev-hit", "read "+rd.String()+": hit share (median)", rd.HitRatio, m[0], "")
	add("dev-hit", "read p50 = hit (median)", 1, m[1]/1e6, "ms")
	add("dev-hit", "read p90 = miss (median)", 8, m[2]/1e6, "ms")
	add("dev-hit", "read QD1 IOPS = 1 / mean (median)", 1/rd.Mean().Seconds(), m[3], "IOPS")
	m = medianOf(2, func() []float64 {
		r := devFio(d, f, "--size=64M", "--time_based", rt(), "--ramp_time=1", "--rw=randwrite", "--bs=4k", "--iodepth=1")
		return []float64{share(r.w.Clat.Bins, mid(wr)), r.w.pct("90.000000")}
	})
	add("dev-hit", "write "+wr.String()+": hit share (median)", wr.HitRatio, m[0], "")
	add("dev-hit", "write p90 = miss (median)", 4, m[1]/1e6, "ms")
	m = medianOf(2, func() []float64 {
		r := devFio(d, f, "--size=64M", "--time_based", rt(), "--rw=randwrite", "--bs=4k", "--ioengine=sync", "--fdatasync=1")
		return []float64{share(r.sync.Clat.Bins, mid(fl)), r.sync.pct("90.000000")}
	})
	add("dev-hit", "flush "+fl.String()+": hit share of fdatasyncs (median)", fl.HitRatio, m[0], "")
	add("dev-hit", "flush p90 = miss (median)", 6, m[1]/1e6, "ms")
	iolens("emulate", "rm", "dev-hit")

	// A RAM disk, no caps, no latency layer, against the same with a cap.
	d = create("dev-ram", "--ram")
	f = fillFile(d, 64)
	ram := medianOf(3, func() []float64 {
		r1 := devFio(d, f, readJob(1)...)
		r32 := devFio(d, f, readJob(32)...)
		return []float64{r1.r.Lat.Mean, r32.r.IOPS, r32.cpu}
	})
	iolens("emulate", "rm", "dev-ram")
	d = create("dev-ramcap", "--ram", "--iops", "2000")
	f = fillFile(d, 64)
	m = medianOf(1, func() []float64 { return []float64{devFio(d, f, readJob(32)...).r.IOPS} })
	iolens("emulate", "rm", "dev-ramcap")
	add("dev-ram", "--ram --iops 2000: QD32 IOPS (median)", 2000, m[0], "IOPS")
	notes = append(notes, fmt.Sprintf("RAM disk (--ram, no caps, no latency): QD32 4k randread %.0f IOPS (median), %.1fx the capped disk's, fio using %.0f%% of a core; QD1 mean latency %.1f µs",
		ram[1], ram[1]/m[0], ram[2], ram[0]/1e3))
	return cpu
}
