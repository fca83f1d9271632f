// Command watch measures what iolens watch costs: CPU time (user+system,
// from the kernel's rusage) and peak RSS of the whole process, at a 1 s
// interval, watching one real device and a fixture tree of 64 busy
// devices. Scenarios alternate within each repetition and medians are
// reported, so that the figures come from the same run.
//
// With -delay it measures instead how long watch takes to report a write
// cache stall and a credit cliff on emulated disks, against the
// emulator's event log (root, fio; see delay.go).
//
//	go build -o bin/iolens ./cmd/iolens
//	go run ./benchmarks/watch -iolens bin/iolens -duration 30s -repeat 3
//	sudo go run ./benchmarks/watch -iolens bin/iolens -delay -repeat 5
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("iolens", "bin/iolens", "iolens binary")
	dur := flag.Duration("duration", 30*time.Second, "how long each watch runs")
	repeat := flag.Int("repeat", 3, "repetitions of each scenario")
	dev := flag.String("device", "", "real device for the 1-device scenarios (default: the first default device)")
	delay := flag.Bool("delay", false, "measure detection delay on emulated disks against their event log instead (root, fio; -repeat defaults to 5)")
	flag.Parse()
	if *delay {
		n := 5
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "repeat" {
				n = *repeat
			}
		})
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := delayBench(ctx, *bin, n)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchmarks/watch:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*bin, *dur, *repeat, *dev); err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks/watch:", err)
		os.Exit(1)
	}
}

type scenario struct {
	name string
	args []string
	tree bool // a 64-device fixture whose counters move every second
}

type sample struct{ cpuPct, totalPct, rssMiB, anonMiB, peakMiB float64 }

func run(bin string, dur time.Duration, repeat int, dev string) error {
	root, err := os.MkdirTemp("", "iolens-bench-watch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	ft, err := newFixture(root, 64)
	if err != nil {
		return err
	}
	common := []string{"watch", "--interval", "1s", "--duration", dur.String(), "-o", "ndjson"}
	devArgs := []string{}
	if dev != "" {
		devArgs = []string{dev}
	}
	scens := []scenario{
		{name: "1 real device, --top 0", args: append(append(append([]string{}, common...), devArgs...), "--top", "0")},
		{name: "1 real device, --top 5, --metrics-addr", args: append(append(append([]string{}, common...), devArgs...), "--top", "5", "--metrics-addr", "127.0.0.1:0")},
		{name: "64 fixture devices, --top 0", args: append(append([]string{}, common...), "--top", "0", "--proc-root", ft.proc, "--sys-root", ft.sys), tree: true},
		{name: "64 fixture devices, --metrics-addr", args: append(append([]string{}, common...), "--top", "0", "--proc-root", ft.proc, "--sys-root", ft.sys, "--metrics-addr", "127.0.0.1:0"), tree: true},
	}
	res := make([][]sample, len(scens))
	for r := 0; r < repeat; r++ {
		for i, s := range scens {
			ctx, cancel := context.WithCancel(context.Background())
			if s.tree {
				go ft.tick(ctx)
			}
			smp, err := measure(bin, s.args, dur)
			cancel()
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			res[i] = append(res[i], smp)
			fmt.Fprintf(os.Stderr, "run %d %-40s steady cpu %.3f%% of a core (with start-up %.3f%%), RSS %.1f MiB (peak %.1f)\n",
				r+1, s.name, smp.cpuPct, smp.totalPct, smp.rssMiB, smp.peakMiB)
		}
	}
	fmt.Printf("iolens watch, 1 s interval, %s per run, %d runs (medians)\n\n", dur, repeat)
	fmt.Printf("%-42s %12s %12s %9s %9s %9s\n", "scenario", "steady CPU%", "with start", "RSS MiB", "anon MiB", "peak MiB")
	base := 0.0
	for i, s := range scens {
		med := func(f func(sample) float64) float64 { return median(res[i], f) }
		c := med(func(x sample) float64 { return x.cpuPct })
		ratio := ""
		if i == 0 {
			base = c
		} else if base > 0 {
			ratio = fmt.Sprintf("  x%.1f the first", c/base)
		}
		fmt.Printf("%-42s %12.3f %12.3f %9.1f %9.1f %9.1f%s\n", s.name, c, med(func(x sample) float64 { return x.totalPct }),
			med(func(x sample) float64 { return x.rssMiB }), med(func(x sample) float64 { return x.anonMiB }),
			med(func(x sample) float64 { return x.peakMiB }), ratio)
	}
	fmt.Println("\nCPU in % of one core (user+system); steady leaves out the first 3 s and the last second.")
	return nil
}

// measure runs iolens watch for dur. Steady CPU is read from
// /proc/PID/stat between 3 s in and 1 s before the end, so start-up
// (loading a 60 MB binary, package init) is left out; the total comes
// from the kernel's rusage of the child. RSS is read at the end of the
// steady window; the peak comes from rusage.
func measure(bin string, args []string, dur time.Duration) (sample, error) {
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	pid := cmd.Process.Pid
	time.Sleep(3 * time.Second)
	c0, t0 := cpuTicks(pid), time.Now()
	time.Sleep(dur - 4*time.Second)
	c1, t1 := cpuTicks(pid), time.Now()
	rss, anon := rssKiB(pid)
	if err := cmd.Wait(); err != nil {
		return sample{}, fmt.Errorf("%v: %s", err, stderr.String())
	}
	wall := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{}, fmt.Errorf("no rusage")
	}
	total := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	// USER_HZ is 100 on Linux: a tick is 10 ms.
	steady := float64(c1-c0) * 0.01 / t1.Sub(t0).Seconds() * 100
	return sample{cpuPct: steady, totalPct: total.Seconds() / wall.Seconds() * 100, rssMiB: float64(rss) / 1024,
		anonMiB: float64(anon) / 1024, peakMiB: float64(ru.Maxrss) / 1024}, nil
}

