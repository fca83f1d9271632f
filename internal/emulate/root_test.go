package emulate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/realio"
)

// rootEnv skips unless the machine can build emulated disks: root, a
// block throttle, losetup, mkfs.ext4 and fio. It returns the throttling
// hierarchies found.
func rootEnv(t *testing.T) []Hierarchy {
	t.Helper()
	realio.Real(t, Unavailable("fio"))
	hs, _ := FindHierarchies("/proc/self/mountinfo")
	return hs
}

// cappedEnv is rootEnv for a test whose figures its disk's caps set (the
// disk in RAM, as create makes it, with no latency of its own, throttled
// by the kernel above the device, not paced by the latency layer): it runs
// in parallel, beside at most one other such test of any package
// (realio.Capped). Call it first.
func cappedEnv(t *testing.T) []Hierarchy {
	t.Helper()
	t.Parallel()
	realio.Capped(t, Unavailable("fio"))
	hs, _ := FindHierarchies("/proc/self/mountinfo")
	return hs
}

// assertGone fails for anything d left behind: loop device, mount, cgroup,
// state files, controller.
func assertGone(t *testing.T, d Disk) {
	t.Helper()
	// A loop device detached while another process has it open (a
	// scan of /dev/loop* by a test beside this one) lets go of its file
	// when that process closes it: a moment later, not never.
	backing := []string{d.Backing, filepath.Join(d.Dir, latencyMountName, latencyFileName)}
	loops := loopsFor(backing, d.Device)
	for deadline := time.Now().Add(3 * time.Second); len(loops) > 0 && time.Now().Before(deadline); loops = loopsFor(backing, d.Device) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(loops) > 0 {
		t.Errorf("loop devices left: %v", loops)
	}
	if m := mountsUnder(d.Dir); len(m) > 0 {
		t.Errorf("mounts left: %v", m)
	}
	if d.Cgroup != "" {
		if _, err := os.Stat(d.Cgroup); err == nil {
			t.Errorf("cgroup left: %s", d.Cgroup)
		}
	}
	if _, err := os.Stat(d.Dir); err == nil {
		t.Errorf("state directory left: %s", d.Dir)
	}
	if d.ControllerPID > 0 && procStart(d.ControllerPID) == d.ControllerStart {
		t.Errorf("controller %d still running", d.ControllerPID)
	}
}

func create(t *testing.T, s Spec) *Disk {
	t.Helper()
	if s.Dir == "" {
		s.Dir = t.TempDir()
	}
	if s.SizeBytes == 0 {
		s.SizeBytes = 512 << 20
	}
	// The backing file in RAM and the latency layer (even at zero
	// latency) above it: the caps, not the host's disk, set the rates the
	// tests check.
	if s.Latency == nil {
		s.Latency = &Latency{}
	}
	s.RAM = true
	d, err := Create(context.Background(), s)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	snap := *d
	realio.Cleanup(t, func() {
		if err := d.ForceDestroy(context.Background()); err != nil {
			t.Errorf("destroy: %v", err)
		}
		assertGone(t, snap)
	})
	return d
}

// fill writes a test file from outside the cgroup, so the throttle does
// not slow the setup.
func fill(t *testing.T, d *Disk, name string, mib int) string {
	t.Helper()
	p := filepath.Join(d.Mount, name)
	out, err := exec.Command("dd", "if=/dev/urandom", "of="+p, "bs=1M", fmt.Sprint("count=", mib), "oflag=direct").CombinedOutput()
	if err != nil {
		t.Fatalf("dd: %v: %s", err, out)
	}
	return p
}

type fioDir struct {
	IOPS    float64 `json:"iops"`
	BWBytes float64 `json:"bw_bytes"`
}

// fio runs fio inside the disk's cgroup and returns the job's read and
// write figures.
func runFio(t *testing.T, d *Disk, file string, args ...string) (read, write fioDir) {
	t.Helper()
	argv := append([]string{"--name=t", "--filename=" + file, "--direct=1", "--ioengine=libaio", "--output-format=json"}, args...)
	out, err := d.Command(context.Background(), "fio", argv...).Output()
	if err != nil {
		t.Fatalf("fio %v: %v: %s", args, err, out)
	}
	var doc struct {
		Jobs []struct {
			Read  fioDir `json:"read"`
			Write fioDir `json:"write"`
		} `json:"jobs"`
	}
	if i := strings.IndexByte(string(out), '{'); i > 0 {
		out = out[i:]
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Jobs) != 1 {
		t.Fatalf("fio output: %v: %s", err, out)
	}
	return doc.Jobs[0].Read, doc.Jobs[0].Write
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	between(t, what, got, want, tol, tol)
}

