package scaletest

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// Scales are the multiples of a normal input every reader's benchmark
// reads: 1×, 10×, 100× and 1,000×.
var Scales = [...]int{1, 10, 100, 1000}

// The bounds on growth from n to 10n. Linear work grows 10 times and
// quadratic 100 times; the bounds sit far from both so that a noisy,
// shared machine passes linear work and fails quadratic work.
const (
	MaxAllocGrowth = 20
	MaxTimeGrowth  = 40
)

// Linear fails t when f's work on an input of 10n items is more than the
// bounds above its work on n items: the allocations (counted, so exact)
// and the CPU time (the least of three runs, so a busy moment counts
// once).
// n must be large enough that the per-item work outweighs f's fixed
// cost (a few milliseconds of work at n).
func Linear(t testing.TB, name string, n int, f func(n int)) {
	t.Helper()
	small, large := measure(n, f), measure(10*n, f)
	allocs := large.allocs / max(small.allocs, 1)
	took := float64(large.took) / float64(max(small.took, time.Microsecond))
	msg := fmt.Sprintf("%s: %d items: %.0f allocations, %v; %d items: %.0f allocations, %v (×%.1f allocations, ×%.1f time)",
		name, n, small.allocs, small.took, 10*n, large.allocs, large.took, allocs, took)
	if allocs > MaxAllocGrowth || took > MaxTimeGrowth {
		t.Errorf("%s: grows faster than its input (want at most ×%d allocations and ×%d time)", msg, MaxAllocGrowth, MaxTimeGrowth)
		return
	}
	t.Log(msg)
}

type work struct {
	allocs float64
	took   time.Duration
}

func measure(n int, f func(n int)) work {
	w := work{allocs: testing.AllocsPerRun(1, func() { f(n) })}
	for i := 0; i < 3; i++ {
		start := cpuTime()
		f(n)
		if d := cpuTime() - start; i == 0 || d < w.took {
			w.took = d
		}
	}
	return w
}

// cpuTime is the CPU time the process has used (the garbage collector's
// included): unlike the wall clock, it does not count the time other
// work on a shared machine held the CPU. The wall clock where the system
// does not say.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Bench runs one sub-benchmark per scale of a normal input of base items:
// setup builds the input of n items outside the timer and returns the
// work to time. Each reports its time per item, wall and CPU (the CPU
// time is what a shared machine's other work does not move), which stay
// flat when the work is linear.
func Bench(b *testing.B, base int, unit string, setup func(n int) func()) {
	for _, k := range Scales {
		n := base * k
		run := setup(n)
		b.Run(fmt.Sprintf("x%d", k), func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				run()
			}
			per := float64(b.N) * float64(n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/"+unit)
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/per, "cpu-ns/"+unit)
		})
	}
}
