package analysis_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
)

// The disk model against disks whose truth the emulator's parameters
// give, each measured the way diagnose measures a curve (4 KiB random
// reads at a few depths, a few seconds each), each of a kind the model's
// rules were not tuned on: what binds must come out of the curve.

// sweep measures 4 KiB random reads at each depth on a fresh emulated disk
// and returns the results, analysed as a run is, and the read curve.
func sweep(t *testing.T, spec emulate.Spec, depths []int, runtime float64) ([]result.Result, *analysis.Curve) {
	t.Helper()
	if spec.RAM && spec.Limits != (emulate.Limits{}) && spec.ThrottleAt != emulate.ThrottleDevice {
		// The kernel's caps on a disk in RAM set the figures: the test
		// may run beside another such test. A throttle in the device is
		// paced by the latency layer, on the CPU: alone.
		t.Parallel()
		realio.Capped(t, emulate.Unavailable("fio"))
	} else {
		groundTruthEnv(t)
	}
	spec.Dir = t.TempDir()
	if spec.SizeBytes == 0 {
		spec.SizeBytes = 1 << 30
	}
	ctx := context.Background()
	d, err := emulate.Create(ctx, spec)
	if err != nil {
		t.Fatalf("emulate: %v", err)
	}
	realio.Cleanup(t, func() {
		if err := d.ForceDestroy(context.Background()); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	var tests []result.TestSpec
	for _, qd := range depths {
		ts := write(fmt.Sprintf("randread-4k-qd%d", qd), "randread", 4096, qd, runtime)
		ts.RampS = 1
		tests = append(tests, ts)
	}
	cfg := runner.Config{Suite: result.Suite{Name: "model", Tests: tests}, Dir: d.Mount, Emulated: d.Name, CommandPrefix: d.CommandPrefix(),
		SizeBytes: 128 << 20}
	var rs []result.Result
	session := analysis.NewSession(cfg.Suite, 1)
	if err := runner.Run(ctx, cfg, func(r result.Result) error {
		session.Add(&r)
		rs = append(rs, r)
		return nil
	}, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
	analysis.Revise(rs)
	ptrs := make([]*result.Result, len(rs))
	for i := range rs {
		ptrs[i] = &rs[i]
		if rs[i].Status != "ok" {
			t.Fatalf("%s: %s", rs[i].Test.Name, rs[i].Error)
		}
	}
	m := analysis.FitModel(ptrs)
	if len(m.Curves) != 1 {
		t.Fatalf("%d curves, want the one read curve", len(m.Curves))
	}
	c := &m.Curves[0]
	t.Logf("%s", c.Summary())
	for _, r := range rs {
		for _, f := range r.Findings {
			if f.Kind == result.KindLimit {
				t.Logf("%s [%s] %s (fine CV %.4f, service CV %.3f, 1 s spread %.4f, device queue %.1f)", r.Test.Name, f.Code, f.Summary,
					f.Evidence["iops_cv_fine"], f.Evidence["service_cv"], f.Evidence["iops_spread_1s"], f.Evidence["device_queue"])
			}
		}
	}
	return rs, c
}

// limitCodes are the read limit codes of rs by test name.
func limitCodes(rs []result.Result) map[string]string {
	out := map[string]string{}
	for _, r := range rs {
		for _, f := range r.Findings {
			if f.Kind == result.KindLimit && f.Dir == "read" {
				out[r.Test.Name] = f.Code
			}
		}
	}
	return out
}

// consistent checks that every test's limit is its point's reading of the
// curve: the findings never contradict the headline.
func consistent(t *testing.T, rs []result.Result, c *analysis.Curve) {
	t.Helper()
	codes := limitCodes(rs)
	for i := range c.Points {
		p := &c.Points[i]
		for _, name := range p.Tests {
			if got, want := codes[name], c.PointCode(p); got != want {
				t.Errorf("%s: finding says %q, its curve %q", name, got, want)
			}
		}
	}
}

// A network-like disk: 4 ms per IO whatever the depth, no cap and no
// limit on IOs served at once. Up to QD32 latency stays at its base, so
// the curve is latency-bound and says a deeper queue gives more; nothing
// calls it a saturated device or a cap.
func TestModelLatencyBoundEveryDepth(t *testing.T) {
	lat := emulate.Fixed(4 * time.Millisecond)
	rs, c := sweep(t, emulate.Spec{Name: "m-net", RAM: true, Latency: &emulate.Latency{Read: lat, Write: lat, Flush: lat}}, []int{1, 4, 16, 32}, 3)
	if c.State != analysis.StateLatency {
		t.Errorf("state %q, want %q", c.State, analysis.StateLatency)
	}
	for name, code := range limitCodes(rs) {
		if code != result.CodeLatency {
			t.Errorf("%s called %q on a disk that only has latency", name, code)
		}
	}
	// The emulator's latency is the least an IO takes; a loaded machine
	// adds to it.
	if got := c.BaseLatNs; got < 4e6 || got > 40e6 {
		t.Errorf("base latency %.2f ms, want 4 ms or a little more", got/1e6)
	}
	if !strings.Contains(c.Summary(), "latency-bound up to QD32") {
		t.Errorf("summary %q", c.Summary())
	}
	consistent(t, rs, c)
}

// A throttle above the device (the cgroup caps reads at 1,500 IOPS) over
// a device with 1 ms of its own: QD1 is latency-bound near 1,000 IOPS,
// deeper queues reach the cap, and the plateau is a cap, with its level
// within 3% of the truth and the knee near 1 ms x 1,500 = 1.5.
func TestModelThrottleAboveDevice(t *testing.T) {
	const capIOPS = 1500
	lat := emulate.Fixed(time.Millisecond)
	rs, c := sweep(t, emulate.Spec{Name: "m-cg", RAM: true, Limits: emulate.Limits{ReadIOPS: capIOPS, WriteIOPS: capIOPS},
		Latency: &emulate.Latency{Read: lat, Write: lat, Flush: lat}}, []int{1, 4, 16, 32}, 4)
	if c.State != analysis.StatePlateau || c.Kind != result.CodeIOPSCap {
		t.Errorf("state %q kind %q, want a plateau at an iops-cap", c.State, c.Kind)
	}
	if c.Level > capIOPS*1.03 || c.Level < capIOPS*0.95 {
		t.Errorf("level %.0f IOPS, want %d", c.Level, capIOPS)
	}
	if c.Knee < 1 || c.Knee > 4 {
		t.Errorf("knee at QD%.1f, want about 1.5", c.Knee)
	}
	consistent(t, rs, c)
}

// A RAM-backed disk with no cap and no latency layer: nothing binds but
// the CPU (fio's, or the host's on this small machine).
func TestModelRAMDiskIsCPU(t *testing.T) {
	rs, c := sweep(t, emulate.Spec{Name: "m-ram", RAM: true}, []int{1, 8, 32, 64}, 3)
	if c.State == analysis.StatePlateau && c.Kind != result.CodeCPU {
		t.Errorf("a RAM disk's plateau called %q (%s), want cpu", c.Kind, c.Why)
	}
	for name, code := range limitCodes(rs) {
		if code == result.CodeIOPSCap || code == result.CodeBandwidthCap || code == result.CodeDevice {
			t.Errorf("%s on a RAM disk called %q", name, code)
		}
	}
	consistent(t, rs, c)
}

// A device with four internal channels, each IO 2 ms or so (log-normal,
// as service times are): QD1 is latency-bound, the device saturates near
// QD4 at about 2,000 IOPS, and past it latency grows with the queue while
// the rate varies with the service times: the device, not a cap.
func TestModelFewChannels(t *testing.T) {
	lat, err := emulate.ParseDist("p50=2ms,p99=6ms")
	if err != nil {
		t.Fatal(err)
	}
	rs, c := sweep(t, emulate.Spec{Name: "m-ch", RAM: true, Channels: 4, Latency: &emulate.Latency{Read: lat, Write: lat, Flush: lat}}, []int{1, 4, 16, 32}, 4)
	if c.State != analysis.StatePlateau || c.Kind != result.CodeDevice {
		t.Errorf("state %q kind %q (%s), want a plateau where the device saturates", c.State, c.Kind, c.Why)
	}
	// Four channels at a mean of about 2.4 ms each: at most about 1,700
	// IOPS; a loaded machine gets less, never more.
	if c.Level > 2000 {
		t.Errorf("level %.0f IOPS, more than four channels serve", c.Level)
	}
	// The knee is the base latency times the plateau: near the 4
	// channels, further out where a loaded machine slows QD1.
	if c.Knee < 2 || c.Knee > 16 {
		t.Errorf("knee at QD%.1f, want near the 4 channels", c.Knee)
	}
	consistent(t, rs, c)
}

// A throttle inside the device, as a cloud hypervisor enforces a disk's
// cap: 1,500 IOPS for reads and writes together, over a device whose IOs
// take about 0.5 ms (log-normal, as service times are). The guest's queue
// fills as with a saturated device, but the rate is paced far flatter
// than the service times would make it: a cap, at its level.
func TestModelThrottleInsideDevice(t *testing.T) {
	const capIOPS = 1500
	lat, err := emulate.ParseDist("p50=0.5ms,p99=2ms")
	if err != nil {
		t.Fatal(err)
	}
	rs, c := sweep(t, emulate.Spec{Name: "m-dev", RAM: true, ThrottleAt: emulate.ThrottleDevice, Limits: emulate.Limits{TotalIOPS: capIOPS},
		Latency: &emulate.Latency{Read: lat, Write: lat, Flush: lat}}, []int{1, 4, 16, 32}, 4)
	if c.State != analysis.StatePlateau || c.Kind != result.CodeIOPSCap {
		t.Errorf("state %q kind %q (%s), want a plateau at an iops-cap", c.State, c.Kind, c.Why)
	}
	if c.Level > capIOPS*1.03 || c.Level < capIOPS*0.95 {
		t.Errorf("level %.0f IOPS, want %d", c.Level, capIOPS)
	}
	if !strings.Contains(c.Why, "inside the device") {
		t.Errorf("why %q: the throttle sits inside the device", c.Why)
	}
	consistent(t, rs, c)
}

// A remote disk whose server saturates under deep queues, in the shape of
// issue 36's (writes 15,472 IOPS at QD64, 17,724 at QD128, 18,880 at
// QD256, latency 4.1, 7.2 then 13.5 ms from a 3.6 ms base, which was
// called "a flat IOPS cap", matched to catalog disks and given "a larger
// disk"), scaled to what the latency layer serves on two CPUs: each IO
// 3.6 ms times 1 + 1/16 of the IOs already in the device. Past the knee
// the rate still rises (+10% from QD64 to QD128, +5% to QD256, towards
// 4,400 IOPS) while the latency grows. Its service times barely vary, so
// each depth is flat to a fraction of a percent second to second, as a
// throttle's is: 6 s a depth gives the five one-second windows that
// flatness is read over, as diagnose's longer tests do. Only the rise
// from depth to depth, and a flatness no greater than the service times
// give, tell it from a cap. The truth: the device saturates, never a
// cap; the diagnosis matches no catalog disk and never says "a larger
// disk"; no depth runs faster than the emulator's server allows (3% for
// the clock's rounding).
func TestModelServerSlowsWithQueue(t *testing.T) {
	const base, growth = 3.6e-3, 1.0 / 16
	lat, err := emulate.ParseDist("3.6ms±0.15ms")
	if err != nil {
		t.Fatal(err)
	}
	rs, c := sweep(t, emulate.Spec{Name: "m-grow", RAM: true, QueueGrowth: growth, Latency: &emulate.Latency{Read: lat, Write: lat, Flush: lat}},
		[]int{1, 16, 64, 128, 256}, 6)
	if c.Kind == result.CodeIOPSCap || c.Kind == result.CodeBandwidthCap {
		t.Errorf("a device whose service slows with its queue called %q: %s", c.Kind, c.Why)
	}
	if c.State == analysis.StatePlateau && c.Kind != result.CodeDevice {
		t.Errorf("plateau called %q (%s), want device", c.Kind, c.Why)
	}
	for _, p := range c.Points {
		if most := float64(p.QD) / (base * (1 + growth*float64(p.QD-1))); p.IOPS > most*1.03 {
			t.Errorf("QD%d: %.0f IOPS, more than the device serves (%.0f)", p.QD, p.IOPS, most)
		}
	}
	for name, code := range limitCodes(rs) {
		if code == result.CodeIOPSCap || code == result.CodeBandwidthCap {
			t.Errorf("%s called %q", name, code)
		}
	}
	consistent(t, rs, c)
	noCap(t, rs)
}

// noCap checks the diagnosis of rs, as every report builds it (the
// catalog's disks and bursts matched): no catalog disk matched, and no
// "flat IOPS cap" or "a larger disk" in its verdict or advice.
func noCap(t *testing.T, rs []result.Result) {
	t.Helper()
	d := diagnosis.Saved(rs)
	all := strings.Join(append(append([]string{}, d.Verdict...), d.ToChange...), "\n")
	t.Logf("verdict:\n%s", all)
	if len(d.CatalogMatch) > 0 {
		t.Errorf("matched to catalog disks: %+v", d.CatalogMatch)
	}
	for _, bad := range []string{"a flat IOPS cap", "a larger disk"} {
		if strings.Contains(all, bad) {
			t.Errorf("the verdict says %q:\n%s", bad, all)
		}
	}
}

// A latency daemon that spends 600 µs of CPU on every IO (1 ms of latency
// besides), served on the host's own CPUs (the loop device's latency
// layer): one IO at a time keeps about a fifth of two CPUs busy, and at
// depth the daemon's threads spend every CPU the host has, so the rate is
// what the CPUs leave it, well short of what its latency alone allows
// (64 / 1.6 ms). The truth: the CPU binds, never a cap, no catalog disk
// matched. The CPU's share is read off the host's own busy figures, with
// margins: where the plateau kept the host 90% busy or more, from 65% or
// less at QD1 (the rise the IO made), the kind is cpu; a host a neighbour
// kept busy at QD1 already cannot tell whose CPU it was, and the device's
// server (the daemon) may be named instead.
func TestModelDaemonSpendsTheCPU(t *testing.T) {
	const serverCPU = 600 * time.Microsecond
	lat := emulate.Fixed(time.Millisecond)
	rs, c := sweep(t, emulate.Spec{Name: "m-cpu", RAM: true, ServerCPU: serverCPU, Latency: &emulate.Latency{Read: lat, Write: lat, Flush: lat}},
		[]int{1, 8, 32, 64}, 4)
	busy := map[int]float64{}
	for i := range rs {
		busy[rs[i].Test.IODepth] = hostBusyOf(&rs[i])
	}
	t.Logf("host busy by depth: %v; the daemon's CPU at the deepest rate: %.2f of %d CPUs", busy,
		c.Deepest().IOPS*serverCPU.Seconds(), rs[0].Host.CPUs)
	if c.State != analysis.StatePlateau {
		t.Fatalf("state %q (%s), want a plateau where the CPU binds", c.State, c.Why)
	}
	switch deep := c.Deepest(); {
	case busy[1] >= 0 && busy[1] <= 65 && busy[deep.QD] >= 90:
		if c.Kind != result.CodeCPU {
			t.Errorf("kind %q (%s): the host went from %.0f%% busy at QD1 to %.0f%% at QD%d, want cpu", c.Kind, c.Why, busy[1], busy[deep.QD], deep.QD)
		}
	case c.Kind != result.CodeCPU && c.Kind != result.CodeDevice:
		t.Errorf("kind %q (%s), want the CPU or the device's server", c.Kind, c.Why)
	default:
		t.Logf("the host was %.0f%% busy at QD1 and %.0f%% at QD%d: whose CPU binds is not told", busy[1], busy[deep.QD], deep.QD)
	}
	for name, code := range limitCodes(rs) {
		if code == result.CodeIOPSCap || code == result.CodeBandwidthCap {
			t.Errorf("%s called %q", name, code)
		}
	}
	consistent(t, rs, c)
	noCap(t, rs)
}

// hostBusyOf is the host's mean CPU busy % over r's samples (-1 unknown).
func hostBusyOf(r *result.Result) float64 {
	var sum float64
	n := 0
	for _, s := range r.System {
		if s.T > 0 && s.CPUBusyPct > 0 {
			sum += s.CPUBusyPct
			n++
		}
	}
	if n == 0 {
		return -1
	}
	return sum / float64(n)
}
