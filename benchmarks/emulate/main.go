// Command emulate measures how closely "iolens emulate" disks hold their
// configured figures: static IOPS and bandwidth caps (fio through
// "iolens emulate exec"), the credit-burst length and rates, and the
// write-cache fill and stall times, each as configured, measured and
// their ratio; per-IO latency (QD1 percentiles against the configured
// latency, QD1 and QD32 IOPS under a cap and a latency, fdatasync under a
// flush latency) and the latency layer's own cost against the plain loop
// device; the device inside the layer (channels, the throttle inside the
// device against the cgroup's, hit/miss latencies) and a RAM disk. It also
// reports the controller daemon's CPU use. Needs root.
//
//	make build && flock / go run ./benchmarks/emulate -iolens bin/iolens [-only latency|device]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/iolens/iolens/internal/emulate"
)

var (
	iolensBin = flag.String("iolens", "bin/iolens", "iolens binary")
	stateDir  = flag.String("state-dir", "/var/tmp/iolens-bench-emulate", "state root for the emulated disks (removed afterwards)")
	repeat    = flag.Int("repeat", 3, "runs per static-cap and latency figure (median reported)")
	runtime   = flag.Int("runtime", 10, "seconds per static-cap or latency run")
	only      = flag.String("only", "", "run one part: caps, burst, stall, latency, device or overhead (default: all)")
)

type row struct {
	test, figure    string
	configured, got float64
	unit            string
}

var (
	rows  []row
	notes []string
)

func add(test, figure string, configured, got float64, unit string) {
	rows = append(rows, row{test, figure, configured, got, unit})
	fmt.Fprintf(os.Stderr, "  %-12s %-34s configured %10.4g  measured %10.4g %s  ratio %.3f\n", test, figure, configured, got, unit, got/configured)
}

func main() {
	flag.Parse()
	if os.Geteuid() != 0 {
		fail(fmt.Errorf("needs root"))
	}
	bin, err := filepath.Abs(*iolensBin)
	if err != nil {
		fail(err)
	}
	*iolensBin = bin
	defer func() { _ = exec.Command(bin, "emulate", "rm", "--all", "--force", "--state-dir", *stateDir).Run() }()
	var cpu []string
	part := func(name string, f func() []string) {
		if *only == "" || *only == name {
			cpu = append(cpu, f()...)
		}
	}
	part("caps", staticCaps)
	part("burst", burst)
	part("stall", stall)
	part("latency", latencyRows)
	part("device", deviceRows)
	var overheadRows []string
	part("overhead", func() []string { overheadRows = overhead(); return nil })
	fmt.Println("| test | figure | configured | measured | unit | ratio |")
	fmt.Println("|---|---|---:|---:|---|---:|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %.4g | %.4g | %s | %.3f |\n", r.test, r.figure, r.configured, r.got, r.unit, r.got/r.configured)
	}
	fmt.Println()
	fmt.Println("| controller | wall s | CPU s | CPU % of one core | ticks | CPU per tick µs |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, c := range cpu {
		fmt.Println(c)
	}
	if len(overheadRows) > 0 {
		fmt.Println()
		fmt.Println("| disk | 4k randread | IOPS (median) | CPU per IO µs (median: fio and the latency daemon) |")
		fmt.Println("|---|---|---:|---:|")
		for _, r := range overheadRows {
			fmt.Println(r)
		}
	}
	fmt.Println()
	for _, n := range notes {
		fmt.Println("- " + n)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchmarks/emulate:", err)
	os.Exit(1)
}

func iolens(args ...string) string {
	argv := append([]string{args[0], "--state-dir", *stateDir}, args[1:]...)
	out, err := exec.Command(*iolensBin, argv...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			fail(fmt.Errorf("iolens %v: %v: %s", args, err, ee.Stderr))
		}
		fail(err)
	}
	return string(out)
}

func create(name string, args ...string) *emulate.Disk {
	iolens(append([]string{"emulate", "create", name, "--size", "2G"}, args...)...)
	d, err := emulate.OpenIn(*stateDir, name)
	if err != nil {
		fail(err)
	}
	return d
}

func fillFile(d *emulate.Disk, mib int) string {
	p := filepath.Join(d.Mount, "f")
	if out, err := exec.Command("dd", "if=/dev/urandom", "of="+p, "bs=1M", fmt.Sprint("count=", mib), "oflag=direct").CombinedOutput(); err != nil {
		fail(fmt.Errorf("dd: %v: %s", err, out))
	}
	return p
}

type fioDir struct {
	IOPS    float64 `json:"iops"`
	BWBytes float64 `json:"bw_bytes"`
}

