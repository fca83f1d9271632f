package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/iolens/iolens/internal/result"
)

// pt is one test of a synthetic curve: its depth, its rate, its mean
// latency, and what the machine showed meanwhile.
type pt struct {
	qd     int
	jobs   int
	iops   float64
	latNs  float64 // 0: by Little's law
	spread float64 // relative noise of the 1 s windows
	queue  float64 // device queue (aqu-sz); -1 none
	fioCPU float64 // usr+sys of the busiest job, % of a CPU
	busy   float64 // host CPU busy %
}

// curveOf builds the results of one 4 KiB random read curve.
func curveOf(pts ...pt) []*result.Result {
	var rs []*result.Result
	rng := rand.New(rand.NewPCG(1, 2))
	for i, p := range pts {
		jobs := max(p.jobs, 1)
		lat := p.latNs
		if lat == 0 {
			lat = float64(p.qd) / p.iops * 1e9
		}
		name := fmt.Sprintf("randread-4k-qd%d", p.qd)
		if jobs > 1 {
			name += fmt.Sprintf("-%djobs", jobs)
		}
		r := &result.Result{RunID: "r", Status: "ok", Index: i + 1, Repeat: 1, Target: result.Target{Kind: "dir", Path: "/x", Device: "vdb"},
			Test: result.TestSpec{Name: name, RW: "randread", BlockSize: 4096, IODepth: p.qd / jobs, NumJobs: jobs, Direct: true},
			Read: &result.DirResult{IOPS: p.iops, BWBytes: p.iops * 4096, RuntimeMs: 10000, Lat: result.Latency{N: 10000, MeanNs: lat}},
			Fio:  &result.FioInfo{Jobs: 1, CPUPct: p.fioCPU, UsrCPUPct: p.fioCPU / 2, SysCPUPct: p.fioCPU / 2}}
		h := result.Histogram{}
		h.Add(uint64(lat*0.5), 5000)
		h.Add(uint64(lat*1.5), 5000) // a service time that varies: CV 0.5
		r.Read.Hist = h
		dev := result.DeviceSeries{Device: "vdb", Role: "direct"}
		for s := 1; s <= 10; s++ {
			v := p.iops * (1 + p.spread*rng.NormFloat64())
			r.FioSeries = append(r.FioSeries, result.FioSample{T: float64(s), ReadIOPS: v, ReadBWBytes: v * 4096})
			if p.queue >= 0 {
				dev.Samples = append(dev.Samples, result.DeviceSample{T: float64(s), ReadIOPS: v, QueueSize: p.queue, UtilPct: 100,
					ReadAwaitMs: p.queue / p.iops * 1e3})
			}
			r.System = append(r.System, result.SystemSample{T: float64(s), CPUBusyPct: p.busy})
		}
		if p.queue >= 0 {
			r.Devices = []result.DeviceSeries{dev}
		}
		rs = append(rs, r)
	}
	return rs
}

func fitOne(t *testing.T, rs []*result.Result) *Curve {
	t.Helper()
	m := FitModel(rs)
	if len(m.Curves) != 1 {
		t.Fatalf("%d curves", len(m.Curves))
	}
	c := &m.Curves[0]
	t.Logf("%s", c.Summary())
	return c
}

