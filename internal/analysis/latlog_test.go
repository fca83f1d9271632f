package analysis

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/result"
)

// logGen produces a per-IO fio latency log of n rows without holding it:
// iops IOs per second of 4 KiB at 200 µs, except during [stallFrom,
// stallTo) seconds, where nothing completes and the first IO after it
// took the whole stall.
type logGen struct {
	n, i               int
	iops               int
	stallFrom, stallTo int64
	slowDone           bool
	buf                []byte
}

func (g *logGen) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) && g.i < g.n {
		ms := int64(g.i) * 1000 / int64(g.iops)
		lat := 200000 + (g.i%97)*1000
		if ms >= g.stallFrom*1000 && ms < g.stallTo*1000 {
			// Everything issued during the stall completes just after
			// it; the first of those IOs waited the whole stall.
			if !g.slowDone {
				lat = int(g.stallTo-g.stallFrom) * 1e9
				g.slowDone = true
			}
			ms = g.stallTo*1000 + 1
		}
		g.buf = fmt.Appendf(g.buf, "%d, %d, 1, 4096, 0\n", ms, lat)
		g.i++
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

func scanLatLog(t testing.TB, r io.Reader) LatLogSummary {
	a := NewLatLog()
	if err := fio.ScanLog(r, func(e fio.LogEntry) error { a.Add(e.TimeMs, e.Value, e.BS); return nil }); err != nil {
		t.Fatal(err)
	}
	return a.Finish()
}

func TestLatLog(t *testing.T) {
	// 60 s at 5000 IOPS with nothing completing from 20 s to 25 s.
	g := &logGen{n: 300000, iops: 5000, stallFrom: 20, stallTo: 25}
	s := scanLatLog(t, g)
	if s.IOs != 300000 || s.Unit != unitBytes {
		t.Fatalf("summary %+v", s)
	}
	if s.MaxNs != 5e9 {
		t.Errorf("max %v, want the 5 s IO", s.MaxNs)
	}
	want := float64(result.BucketValue(result.BucketIndex(200000 + 96*1000)))
	if s.P99Ns > want || s.P99Ns < 250000 {
		t.Errorf("p99 %v, want about 295 µs (<= %v)", s.P99Ns, want)
	}
	var stalls []result.Finding
	for _, f := range s.Findings {
		if f.Kind == KindStall {
			stalls = append(stalls, f)
		}
	}
	// Windows 21..25 are empty (the late IO lands in window 26).
	if len(stalls) != 1 || *stalls[0].StartS != 20 || *stalls[0].DurationS != 5 {
		t.Errorf("stalls %+v", stalls)
	}

	if s := scanLatLog(t, strings.NewReader("1, 100, 0, 4096, 0\n5, 120, 0, 4096, 0\n")); len(s.Findings) != 1 || !strings.HasPrefix(s.Findings[0].Summary, "not enough data") {
		t.Errorf("short log: %+v", s.Findings)
	}
}

// BenchmarkLatLog streams a 10-million-row per-IO log; it reports rows
// per second and the peak heap in use, which stays flat as n grows.
func BenchmarkLatLog(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				a := NewLatLog()
				var ms runtime.MemStats
				k := 0
				err := fio.ScanLog(&logGen{n: n, iops: 50000, stallFrom: 60, stallTo: 63}, func(e fio.LogEntry) error {
					a.Add(e.TimeMs, e.Value, e.BS)
					if k++; k%1_000_000 == 0 {
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapInuse)
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				a.Finish()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// BenchmarkHourSeries analyses a one-hour 1 s result with a cliff and
// periodic stalls, device series included.
func BenchmarkHourSeries(b *testing.B) {
	s := cat(flat(900, 250e6), flat(2700, 60e6)).noisy(0.05, 21)
	for i := 1200; i < 3600; i += 300 {
		for j := i; j < i+20; j++ {
			s[j] = 0
		}
	}
	r := seriesResult(s)
	dev := result.DeviceSeries{Device: "vdb"}
	for i, v := range s {
		dev.Samples = append(dev.Samples, result.DeviceSample{T: float64(i+1) + 0.2, WriteBWBytes: v, QueueSize: math.Max(1, 9-v/1e8), UtilPct: 100})
	}
	r.Devices = []result.DeviceSeries{dev}
	var n int
	for b.Loop() {
		n = len(ResultFindings(&r))
	}
	if n < 9 {
		b.Fatalf("%d findings, want a cliff and 8 stalls", n)
	}
	b.ReportMetric(3600*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}