// between allows the measured figure to fall short of the configured one
// by below and to exceed it by above (fractions).
func between(t *testing.T, what string, got, want, below, above float64) {
	t.Helper()
	ratio := got / want
	t.Logf("%-28s configured %12.6g  measured %12.6g  ratio %.3f", what, want, got, ratio)
	if ratio < 1-below || ratio > 1+above {
		t.Errorf("%s: measured %.0f, configured %.0f: want between %.0f%% under and %.0f%% over", what, got, want, below*100, above*100)
	}
}

// capHolds checks a static cap: never more than 5% over; a loaded
// machine (other tests share the two cores and the loop driver) may fall
// up to 10% short of it in a 4 s run.
func capHolds(t *testing.T, what string, got, want float64) {
	t.Helper()
	between(t, what, got, want, 0.10, 0.05)
}

// TestStaticCaps: fio in the disk's cgroup gets the set IOPS (4 KiB
// random) and bandwidth (1 MiB sequential), never 5% over it, on each cgroup
// interface this machine has.
func TestStaticCaps(t *testing.T) {
	hs := cappedEnv(t)
	for _, v := range []CgroupMode{CgroupV1, CgroupV2} {
		t.Run(string(v), func(t *testing.T) {
			if _, err := PickHierarchy(hs, v); err != nil {
				t.Skipf("cgroup %s cannot throttle here: %v", v, err)
			}
			const iops, bps = 400, 16 << 20
			d := create(t, Spec{Name: "caps-" + string(v), Cgroup: v,
				Limits: Limits{ReadIOPS: iops, WriteIOPS: iops, ReadBPS: bps, WriteBPS: bps}})
			f := fill(t, d, "f", 64)
			common := []string{"--size=64M", "--time_based", "--runtime=4", "--ramp_time=1"}
			r, _ := runFio(t, d, f, append(common, "--rw=randread", "--bs=4k", "--iodepth=16")...)
			capHolds(t, "4k randread IOPS", r.IOPS, iops)
			_, w := runFio(t, d, f, append(common, "--rw=randwrite", "--bs=4k", "--iodepth=16")...)
			capHolds(t, "4k randwrite IOPS", w.IOPS, iops)
			r, _ = runFio(t, d, f, append(common, "--rw=read", "--bs=1M", "--iodepth=4")...)
			capHolds(t, "1M read B/s", r.BWBytes, bps)
			_, w = runFio(t, d, f, append(common, "--rw=write", "--bs=1M", "--iodepth=4")...)
			capHolds(t, "1M write B/s", w.BWBytes, bps)
		})
	}
}

// sampler reads the loop device's counters every 100 ms.
type sampler struct {
	mu   sync.Mutex
	t    []time.Time
	c    []counters
	stop chan struct{}
	done chan struct{}
}