// Each disk kind's curve, with the noise a loaded machine adds: the state
// and the kind come out of the whole curve, and every test's limit is its
// point's reading of it.
func TestModelKinds(t *testing.T) {
	for _, c := range []struct {
		name  string
		pts   []pt
		state string
		kind  string
		level float64 // 0: not checked
	}{
		{"network-like, latency-bound at every depth, one slow middle point", []pt{
			{qd: 1, iops: 347, spread: 0.02, queue: 1, fioCPU: 2, busy: 30}, {qd: 4, iops: 1000, latNs: 4e6, spread: 0.02, queue: 4, fioCPU: 3, busy: 40},
			{qd: 16, iops: 5612, spread: 0.02, queue: 16, fioCPU: 8, busy: 50}, {qd: 32, iops: 11328, spread: 0.02, queue: 31, fioCPU: 15, busy: 60},
		}, StateLatency, result.CodeLatency, 0},
		{"a few channels: saturates near QD4, latency in proportion past it", []pt{
			{qd: 1, iops: 500, spread: 0.03, queue: 1, fioCPU: 2, busy: 20}, {qd: 4, iops: 1900, spread: 0.03, queue: 4, fioCPU: 3, busy: 20},
			{qd: 16, iops: 2000, spread: 0.03, queue: 16, fioCPU: 3, busy: 20}, {qd: 32, iops: 2010, spread: 0.03, queue: 32, fioCPU: 3, busy: 20},
		}, StatePlateau, result.CodeDevice, 2000},
		{"a throttle inside the device: the guest's queue full, the rate paced", []pt{
			{qd: 1, iops: 700, spread: 0.01, queue: 1, fioCPU: 2, busy: 20}, {qd: 4, iops: 2490, spread: 0.0005, queue: 4, fioCPU: 3, busy: 20},
			{qd: 16, iops: 2490, spread: 0.0005, queue: 16, fioCPU: 3, busy: 20}, {qd: 32, iops: 2491, spread: 0.0005, queue: 31.5, fioCPU: 3, busy: 20},
		}, StatePlateau, result.CodeIOPSCap, 2490},
		{"a throttle above the device on a busy host: IO held, fio idle", []pt{
			{qd: 1, iops: 1097, spread: 0.2, queue: 0.9, fioCPU: 3, busy: 100}, {qd: 4, iops: 2496, spread: 0.05, queue: 2, fioCPU: 3, busy: 100},
			{qd: 32, iops: 2486, spread: 0.05, queue: 9, fioCPU: 3, busy: 100}, {qd: 128, iops: 2485, spread: 0.05, queue: 40, fioCPU: 2, busy: 100},
		}, StatePlateau, result.CodeIOPSCap, 2490},
		{"a RAM disk: fio's CPU spent", []pt{
			{qd: 1, iops: 33000, spread: 0.02, queue: 0.4, fioCPU: 60, busy: 70}, {qd: 8, iops: 120000, spread: 0.02, queue: 1, fioCPU: 98, busy: 100},
			{qd: 32, iops: 125000, spread: 0.02, queue: 1, fioCPU: 99, busy: 100},
		}, StatePlateau, result.CodeCPU, 0},
		{"a RAM disk with two jobs: the loop device's queue full, its worker waiting for CPU", []pt{
			{qd: 1, iops: 30000, spread: 0.02, queue: 0.5, fioCPU: 60, busy: 80}, {qd: 8, iops: 200000, spread: 0.02, queue: 7.5, fioCPU: 55, busy: 100},
			{qd: 32, iops: 210000, spread: 0.02, queue: 30, fioCPU: 60, busy: 100}, {qd: 32, jobs: 2, iops: 227000, spread: 0.02, queue: 30, fioCPU: 50, busy: 100},
		}, StatePlateau, result.CodeCPU, 0},
		{"a RAM disk beside other work: fio gets part of a CPU, the rate moves", []pt{
			{qd: 1, iops: 20000, spread: 0.1, queue: 0.4, fioCPU: 35, busy: 100}, {qd: 8, iops: 70000, spread: 0.1, queue: 1, fioCPU: 50, busy: 100},
			{qd: 16, iops: 80000, spread: 0.1, queue: 1, fioCPU: 45, busy: 100}, {qd: 32, iops: 72000, spread: 0.1, queue: 1, fioCPU: 40, busy: 100},
		}, StatePlateau, result.CodeCPU, 0},
		{"still rising past the knee", []pt{
			{qd: 1, iops: 4835, queue: 0.3, fioCPU: 5, busy: 30}, {qd: 4, iops: 8082, queue: 0.5, fioCPU: 8, busy: 30},
			{qd: 16, iops: 13641, queue: 2, fioCPU: 10, busy: 30}, {qd: 64, iops: 28045, queue: 15, fioCPU: 15, busy: 30},
		}, StateApproaching, result.CodeLatency, 0},
		{"latency-bound on a loaded machine: latency up 40%, the rate still doubling", []pt{
			{qd: 1, iops: 226, spread: 0.05, queue: 1, fioCPU: 2, busy: 100}, {qd: 4, iops: 768, spread: 0.05, queue: 3.5, fioCPU: 3, busy: 100},
			{qd: 16, iops: 2132, spread: 0.05, queue: 10.8, fioCPU: 5, busy: 100}, {qd: 32, iops: 5307, spread: 0.05, queue: 29.3, fioCPU: 8, busy: 100},
		}, StateLatency, result.CodeLatency, 0},
		{"a throttle inside the device, its knee rounded by a loaded machine", []pt{
			{qd: 1, iops: 422, spread: 0.05, queue: 0.6, fioCPU: 2, busy: 100}, {qd: 4, iops: 1015, spread: 0.05, queue: 2.7, fioCPU: 2, busy: 100},
			{qd: 16, iops: 1467, spread: 0.0005, queue: 15.4, fioCPU: 2, busy: 100}, {qd: 32, iops: 1491, spread: 0.0005, queue: 31.7, fioCPU: 2, busy: 100},
		}, StatePlateau, result.CodeIOPSCap, 1480},
		{"QD1 at a cap, QD32 slower on a loaded machine: no rise, a plateau from QD1", []pt{
			{qd: 1, iops: 2000, latNs: 499e3, spread: 0.005, queue: 0.5, fioCPU: 2, busy: 100},
			{qd: 32, iops: 1596, spread: 0.1, queue: 2.1, fioCPU: 3, busy: 100},
		}, StatePlateau, result.CodeIOPSCap, 2000},
		{"QD1 and QD32 only, a P15-like cap far past the knee", []pt{
			{qd: 1, iops: 400, spread: 0.01, queue: 1, fioCPU: 1, busy: 10}, {qd: 32, iops: 1100, spread: 0.001, queue: 31, fioCPU: 1, busy: 10},
		}, StatePlateau, result.CodeIOPSCap, 1100},
		{"a server that saturates under deep queues (issue 36): each depth flat, the level still rising", []pt{
			{qd: 1, iops: 277, spread: 0.01, queue: 1, fioCPU: 2, busy: 20}, {qd: 32, iops: 8400, latNs: 3.8e6, spread: 0.001, queue: 31.5, fioCPU: 10, busy: 40},
			{qd: 64, iops: 15472, spread: 0.001, queue: 63.5, fioCPU: 15, busy: 50}, {qd: 128, iops: 17724, spread: 0.001, queue: 127, fioCPU: 16, busy: 50},
			{qd: 256, iops: 18880, spread: 0.001, queue: 254, fioCPU: 17, busy: 50},
		}, StatePlateau, result.CodeDevice, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := curveOf(c.pts...)
			cv := fitOne(t, rs)
			if cv.State != c.state || cv.Kind != c.kind {
				t.Errorf("state %q kind %q (%s), want %q %q", cv.State, cv.Kind, cv.Why, c.state, c.kind)
			}
			if c.level > 0 && math.Abs(cv.Level-c.level) > 0.02*c.level {
				t.Errorf("level %.0f, want %.0f", cv.Level, c.level)
			}
			// The headline's curve and every test say one thing.
			for _, r := range rs {
				fs := LimitFindings(r, rs)
				_, p := (&Model{Curves: []Curve{*cv}}).Curve(r, "read")
				if len(fs) != 1 || p == nil || fs[0].Code != cv.PointCode(p) {
					t.Errorf("%s: %+v, its point says %q", r.Test.Name, fs, cv.PointCode(p))
				}
			}
		})
	}
}