func fio(d *emulate.Disk, file string, args ...string) (r, w fioDir) {
	argv := append([]string{"emulate", "exec", d.Name, "--", "fio", "--name=b", "--filename=" + file, "--direct=1",
		"--ioengine=libaio", "--output-format=json"}, args...)
	out := iolens(argv...)
	if i := strings.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	var doc struct {
		Jobs []struct {
			Read  fioDir `json:"read"`
			Write fioDir `json:"write"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Jobs) == 0 {
		fail(fmt.Errorf("fio output: %v", err))
	}
	return doc.Jobs[0].Read, doc.Jobs[0].Write
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// cpuOf returns a process's user+system CPU time.
func cpuOf(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return time.Duration((u + k) / 100 * float64(time.Second)) // USER_HZ is 100 on Linux
}

type cpuWatch struct {
	pid   int
	cpu0  time.Duration
	t0    time.Time
	label string
	tick  time.Duration
}

func watchCPU(d *emulate.Disk, label string) cpuWatch {
	return cpuWatch{pid: d.ControllerPID, cpu0: cpuOf(d.ControllerPID), t0: time.Now(), label: label, tick: d.Spec.Tick}
}

func (c cpuWatch) done() string {
	wall := time.Since(c.t0)
	cpu := cpuOf(c.pid) - c.cpu0
	ticks := wall / c.tick
	return fmt.Sprintf("| %s | %.1f | %.2f | %.2f | %d | %.0f |", c.label, wall.Seconds(), cpu.Seconds(),
		100*cpu.Seconds()/wall.Seconds(), ticks, float64(cpu.Microseconds())/float64(ticks))
}

func staticCaps() []string {
	var cpu []string
	for _, c := range []struct {
		name string
		iops float64
		bw   float64
	}{{"caps-low", 500, 20 << 20}, {"caps-high", 4000, 80 << 20}} {
		d := create(c.name, "--iops", fmt.Sprint(c.iops), "--bw", fmt.Sprintf("%dMiB/s", int(c.bw)>>20))
		f := fillFile(d, 256)
		w := watchCPU(d, c.name+" (static caps)")
		common := []string{"--size=256M", "--time_based", fmt.Sprintf("--runtime=%d", *runtime), "--ramp_time=2"}
		var rr, rw, br, bw []float64
		for i := 0; i < *repeat; i++ {
			r, _ := fio(d, f, append(common, "--rw=randread", "--bs=4k", "--iodepth=32")...)
			rr = append(rr, r.IOPS)
			_, x := fio(d, f, append(common, "--rw=randwrite", "--bs=4k", "--iodepth=32")...)
			rw = append(rw, x.IOPS)
			r, _ = fio(d, f, append(common, "--rw=read", "--bs=1M", "--iodepth=8")...)
			br = append(br, r.BWBytes)
			_, x = fio(d, f, append(common, "--rw=write", "--bs=1M", "--iodepth=8")...)
			bw = append(bw, x.BWBytes)
		}
		add(c.name, "4k randread IOPS (median)", c.iops, median(rr), "IOPS")
		add(c.name, "4k randwrite IOPS (median)", c.iops, median(rw), "IOPS")
		add(c.name, "1M read (median)", c.bw/(1<<20), median(br)/(1<<20), "MiB/s")
		add(c.name, "1M write (median)", c.bw/(1<<20), median(bw)/(1<<20), "MiB/s")
		cpu = append(cpu, w.done())
		iolens("emulate", "rm", c.name)
	}
	// The same host without caps, for scale.
	d := create("uncapped")
	f := fillFile(d, 256)
	r, _ := fio(d, f, "--size=256M", "--time_based", fmt.Sprintf("--runtime=%d", *runtime), "--ramp_time=2", "--rw=randread", "--bs=4k", "--iodepth=32")
	notes = append(notes, fmt.Sprintf("uncapped loop device on this host, same run: 4k randread %.0f IOPS (QD32)", r.IOPS))
	iolens("emulate", "rm", "uncapped")
	return cpu
}

// sampler reads the loop device counters every 50 ms.
type sampler struct {
	mu   sync.Mutex
	t    []time.Time
	r, w []float64 // cumulative read IOs, write bytes
	stop chan struct{}
	done chan struct{}
}

func sample(d *emulate.Disk) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	path := filepath.Join("/sys/block", filepath.Base(d.Device), "stat")
	go func() {
		defer close(s.done)
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			if b, err := os.ReadFile(path); err == nil {
				f := strings.Fields(string(b))
				r, _ := strconv.ParseFloat(f[0], 64)
				w, _ := strconv.ParseFloat(f[6], 64)
				s.mu.Lock()
				s.t, s.r, s.w = append(s.t, time.Now()), append(s.r, r), append(s.w, w*512)
				s.mu.Unlock()
			}
			select {
			case <-s.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return s
}

func (s *sampler) end() { close(s.stop); <-s.done }

func (s *sampler) rate(v []float64, a, b time.Time) float64 {
	at := func(x time.Time) float64 {
		i := sort.Search(len(s.t), func(i int) bool { return !s.t[i].Before(x) })
		if i >= len(s.t) {
			return v[len(v)-1]
		}
		return v[i]
	}
	return (at(b) - at(a)) / b.Sub(a).Seconds()
}

func (s *sampler) first(v []float64, after time.Time) time.Time {
	for i := 1; i < len(s.t); i++ {
		if s.t[i].After(after) && v[i] > v[i-1] {
			return s.t[i-1]
		}
	}
	return time.Time{}
}

func events(d *emulate.Disk) []emulate.Event {
	evs, err := d.Events()
	if err != nil {
		fail(err)
	}
	return evs
}

// burst: an Azure P4 scaled x90 bursts at 3,500 IOPS for 20 s, then runs
// at 120.
func burst() []string {
	d := create("burst", "--profile", "azure:P4", "--scale", "90")
	f := fillFile(d, 64)
	time.Sleep(time.Second)
	m := emulate.NewModel(d.Spec, time.Now())
	predicted := m.BurstSeconds(emulate.ResourceIOPS)
	w := watchCPU(d, "burst (azure:P4 x90)")
	s := sample(d)
	t0 := time.Now()
	fio(d, f, "--size=64M", "--time_based", "--runtime=35", "--rw=randread", "--bs=4k", "--iodepth=32")
	s.end()
	cpu := w.done()
	start := s.first(s.r, t0)
	var drop time.Time
	for x := start.Add(time.Second); x.Before(s.t[len(s.t)-1]); x = x.Add(50 * time.Millisecond) {
		if s.rate(s.r, x, x.Add(500*time.Millisecond)) < (3500+120)/2 {
			drop = x.Add(250 * time.Millisecond)
			break
		}
	}
	var end time.Time
	for _, e := range events(d) {
		if e.Event == emulate.EventBurstEnd && e.Resource == emulate.ResourceIOPS {
			end = e.Time
			break
		}
	}
	add("burst", "burst length, from the IO rate", predicted, drop.Sub(start).Seconds(), "s")
	add("burst", "burst length, from the event log", predicted, end.Sub(start).Seconds(), "s")
	add("burst", "burst rate", 3500, s.rate(s.r, start.Add(2*time.Second), start.Add(time.Duration(predicted-2)*time.Second)), "IOPS")
	add("burst", "baseline after the burst", 120, s.rate(s.r, drop.Add(2*time.Second), s.t[len(s.t)-1].Add(-time.Second)), "IOPS")
	iolens("emulate", "rm", "burst")
	return []string{cpu}
}

// stall: seed 003. An Azure P4 (25 MB/s, no credits left) behind a
// readwrite cache of 128 MB/s that holds 3 GiB, scaled x10.
func stall() []string {
	d := create("stall", "--profile", "azure:P4", "--cache", "readwrite", "--start-empty", "--scale", "10")
	f := fillFile(d, 64)
	time.Sleep(time.Duration(64<<20/25e6*float64(time.Second)) + time.Second) // the file's own writes drain
	w := watchCPU(d, "stall (azure:P4 readwrite x10)")
	s := sample(d)
	t0 := time.Now()
	fio(d, f, "--size=64M", "--time_based", "--runtime=50", "--rw=write", "--bs=1M", "--iodepth=8")
	s.end()
	cpu := w.done()
	start := s.first(s.w, t0)
	var st, en []time.Time
	var dirty []float64
	for _, e := range events(d) {
		switch e.Event {
		case emulate.EventStallStart:
			st = append(st, e.Time)
			dirty = append(dirty, *e.DirtyBytes)
		case emulate.EventStallEnd:
			en = append(en, e.Time)
		}
	}
	cache := float64(emulate.DefaultCacheBytes) / 10
	fill := cache / (emulate.DefaultCacheBPS - 25e6)
	add("stall", "first fill (to stall-start)", fill, st[0].Sub(start).Seconds(), "s")
	if len(en) > 0 {
		add("stall", "stall length (events)", cache/(25e6-1<<20), en[0].Sub(st[0]).Seconds(), "s")
		add("stall", "write rate while filling", 128, s.rate(s.w, start.Add(500*time.Millisecond), st[0].Add(-200*time.Millisecond))/1e6, "MB/s")
		add("stall", "write rate inside the stall", 1.048576, s.rate(s.w, st[0].Add(time.Second), en[0].Add(-time.Second))/1e6, "MB/s")
	}
	// Trough alignment: where the 1 s series first falls below 5% of
	// the cache rate, against stall-start.
	for x := start; x.Before(s.t[len(s.t)-1]); x = x.Add(time.Second) {
		if s.rate(s.w, x, x.Add(time.Second)) < 0.05*128e6 {
			fmt.Fprintf(os.Stderr, "  first trough second starts %.2f s after stall-start\n", x.Sub(st[0]).Seconds())
			notes = append(notes, fmt.Sprintf("stall: the first 1 s bin below 5%% of the cache rate starts %.2f s after stall-start", x.Sub(st[0]).Seconds()))
			break
		}
	}
	var series bytes.Buffer
	for x := start; x.Add(time.Second).Before(s.t[len(s.t)-1]); x = x.Add(time.Second) {
		fmt.Fprintf(&series, "%.0f ", s.rate(s.w, x, x.Add(time.Second))/1e6)
	}
	notes = append(notes, fmt.Sprintf("stall: %d stall-starts, %d stall-ends in 50 s; the cache held %.0f MB at the first; 1 s write MB/s: %s", len(st), len(en), dirty[0]/1e6, series.String()))
	iolens("emulate", "rm", "stall")
	return []string{cpu}
}
