package analysis

import (
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// qd32 is a 4 KiB random read at QD32 with no other test beside it: its
// rate follows rate(t), the device's queue holds devQueue.
func qd32(iops, devQueue float64, rate func(i int) float64) *result.Result {
	r := &result.Result{RunID: "r", Status: "ok", Target: result.Target{Kind: "dir", Path: "/x", Device: "loop0"},
		Test: result.TestSpec{Name: "randread-4k-qd32", RW: "randread", BlockSize: 4096, IODepth: 32, NumJobs: 1, RuntimeS: 15}}
	r.Read = &result.DirResult{IOPS: iops, BWBytes: iops * 4096, RuntimeMs: 15000,
		Lat: result.Latency{MeanNs: 32 / iops * 1e9, P50Ns: 2e6, P999Ns: 30e6}}
	dev := result.DeviceSeries{Device: "loop0", Role: "direct"}
	for i := 1; i <= 15; i++ {
		v := rate(i)
		r.FioSeries = append(r.FioSeries, result.FioSample{T: float64(i), ReadIOPS: v, ReadBWBytes: v * 4096})
		dev.Samples = append(dev.Samples, result.DeviceSample{T: float64(i), ReadIOPS: v, QueueSize: devQueue, ReadAwaitMs: devQueue / v * 1e3})
	}
	r.Devices = []result.DeviceSeries{dev}
	return r
}

// TestLimitFlatRateIsACap: a throttle in front of a device with latency
// of its own (--iops 5000 --latency 2ms) keeps half of fio's 32 IOs in the
// device, so neither "held above" nor "device full" tells; the rate, flat
// to a fraction of a percent, does. A device that wanders is not called
// capped on that ground.
func TestLimitFlatRateIsACap(t *testing.T) {
	flat := qd32(5000, 15.7, func(i int) float64 { return 5000 + float64(i%2) })
	if fs := LimitFindings(flat, nil); len(fs) != 1 || fs[0].Code != result.CodeIOPSCap {
		t.Fatalf("flat 5,000 IOPS, half the queue in the device: %+v", fs)
	}
	// A throttle's first budget lets a burst through in the first seconds
	// (measured: 5,232 then 4,996, 4,996, 5,000).
	start := qd32(5000, 15.5, func(i int) float64 {
		if i <= 2 {
			return 5232
		}
		return 4996 + float64(i%3)
	})
	if fs := LimitFindings(start, nil); len(fs) != 1 || fs[0].Code != result.CodeIOPSCap {
		t.Fatalf("flat after a start-up burst: %+v", fs)
	}
	wander := qd32(5000, 15.7, func(i int) float64 { return 5000 + 400*float64(i%3-1) })
	if fs := LimitFindings(wander, nil); len(fs) != 1 || fs[0].Code == result.CodeIOPSCap {
		t.Fatalf("a rate that wanders by 8%% was called a cap: %+v", fs)
	}
	// A throttle inside the device (a hypervisor enforcing a cloud
	// disk's cap) keeps the guest's queue full: the flat rate still says
	// throttle, and the summary says where it sits.
	full := qd32(5000, 31, func(i int) float64 { return 5000 + float64(i%2) })
	if fs := LimitFindings(full, nil); len(fs) != 1 || fs[0].Code != result.CodeIOPSCap || !strings.Contains(fs[0].Summary, "inside the device") {
		t.Fatalf("a flat rate with the device's queue full: %+v", fs)
	}
}

// The null engine does no IO: a test run with it measured no disk, and
// says so instead of naming a limit (it once read "the CPU binds ... the
// disk was not the limit"); nor does it stand as a peer of real tests.
func TestLimitNullEngine(t *testing.T) {
	null := qd32(5000, 0, func(i int) float64 { return 5000 + float64(i%2) })
	null.Test.IOEngine = "null"
	fs := LimitFindings(null, nil)
	if len(fs) != 1 || fs[0].Code != result.CodeUnknown || !strings.Contains(fs[0].Summary, "no disk was measured") {
		t.Fatalf("null engine: %+v", fs)
	}
	wander := qd32(5000, 15.7, func(i int) float64 { return 5000 + 400*float64(i%3-1) })
	peer := qd32(5000, 0, func(i int) float64 { return 5000 })
	peer.Test.IOEngine, peer.Test.IODepth, peer.Test.Name = "null", 1, "null-qd1"
	if fs := LimitFindings(wander, []*result.Result{peer}); len(fs) != 1 || fs[0].Code == result.CodeIOPSCap {
		t.Fatalf("a null-engine test made a real one a cap: %+v", fs)
	}
}

// Revise, over a whole run, says the same of a null-engine test, and
// fits no curve through it.
func TestReviseNullEngine(t *testing.T) {
	null := qd32(5000, 0, func(i int) float64 { return 5000 + float64(i%2) })
	null.Test.IOEngine = "null"
	rs := []result.Result{*null}
	Revise(rs)
	for _, f := range rs[0].Findings {
		if f.Kind == result.KindModel || f.Kind == result.KindLimit && !strings.Contains(f.Summary, "no disk was measured") {
			t.Errorf("finding %s %s: %s", f.Kind, f.Code, f.Summary)
		}
	}
}