func cpuTicks(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which may hold spaces: utime is the
	// 14th field, stime the 15th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	var u, s uint64
	fmt.Sscan(f[11], &u)
	fmt.Sscan(f[12], &s)
	return u + s
}

// rssKiB returns the resident set and its anonymous part (heap and
// stacks; the rest is the binary's pages, shared and reclaimable).
func rssKiB(pid int) (rss, anon uint64) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		var n uint64
		fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &n)
		switch k {
		case "VmRSS":
			rss = n
		case "RssAnon":
			anon = n
		}
	}
	return rss, anon
}

func median(s []sample, f func(sample) float64) float64 {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// fixture is a /proc and /sys tree of n busy NVMe devices.
type fixture struct {
	proc, sys string
	n         int
	step      uint64
}

func newFixture(root string, n int) (*fixture, error) {
	f := &fixture{proc: filepath.Join(root, "proc"), sys: filepath.Join(root, "sys"), n: n}
	for i := 0; i < n; i++ {
		name, mm := fmt.Sprintf("nvme%dn1", i), fmt.Sprintf("259:%d", i)
		dir := filepath.Join(f.sys, "devices/pci0000:00/nvme", name)
		if err := write(filepath.Join(dir, "dev"), mm+"\n"); err != nil {
			return nil, err
		}
		if err := write(filepath.Join(dir, "queue/rotational"), "0\n"); err != nil {
			return nil, err
		}
		for _, l := range []string{filepath.Join(f.sys, "class/block", name), filepath.Join(f.sys, "dev/block", mm)} {
			os.MkdirAll(filepath.Dir(l), 0o755)
			if err := os.Symlink("../../devices/pci0000:00/nvme/"+name, l); err != nil {
				return nil, err
			}
		}
	}
	// Every device backs a mount, so the default device list finds all 64.
	var mi strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&mi, "%d 1 259:%d / /data%d rw,relatime - xfs /dev/nvme%dn1 rw\n", 100+i, i, i, i)
	}
	if err := write(filepath.Join(f.proc, "1/mountinfo"), mi.String()); err != nil {
		return nil, err
	}
	os.Symlink("1", filepath.Join(f.proc, "self"))
	return f, f.flush()
}

func (f *fixture) flush() error {
	k := f.step
	var b strings.Builder
	for i := 0; i < f.n; i++ {
		fmt.Fprintf(&b, " 259 %7d nvme%dn1 %d 0 %d %d %d 0 %d %d 2 %d %d 0 0 0 0 0 0\n", i, i,
			k*500, k*4000, k*300, k*1500, k*96000, k*3000, k*900, k*3300)
	}
	if err := write(filepath.Join(f.proc, "diskstats"), b.String()); err != nil {
		return err
	}
	if err := write(filepath.Join(f.proc, "stat"), fmt.Sprintf("cpu  %d 0 %d %d %d 0 0 0 0 0\nbtime 1\n", k*100, k*20, k*60, k*20)); err != nil {
		return err
	}
	if err := write(filepath.Join(f.proc, "meminfo"), fmt.Sprintf("MemTotal: 8000000 kB\nDirty: %d kB\nWriteback: 2048 kB\n", 1000+k%7*1000)); err != nil {
		return err
	}
	return write(filepath.Join(f.proc, "pressure/io"), fmt.Sprintf("some avg10=1.00 avg60=1.00 avg300=1.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", k*50000))
}

// tick moves the counters every second, as the kernel would.
func (f *fixture) tick(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.step++
			f.flush()
		}
	}
}

// write replaces a file atomically, so iolens never reads half of it.
func write(p, s string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}
