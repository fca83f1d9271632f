package watch

import (
	"fmt"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/prometheus/client_golang/prometheus"
)

// benchTick measures one watch interval on a fixture tree of n devices,
// all busy: reading diskstats, stat, meminfo and PSI, the rates, the state
// machine, the cliff detectors and the record. At one tick a second,
// ns/op / 1e7 is the share of a core in %.
func benchTick(b *testing.B, n int) {
	var devs []string
	for i := 0; i < n; i++ {
		devs = append(devs, fmt.Sprintf("nvme%dn1", i))
	}
	tr := newTree(b, devs...)
	w, err := New(Config{ProcRoot: tr.proc, SysRoot: tr.sys, Devices: devs, Host: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Unix(0, 0)
	if _, err := w.Start(t0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The kernel's counters move between ticks; rewriting the
		// fixture is not part of the cost.
		b.StopTimer()
		for _, d := range devs {
			c := tr.counters[d]
			c[3] += 1000
			c[4] += 8000
			c[5] += 2000
			c[7] += 900
			c[8] += 2000
		}
		tr.cpuTotal += 100
		tr.flush()
		b.StartTimer()
		if _, err := w.Tick(t0.Add(time.Duration(i+1) * time.Second)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTick1(b *testing.B)  { benchTick(b, 1) }
func BenchmarkTick64(b *testing.B) { benchTick(b, 64) }

// BenchmarkObserve64 measures what the metrics cost per interval on 64
// devices: the counters, gauges and the state-time counters updated from
// one sample record.
func BenchmarkObserve64(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry(), "bench")
	rec := result.WatchRecord{Type: result.WatchTypeSample, System: &result.SystemSample{IowaitPct: 5}}
	for i := 0; i < 64; i++ {
		rec.Devices = append(rec.Devices, result.WatchDevice{Device: fmt.Sprintf("nvme%dn1", i), State: StateBusy,
			DeviceSample: result.DeviceSample{WriteIOPS: 1000, WriteBWBytes: 4096000, WriteAwaitMs: 2, QueueSize: 2, UtilPct: 90}})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec.T = float64(i + 1)
		m.Observe(rec)
	}
}