// A depth that ran out of fio's CPU, run again with two jobs that give
// more: the curve takes the faster point and says the retry.
func TestModelCPURetry(t *testing.T) {
	rs := curveOf(pt{qd: 1, iops: 30000, queue: 0.3, fioCPU: 60, busy: 60}, pt{qd: 32, iops: 70000, queue: 2, fioCPU: 99, busy: 60},
		pt{qd: 32, jobs: 2, iops: 110000, queue: 4, fioCPU: 95, busy: 100})
	c := fitOne(t, rs)
	if c.CPURetry == nil || !c.CPURetry.FioWasTheLimit || c.Best().IOPS != 110000 {
		t.Fatalf("retry %+v, best %v", c.CPURetry, c.Best().IOPS)
	}
	if c.Kind != result.CodeCPU {
		t.Errorf("kind %q, want cpu: two jobs spend the host's CPU again", c.Kind)
	}
}

// The fit recovers a token bucket's sharp corner and a device queue's
// gradual knee from their curves.
func TestFitShape(t *testing.T) {
	l0, ceiling := 2e-3, 2000.0
	var sharp, smooth []pt
	for _, q := range []int{1, 2, 4, 8, 16, 32, 64} {
		x := math.Min(float64(q)/l0, ceiling)
		sharp = append(sharp, pt{qd: q, iops: x, queue: float64(q), busy: 10})
		y := float64(q) / (l0 + float64(q)/ceiling) // M/M/1-like
		smooth = append(smooth, pt{qd: q, iops: y, queue: float64(q), busy: 10})
	}
	a, b := fitOne(t, curveOf(sharp...)), fitOne(t, curveOf(smooth...))
	if math.Abs(a.Ceiling-ceiling) > 0.01*ceiling || a.Sharpness < 8 || a.Residual > 0.01 {
		t.Errorf("sharp: C %.0f, sharpness %v, residual %.3f", a.Ceiling, a.Sharpness, a.Residual)
	}
	if math.Abs(b.Ceiling-ceiling) > 0.05*ceiling || b.Sharpness > 1.5 || b.Residual > 0.02 {
		t.Errorf("gradual: C %.0f, sharpness %v, residual %.3f", b.Ceiling, b.Sharpness, b.Residual)
	}
	if math.Abs(a.Knee-4) > 0.2 {
		t.Errorf("knee at QD%.2f, want 4 (2 ms x 2,000)", a.Knee)
	}
}