func sample(t *testing.T, d *Disk) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	path := filepath.Join("/sys/block", filepath.Base(d.Device), "stat")
	go func() {
		defer close(s.done)
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			b, err := os.ReadFile(path)
			if err == nil {
				if c, err := parseStat(string(b)); err == nil {
					s.mu.Lock()
					s.t, s.c = append(s.t, time.Now()), append(s.c, c)
					s.mu.Unlock()
				}
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

// rate is the IOs (or bytes) per second over [from, to], interpolated
// from the samples; f picks the counter.
func (s *sampler) rate(from, to time.Time, f func(Usage) float64) float64 {
	at := func(x time.Time) float64 {
		i := 0
		for i < len(s.t)-1 && s.t[i+1].Before(x) {
			i++
		}
		if i == len(s.t)-1 {
			return f(usageBetween(s.c[0], s.c[i]))
		}
		a, b := f(usageBetween(s.c[0], s.c[i])), f(usageBetween(s.c[0], s.c[i+1]))
		fr := x.Sub(s.t[i]).Seconds() / s.t[i+1].Sub(s.t[i]).Seconds()
		return a + (b-a)*math.Max(0, math.Min(1, fr))
	}
	return (at(to) - at(from)) / to.Sub(from).Seconds()
}

// firstIO is when the first IO after since shows in the counters.
func (s *sampler) firstIO(since time.Time, f func(Usage) float64) time.Time {
	for i := 1; i < len(s.t); i++ {
		if s.t[i].After(since) && f(usageBetween(s.c[i-1], s.c[i])) > 0 {
			return s.t[i-1]
		}
	}
	return time.Time{}
}

func reads(u Usage) float64       { return u.ReadIOs }
func writeBytes(u Usage) float64  { return u.WriteBytes }
func secs(a, b time.Time) float64 { return b.Sub(a).Seconds() }

// TestCreditBurstTiming: at a scaled bucket the rate drops from burst to
// baseline when the model says, within 10%.
func TestCreditBurstTiming(t *testing.T) {
	cappedEnv(t)
	const base, burst, burstS = 200, 1000, 8.0
	d := create(t, Spec{Name: "burst", Limits: Limits{ReadIOPS: base, WriteIOPS: base},
		BurstIOPS: burst, BucketIOs: (burst - base) * burstS * 30, Scale: 30})
	m := NewModel(d.Spec, time.Now())
	predicted := m.BurstSeconds(ResourceIOPS)
	if predicted != burstS {
		t.Fatalf("model predicts %v s, want %v", predicted, burstS)
	}
	f := fill(t, d, "f", 32)
	time.Sleep(300 * time.Millisecond)
	s := sample(t, d)
	t0 := time.Now()
	runFio(t, d, f, "--size=32M", "--time_based", "--runtime=13", "--rw=randread", "--bs=4k", "--iodepth=16")
	s.end()
	start := s.firstIO(t0, reads)
	// The drop: the first moment the rate over the next 0.5 s falls
	// below halfway between burst and baseline.
	var drop time.Time
	for x := start.Add(time.Second); x.Before(s.t[len(s.t)-1].Add(-time.Second)); x = x.Add(50 * time.Millisecond) {
		if s.rate(x, x.Add(500*time.Millisecond), reads) < (base+burst)/2 {
			drop = x.Add(250 * time.Millisecond)
			break
		}
	}
	if drop.IsZero() {
		t.Fatal("the rate never dropped to the baseline")
	}
	within(t, "burst length s (measured)", secs(start, drop), predicted, 0.10)
	capHolds(t, "burst rate IOPS", s.rate(start.Add(time.Second), start.Add(time.Duration(burstS-1)*time.Second), reads), burst)
	capHolds(t, "baseline IOPS", s.rate(drop.Add(time.Second), drop.Add(3*time.Second), reads), base)
	evs, err := d.Events()
	if err != nil {
		t.Fatal(err)
	}
	var end time.Time
	for _, e := range evs {
		if e.Event == EventBurstEnd && e.Resource == ResourceIOPS {
			end = e.Time
			break
		}
	}
	if end.IsZero() {
		t.Fatalf("no burst-end event: %+v", evs)
	}
	within(t, "burst length s (event log)", secs(start, end), predicted, 0.10)
	if math.Abs(secs(end, drop)) > 0.5 {
		t.Errorf("rate dropped %.2f s from the burst-end event", secs(end, drop))
	}
}

// TestWriteCacheStall: a sustained write shows bursts and troughs near 0
// in the 1 s series, and the troughs line up with the event log.
func TestWriteCacheStall(t *testing.T) {
	cappedEnv(t)
	const drain, cacheBPS, cacheBytes = 20e6, 80e6, 90e6
	d := create(t, Spec{Name: "stall", Limits: Limits{ReadBPS: drain, WriteBPS: drain},
		Cache: CacheReadWrite, CacheBPS: cacheBPS, CacheIOPS: 2000, CacheBytes: cacheBytes})
	// The file's own writes go through the emulated cache too: let them
	// drain before the test starts.
	f := fill(t, d, "f", 16)
	time.Sleep(time.Duration((16<<20)/drain*float64(time.Second)) + 300*time.Millisecond)
	s := sample(t, d)
	t0 := time.Now()
	runFio(t, d, f, "--size=16M", "--time_based", "--runtime=14", "--rw=write", "--bs=1M", "--iodepth=4")
	s.end()
	start := s.firstIO(t0, writeBytes)
	evs, err := d.Events()
	if err != nil {
		t.Fatal(err)
	}
	var stalls [][2]time.Time
	for _, e := range evs {
		switch e.Event {
		case EventStallStart:
			stalls = append(stalls, [2]time.Time{e.Time})
		case EventStallEnd:
			if n := len(stalls); n > 0 {
				stalls[n-1][1] = e.Time
			}
		}
	}
	if len(stalls) < 2 || stalls[0][1].IsZero() {
		t.Fatalf("want two stalls, the first ended: %+v", evs)
	}
	fillS := cacheBytes / (cacheBPS - drain)
	within(t, "time to first stall s", secs(start, stalls[0][0]), fillS, 0.25)
	// The 1 s series, from the first IO.
	var series []float64
	for x := start; x.Add(time.Second).Before(s.t[len(s.t)-1]); x = x.Add(time.Second) {
		series = append(series, s.rate(x, x.Add(time.Second), writeBytes))
	}
	t.Logf("1 s write MB/s: %.1f", scaleAll(series, 1e-6))
	low, high := 0.05*cacheBPS, 0.5*cacheBPS
	var sawHigh, sawLow bool
	for i, v := range series {
		sec := start.Add(time.Duration(i) * time.Second)
		in := inStall(stalls, sec, sec.Add(time.Second))
		switch {
		case in == 1 && v > low:
			t.Errorf("second %d lies in a stall but moved %.1f MB/s", i, v/1e6)
		case in == 0 && v < high:
			t.Errorf("second %d has no stall but moved only %.1f MB/s", i, v/1e6)
		}
		sawHigh = sawHigh || v > high
		sawLow = sawLow || v < low
	}
	if !sawHigh || !sawLow {
		t.Errorf("no burst/trough pattern in %v", series)
	}
	// Each trough starts within 1 s of its stall-start, ends within 1 s
	// of its stall-end.
	for _, st := range stalls {
		if st[1].IsZero() {
			continue
		}
		if r := s.rate(st[0].Add(time.Second), st[1].Add(-time.Second), writeBytes); r > low {
			t.Errorf("stall %v-%v: %.1f MB/s inside, want near 0", st[0], st[1], r/1e6)
		}
		if r := s.rate(st[1], st[1].Add(time.Second), writeBytes); r < high/2 && st[1].Add(time.Second).Before(s.t[len(s.t)-1]) {
			t.Errorf("the second after stall-end %v moved only %.1f MB/s", st[1], r/1e6)
		}
	}
}

func scaleAll(v []float64, f float64) []float64 {
	out := make([]float64, len(v))
	for i := range v {
		out[i] = math.Round(v[i]*f*10) / 10
	}
	return out
}

// inStall says whether [a, b] lies wholly in a stall (1), wholly outside
// every stall (0), or straddles an edge (-1).
func inStall(stalls [][2]time.Time, a, b time.Time) int {
	for _, s := range stalls {
		e := s[1]
		if e.IsZero() {
			e = b.Add(time.Hour)
		}
		switch {
		case !a.Before(s[0]) && !b.After(e):
			return 1
		case a.Before(e) && b.After(s[0]):
			return -1
		}
	}
	return 0
}

// TestCreateCleansUpOnFailure: a failure or a cancel at any step of
// create leaves nothing behind.
func TestCreateCleansUpOnFailure(t *testing.T) {
	cappedEnv(t)
	root := t.TempDir()
	injected := errors.New("injected")
	for _, step := range []string{"state", "backing", "latency", "loop", "mkfs", "mount", "cgroup", "controller", "done"} {
		for _, how := range []string{"fail", "cancel"} {
			ctx, cancel := context.WithCancel(context.Background())
			var seen Disk
			spec := Spec{Name: "fail-" + step, Dir: root, SizeBytes: 128 << 20, Limits: Limits{ReadIOPS: 100, WriteIOPS: 100},
				BurstIOPS: 200, BurstSeconds: 1, Latency: &Latency{Write: Fixed(time.Millisecond)}}
			spec.hook = func(s string) error {
				if s != step {
					return nil
				}
				if b, err := os.ReadFile(filepath.Join(root, spec.Name, stateName)); err == nil {
					_ = json.Unmarshal(b, &seen)
				}
				if how == "cancel" {
					cancel() // as Ctrl-C does through signal.NotifyContext
					return nil
				}
				return injected
			}
			d, err := Create(ctx, spec)
			cancel()
			want := injected
			if how == "cancel" {
				want = context.Canceled
			}
			if d != nil || !errors.Is(err, want) {
				t.Errorf("%s at %s: disk %v, error %v", how, step, d != nil, err)
			}
			if seen.Dir == "" {
				seen = Disk{Dir: filepath.Join(root, spec.Name), Backing: filepath.Join(root, spec.Name, backingName)}
			}
			assertGone(t, seen)
		}
	}
	if ents, _ := os.ReadDir(root); len(ents) > 0 {
		t.Errorf("state root not empty: %v", ents)
	}
}

// TestDestroyRefusesBusyDisk: processes in the cgroup keep the disk,
// unless forced.
func TestDestroyRefusesBusyDisk(t *testing.T) {
	cappedEnv(t)
	d, err := Create(context.Background(), Spec{Name: "busy", Dir: t.TempDir(), SizeBytes: 128 << 20, Limits: Limits{ReadIOPS: 100}})
	if err != nil {
		t.Fatal(err)
	}
	snap := *d
	cmd := d.Command(context.Background(), "sleep", "60")
	cmd.Dir = d.Mount
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for st := d.Status(); len(st.Procs) == 0; st = d.Status() {
		if time.Now().After(deadline) {
			t.Fatal("sleep never showed up in the cgroup")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var busy *BusyError
	if err := d.Destroy(context.Background()); !errors.As(err, &busy) || len(busy.PIDs) != 1 {
		t.Fatalf("destroy of a busy disk: %v", err)
	}
	if st := d.Status(); len(st.Broken) > 0 {
		t.Errorf("a refused destroy broke the disk: %v", st.Broken)
	}
	if err := d.ForceDestroy(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertGone(t, snap)
	// Idempotent.
	if err := d.Destroy(context.Background()); err != nil {
		t.Errorf("second destroy: %v", err)
	}
}

// TestRemoveAllAfterLostState: a disk whose state file is gone (deleted
// by hand, a broken disk) is not taken by RemoveAll, which names it; rm by
// name still tears it down whole: mount, loop device and cgroup, found by
// their derived names.
func TestRemoveAllAfterLostState(t *testing.T) {
	cappedEnv(t)
	root := t.TempDir()
	d, err := Create(context.Background(), Spec{Name: "lost", Dir: root, SizeBytes: 128 << 20, Limits: Limits{WriteIOPS: 50}})
	if err != nil {
		t.Fatal(err)
	}
	snap := *d
	if err := os.Remove(filepath.Join(d.Dir, stateName)); err != nil {
		t.Fatal(err)
	}
	d.inproc.cancel() // as if its controller had died too
	<-d.inproc.done
	removed, err := RemoveAll(context.Background(), root, false)
	if err == nil || len(removed) != 0 || !strings.Contains(err.Error(), "lost") {
		t.Errorf("RemoveAll: %v %v; want it refused, naming the disk", removed, err)
	}
	byName, err := OpenIn(root, "lost")
	if err != nil {
		t.Fatal(err)
	}
	if err := byName.Destroy(context.Background()); err != nil {
		t.Fatalf("rm by name: %v", err)
	}
	assertGone(t, snap)
}

// fioLat is one direction of a fio job: IOPS and the total latency
// (submission to completion: io_submit may itself wait for the IO, which
// fio's clat leaves out).
type fioLat struct {
	IOPS float64 `json:"iops"`
	Clat struct {
		Min        float64            `json:"min"`
		Percentile map[string]float64 `json:"percentile"`
	} `json:"lat_ns"`
}

// runFioLat is runFio returning latency figures too, and fdatasync's.
func runFioLat(t *testing.T, d *Disk, file string, args ...string) (read, write, sync fioLat) {
	t.Helper()
	argv := append([]string{"--name=t", "--filename=" + file, "--direct=1", "--output-format=json", "--lat_percentiles=1"}, args...)
	out, err := d.Command(context.Background(), "fio", argv...).Output()
	if err != nil {
		t.Fatalf("fio %v: %v: %s", args, err, out)
	}
	var doc struct {
		Jobs []struct {
			Read  fioLat `json:"read"`
			Write fioLat `json:"write"`
			Sync  struct {
				Lat struct {
					Min        float64            `json:"min"`
					Percentile map[string]float64 `json:"percentile"`
				} `json:"lat_ns"`
			} `json:"sync"`
		} `json:"jobs"`
	}
	if i := strings.IndexByte(string(out), '{'); i > 0 {
		out = out[i:]
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Jobs) != 1 {
		t.Fatalf("fio output: %v: %s", err, out)
	}
	j := doc.Jobs[0]
	sync.Clat.Min, sync.Clat.Percentile = j.Sync.Lat.Min, j.Sync.Lat.Percentile
	return j.Read, j.Write, sync
}

// TestLatency: with a 2 ms read and write latency and a 5,000 IOPS cap,
// no IO completes sooner than 2 ms, QD1 runs at about 1/(2 ms) and the
// median stays near 2 ms, QD32 still reaches the cap (the latency does
// not serialise IO), and an fdatasync takes the flush latency.
func TestLatency(t *testing.T) {
	rootEnv(t)
	const lat, flush, iops = 2 * time.Millisecond, 5 * time.Millisecond, 5000
	d := create(t, Spec{Name: "lat", Limits: Limits{ReadIOPS: iops, WriteIOPS: iops},
		Latency: &Latency{Read: Fixed(lat), Write: Fixed(lat), Flush: Fixed(flush)}})
	if !isMountPoint(d.LatencyMount) || loopBacking(d.Device) != filepath.Join(d.LatencyMount, latencyFileName) {
		t.Fatalf("the loop device is not on the latency layer: %s on %s", d.Device, loopBacking(d.Device))
	}
	f := fill(t, d, "f", 32)
	common := []string{"--size=32M", "--time_based", "--runtime=3", "--bs=4k", "--ioengine=libaio"}
	r, _, _ := runFioLat(t, d, f, append(common, "--rw=randread", "--iodepth=1")...)
	p50 := r.Clat.Percentile["50.000000"]
	t.Logf("QD1 randread: %.0f IOPS, clat min %.3f ms, p50 %.3f ms, p99 %.3f ms", r.IOPS, r.Clat.Min/1e6, p50/1e6, r.Clat.Percentile["99.000000"]/1e6)
	if r.Clat.Min < float64(lat) {
		t.Errorf("a read completed in %.3f ms, under the configured %v", r.Clat.Min/1e6, lat)
	}
	// A loaded machine adds to the latency, never takes from it.
	between(t, "QD1 read p50 ns", p50, float64(lat), 0, 0.5)
	between(t, "QD1 read IOPS", r.IOPS, float64(time.Second/lat), 0.5, 0.02)
	_, w, _ := runFioLat(t, d, f, append(common, "--rw=randwrite", "--iodepth=1")...)
	if w.Clat.Min < float64(lat) {
		t.Errorf("a write completed in %.3f ms, under the configured %v", w.Clat.Min/1e6, lat)
	}
	r, _, _ = runFioLat(t, d, f, append(common, "--rw=randread", "--iodepth=32")...)
	capHolds(t, "QD32 read IOPS", r.IOPS, iops)
	_, _, s := runFioLat(t, d, filepath.Join(d.Mount, "wal"), "--size=1M", "--time_based", "--runtime=2", "--bs=4k",
		"--rw=write", "--ioengine=sync", "--fdatasync=1", "--direct=0", "--lat_percentiles=1")
	t.Logf("fdatasync: min %.3f ms, p50 %.3f ms", s.Clat.Min/1e6, s.Clat.Percentile["50.000000"]/1e6)
	if s.Clat.Min < float64(flush) {
		t.Errorf("an fdatasync took %.3f ms, under the flush latency %v", s.Clat.Min/1e6, flush)
	}
}