// One depth slowed by a neighbour (a third of the plateau) does not pull
// the fitted ceiling down with it.
func TestFitIgnoresOneSlowDepth(t *testing.T) {
	var pts []pt
	for _, q := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		x := math.Min(float64(q)/1e-3, 5000)
		if q == 64 {
			x /= 3
		}
		pts = append(pts, pt{qd: q, iops: x, queue: float64(q), busy: 10})
	}
	c := fitOne(t, curveOf(pts...))
	if math.Abs(c.Ceiling-5000) > 0.03*5000 {
		t.Errorf("ceiling %.0f, want 5,000 whatever QD64 did", c.Ceiling)
	}
}

// Two depths five doublings apart, latency grown by half at the deeper:
// QD1 at 4 ms and QD32 at 5,048 IOPS (6.3 ms; 32 at 4 ms would give
// 8,000). The mean gain over the gap (83% a doubling) hides the bend:
// the knee is between them, not "4 ms at every depth".
func TestTwoFarDepthsWithGrownLatency(t *testing.T) {
	c := fitOne(t, curveOf(pt{qd: 1, iops: 244, latNs: 4e6, queue: 1}, pt{qd: 32, iops: 5048, queue: 32}))
	if c.State == StateLatency {
		t.Fatalf("called latency-bound with QD32's latency %.1fx QD1's", c.Deepest().Inflation)
	}
	// Adjacent depths still scaling are latency-bound, grown latency or not.
	c = fitOne(t, curveOf(pt{qd: 1, iops: 250, latNs: 4e6, queue: 1}, pt{qd: 2, iops: 420, latNs: 6e6 * 2 / 2.1, queue: 2}))
	if c.State != StateLatency {
		t.Errorf("QD1 to QD2 still scaling 68%%: %s, want latency-bound", c.State)
	}
}

// A device the host's own CPUs serve (a loop device over a daemon): its
// queue fills while the IO waits for them, and they went from a fifth
// busy at QD1 to all busy on the plateau. The CPU binds there; the same
// curve on a device of its own (a cloud volume) is the device.
func TestModelHostServedDeviceIsCPU(t *testing.T) {
	pts := []pt{{qd: 1, iops: 800, spread: 0.05, queue: 1, fioCPU: 3, busy: 20}, {qd: 8, iops: 4000, spread: 0.05, queue: 7.5, fioCPU: 12, busy: 99},
		{qd: 32, iops: 4200, spread: 0.05, queue: 31, fioCPU: 14, busy: 99}, {qd: 64, iops: 4100, spread: 0.05, queue: 62, fioCPU: 14, busy: 100}}
	for _, c := range []struct {
		dev, fs, kind string
	}{{"loop3", "ext4", result.CodeCPU}, {"vdb", "ext4", result.CodeDevice}, {"vdb", "fuse.sshfs", result.CodeCPU}, {"loopy", "ext4", result.CodeDevice}} {
		rs := curveOf(pts...)
		for _, r := range rs {
			r.Target.Device, r.Target.Filesystem = c.dev, c.fs
		}
		cv := fitOne(t, rs)
		if cv.State != StatePlateau || cv.Kind != c.kind {
			t.Errorf("%s (%s): state %q kind %q (%s), want a plateau at %q", c.dev, c.fs, cv.State, cv.Kind, cv.Why, c.kind)
		}
	}
	// Busy from the start (a neighbour's build): not the IO's doing.
	busy := append([]pt(nil), pts...)
	busy[0].busy = 97
	rs := curveOf(busy...)
	for _, r := range rs {
		r.Target.Device = "loop3"
	}
	if cv := fitOne(t, rs); cv.Kind != result.CodeDevice {
		t.Errorf("a host busy at QD1 already: kind %q (%s), want device", cv.Kind, cv.Why)
	}
}
