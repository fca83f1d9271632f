package emulate

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/realio"
)

// The device's real-IO tests: fio against emulated disks, each figure
// checked against the truth the disk's parameters give (Little's law, the
// channels' rate, the throttle's cap, the latency mix), never against
// this machine's speed. Other work on the machine only ever adds latency,
// so the bounds allow a shortfall below the truth and almost nothing
// above it.

// fioStats is one direction of a fio job (json+): IOPS, the total latency
// (submission to completion) with its percentiles, and the completion
// latency's histogram.
type fioStats struct {
	IOPS    float64 `json:"iops"`
	TotalIO float64 `json:"total_ios"`
	Lat     struct {
		Mean       float64            `json:"mean"`
		Percentile map[string]float64 `json:"percentile"`
	} `json:"lat_ns"`
	Clat struct {
		Bins map[string]float64 `json:"bins"`
	} `json:"clat_ns"`
}

func (s fioStats) pct(p float64) float64 {
	return s.Lat.Percentile[strconv.FormatFloat(p, 'f', 6, 64)]
}

// below is the share of the histogram's IOs that completed in under ns.
func below(bins map[string]float64, ns float64) float64 {
	var under, all float64
	for k, n := range bins {
		v, err := strconv.ParseFloat(k, 64)
		if err != nil {
			continue
		}
		all += n
		if v < ns {
			under += n
		}
	}
	return under / all
}

type fioResult struct {
	Read, Write fioStats
	Sync        struct {
		Lat struct {
			Mean       float64            `json:"mean"`
			Percentile map[string]float64 `json:"percentile"`
			Bins       map[string]float64 `json:"bins"`
		} `json:"lat_ns"`
	}
	CPU float64 // usr+sys, % of one core
	// Windows are the IOs per second of each 250 ms window (reads and
	// writes together), the first and last left out.
	Windows []float64
	// Queue is the device's mean queue (diskstats time in queue / time,
	// iostat's aqu-sz) over the run: where IO waits.
	Queue float64
}

// fioJob runs fio in the disk's cgroup on file with json+ output and a
// 250 ms IOPS log.
func fioJob(t *testing.T, d *Disk, file string, args ...string) fioResult {
	t.Helper()
	logp := filepath.Join(t.TempDir(), "w")
	argv := append([]string{"--name=t", "--filename=" + file, "--direct=1", "--ioengine=libaio", "--output-format=json+",
		"--lat_percentiles=1", "--percentile_list=50:90:99", "--write_iops_log=" + logp, "--log_avg_msec=250"}, args...)
	stat := filepath.Join("/sys/block", filepath.Base(d.Device), "stat")
	q0, t0 := queueTime(t, stat), time.Now()
	out, err := d.Command(context.Background(), "fio", argv...).Output()
	q1, t1 := queueTime(t, stat), time.Now()
	if err != nil {
		t.Fatalf("fio %v: %v: %s", args, err, out)
	}
	if i := strings.IndexByte(string(out), '{'); i > 0 {
		out = out[i:]
	}
	var doc struct {
		Jobs []struct {
			Read  fioStats `json:"read"`
			Write fioStats `json:"write"`
			Sync  json.RawMessage
			Usr   float64 `json:"usr_cpu"`
			Sys   float64 `json:"sys_cpu"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Jobs) != 1 {
		t.Fatalf("fio output: %v: %.2000s", err, out)
	}
	j := doc.Jobs[0]
	r := fioResult{Read: j.Read, Write: j.Write, CPU: j.Usr + j.Sys, Queue: (q1 - q0) / float64(t1.Sub(t0).Milliseconds())}
	if len(j.Sync) > 0 {
		if err := json.Unmarshal(j.Sync, &r.Sync); err != nil {
			t.Fatal(err)
		}
	}
	// One log per direction: add them up window by window.
	win := map[int64]float64{}
	for _, dir := range []string{"_iops.1.log"} {
		b, err := os.ReadFile(logp + dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Split(line, ",")
			if len(f) < 2 {
				continue
			}
			ms, _ := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
			v, _ := strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
			win[(ms+125)/250] += v
		}
	}
	var keys []int64
	for k := range win {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
	for i := 1; i+1 < len(keys); i++ {
		r.Windows = append(r.Windows, win[keys[i]])
	}
	return r
}

// queueTime is the device's weighted time in queue (ms, field 11).
func queueTime(t *testing.T, stat string) float64 {
	t.Helper()
	b, err := os.ReadFile(stat)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) < 11 {
		t.Fatalf("%s: %q", stat, b)
	}
	v, err := strconv.ParseFloat(f[10], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// windowCV is the coefficient of variation of the 250 ms windows.
func windowCV(w []float64) float64 {
	if len(w) < 2 {
		return math.NaN()
	}
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

func randread(qd int, secs string) []string {
	return []string{"--size=32M", "--time_based", "--runtime=" + secs, "--ramp_time=1", "--rw=randread", "--bs=4k", "--iodepth=" + strconv.Itoa(qd)}
}

// TestChannels: a device of 4 channels of 2 ms serves 500 IOPS at QD1,
// 2,000 at QD4, and 2,000 at QD16, where the latency is QD / 2,000 = 4
// times QD1's. With log-normal latencies the plateau is 4 / mean latency,
// and its rate varies from window to window as the latencies drawn do.
func TestChannels(t *testing.T) {
	rootEnv(t)
	const channels, lat = 4, 2 * time.Millisecond
	d := create(t, Spec{Name: "chan", Channels: channels, Latency: &Latency{Read: Fixed(lat), Write: Fixed(lat)}})
	f := fill(t, d, "f", 32)
	plateau := channels / lat.Seconds()
	var p50 [17]float64
	for _, c := range []struct {
		qd   int
		iops float64
	}{{1, 1 / lat.Seconds()}, {4, plateau}, {16, plateau}} {
		r := fioJob(t, d, f, randread(c.qd, "3")...).Read
		p50[c.qd] = r.pct(50)
		t.Logf("QD%d: %.0f IOPS, latency mean %.3f ms p50 %.3f ms", c.qd, r.IOPS, r.Lat.Mean/1e6, p50[c.qd]/1e6)
		// The machine's other work only slows the IO: a starved fio or
		// loop worker leaves the device idle. Above, nothing gets past
		// the channels.
		between(t, "QD"+strconv.Itoa(c.qd)+" IOPS", r.IOPS, c.iops, 0.4, 0.02)
		// Little's law on the device's own figures: the latency of a
		// saturated device is QD / plateau.
		want := math.Max(float64(lat), float64(c.qd)/plateau*1e9)
		between(t, "QD"+strconv.Itoa(c.qd)+" latency p50 ns", p50[c.qd], want, 0.05, 0.25)
	}
	between(t, "QD16/QD1 latency p50", p50[16]/p50[1], 4, 0.15, 0.15)

	// The same device with a spread: 4 / mean at the plateau, and a rate
	// that varies as a renewal process's does, CV = cv(latency) /
	// sqrt(IOs per window): well above a throttle's.
	dist := Dist{Median: lat, Pct: 99, Tail: 4 * lat}
	d = create(t, Spec{Name: "chan-spread", Channels: channels, Latency: &Latency{Read: dist}})
	f = fill(t, d, "f", 32)
	r := fioJob(t, d, f, randread(16, "4")...)
	want := channels / dist.Mean().Seconds()
	between(t, "spread QD16 IOPS", r.Read.IOPS, want, 0.4, 0.03)
	s := dist.sigma()
	predicted := math.Sqrt(math.Exp(s*s)-1) / math.Sqrt(want/4)
	got := windowCV(r.Windows)
	t.Logf("spread: 250 ms windows %v: CV %.4f, renewal theory %.4f", r.Windows, got, predicted)
	// The machine's other work only adds variation; the device's own is
	// the renewal process's, far above a throttle's.
	if got < predicted/2 || got < 0.01 {
		t.Errorf("spread: window CV %.4f, want at least about %.4f (the service times' own)", got, predicted)
	}
}

// TestThrottleAtDevice: a cap of 2,500 IOPS for reads and writes
// together, enforced inside the device, paces the IO to the cap within
// 2% and flat (250 ms windows vary by under 1%) at QD32, with a latency
// of QD / 2,500 that grows with the queue depth and the queue in the
// device (aqu-sz about QD). A mixed load shares the one cap. The same cap
// in the cgroup keeps the device's queue short.
func TestThrottleAtDevice(t *testing.T) {
	// Alone: the latency layer paces the device's throttle, and the CPU
	// it gets sets how even that pace is (the windows' 1%).
	rootEnv(t)
	const cap = 2500.0
	d := create(t, Spec{Name: "thr-dev", ThrottleAt: ThrottleDevice, Limits: Limits{TotalIOPS: cap}})
	f := fill(t, d, "f", 32)
	var lat [33]float64
	for _, qd := range []int{8, 32} {
		r := fioJob(t, d, f, randread(qd, "3")...)
		lat[qd] = r.Read.Lat.Mean
		cv := windowCV(r.Windows)
		var sum float64
		for _, w := range r.Windows {
			sum += w
		}
		rate := sum / float64(len(r.Windows))
		t.Logf("QD%d: %.1f IOPS, %.1f in the inner 250 ms windows, latency mean %.3f ms, aqu-sz %.1f, windows %v (CV %.4f)",
			qd, r.Read.IOPS, rate, lat[qd]/1e6, r.Queue, r.Windows, cv)
		// fio's own IOPS take in the run's edges and any spell in which
		// the machine's other work starved fio or the loop worker; the
		// windows in between show the pacing.
		between(t, "QD"+strconv.Itoa(qd)+" IOPS", r.Read.IOPS, cap, 0.25, 0.02)
		if qd == 32 {
			between(t, "QD32 IOPS, inner windows", rate, cap, 0.02, 0.02)
			if cv > 0.01 {
				t.Errorf("QD32: 250 ms windows vary by %.2f%%, want under 1%%", cv*100)
			}
		}
		between(t, "QD"+strconv.Itoa(qd)+" latency ns", lat[qd], float64(qd)/cap*1e9, 0.05, 0.35)
		between(t, "QD"+strconv.Itoa(qd)+" device queue", r.Queue, float64(qd), 0.5, 0.05)
	}
	between(t, "QD32/QD8 latency", lat[32]/lat[8], 4, 0.2, 0.1)
	m := fioJob(t, d, f, "--size=32M", "--time_based", "--runtime=3", "--ramp_time=1", "--rw=randrw", "--bs=4k", "--iodepth=32")
	between(t, "QD32 randrw IOPS, reads and writes", m.Read.IOPS+m.Write.IOPS, cap, 0.03, 0.02)

	// The kernel's throttle above the device: the same rate, but IO waits
	// before the device, whose queue stays short.
	c := create(t, Spec{Name: "thr-cg", Limits: Limits{ReadIOPS: cap, WriteIOPS: cap}})
	f = fill(t, c, "f", 32)
	r := fioJob(t, c, f, randread(32, "3")...)
	t.Logf("cgroup QD32: %.1f IOPS, latency mean %.3f ms, aqu-sz %.2f", r.Read.IOPS, r.Read.Lat.Mean/1e6, r.Queue)
	capHolds(t, "cgroup QD32 IOPS", r.Read.IOPS, cap)
	if r.Queue > 32*0.25 {
		t.Errorf("cgroup throttle: device queue %.1f at QD32, want it short (IO waits above the device)", r.Queue)
	}
}

// TestBimodalLatency: hit/miss latencies for reads, writes and flushes
// give the mix configured: the share of IOs under the midpoint is the hit
// ratio, the percentiles on either side of it are the hit and the miss
// latency, and QD1 runs at 1 / mean.
func TestBimodalLatency(t *testing.T) {
	rootEnv(t)
	rd := Dist{Hit: time.Millisecond, Miss: 8 * time.Millisecond, HitRatio: 0.75}
	wr := Dist{Hit: 500 * time.Microsecond, Miss: 4 * time.Millisecond, HitRatio: 0.4}
	fl := Dist{Hit: time.Millisecond, Miss: 6 * time.Millisecond, HitRatio: 0.5}
	d := create(t, Spec{Name: "bimodal", Latency: &Latency{Read: rd, Write: wr, Flush: fl}})
	f := fill(t, d, "f", 32)
	check := func(what string, dist Dist, s fioStats) {
		t.Helper()
		mid := math.Sqrt(float64(dist.Hit) * float64(dist.Miss))
		share := below(s.Clat.Bins, mid)
		t.Logf("%s: %.0f IOs, %.0f IOPS, hits %.3f, p50 %.3f ms, p90 %.3f ms, p99 %.3f ms", what, s.TotalIO, s.IOPS, share,
			s.pct(50)/1e6, s.pct(90)/1e6, s.pct(99)/1e6)
		// 4 binomial sigmas of the share at this many IOs.
		if sd := math.Sqrt(dist.HitRatio * (1 - dist.HitRatio) / s.TotalIO); math.Abs(share-dist.HitRatio) > 4*sd+0.01 {
			t.Errorf("%s: %.3f of IOs under %.2f ms, want the hit ratio %.2f", what, share, mid/1e6, dist.HitRatio)
		}
		between(t, what+" QD1 IOPS", s.IOPS, 1/dist.Mean().Seconds(), 0.35, 0.03)
		for _, p := range []float64{50, 90, 99} {
			want := dist.Quantile(p / 100)
			between(t, what+" p"+strconv.Itoa(int(p))+" ns", s.pct(p), float64(want), 0.02, 0.5)
		}
	}
	r := fioJob(t, d, f, randread(1, "4")...)
	check("read", rd, r.Read)
	w := fioJob(t, d, f, "--size=32M", "--time_based", "--runtime=4", "--ramp_time=1", "--rw=randwrite", "--bs=4k", "--iodepth=1")
	check("write", wr, w.Write)
	// Overwrites of allocated blocks: each fdatasync is one flush (and
	// the write before it, at the write latency).
	s := fioJob(t, d, f, "--size=32M", "--time_based", "--runtime=4", "--rw=randwrite", "--bs=4k", "--ioengine=sync", "--fdatasync=1")
	mid := math.Sqrt(float64(fl.Hit) * float64(fl.Miss))
	share := below(s.Sync.Lat.Bins, mid)
	t.Logf("flush: hits %.3f, p50 %.3f ms, p90 %.3f ms", share, s.Sync.Lat.Percentile["50.000000"]/1e6, s.Sync.Lat.Percentile["90.000000"]/1e6)
	if math.Abs(share-fl.HitRatio) > 0.08 {
		t.Errorf("flush: %.3f of fdatasyncs under %.2f ms, want the hit ratio %.2f", share, mid/1e6, fl.HitRatio)
	}
	between(t, "flush p90 ns", s.Sync.Lat.Percentile["90.000000"], float64(fl.Miss), 0.02, 0.5)
}

// TestRAMDisk: a disk in RAM with no caps and no latency layer runs at
// memory speed: the loop device reads the tmpfs file itself, nothing
// throttles it, and it serves many times the IOPS of the same disk with
// a cap (the cap holding) and a QD1 latency far below the cap's pacing.
// What binds it is the CPU, not a disk.
func TestRAMDisk(t *testing.T) {
	rootEnv(t)
	mk := func(name string, l Limits) *Disk {
		d, err := Create(context.Background(), Spec{Name: name, Dir: t.TempDir(), SizeBytes: 512 << 20, RAM: true, Limits: l})
		if err != nil {
			t.Fatal(err)
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
	const cap = 2000.0
	ram := mk("ram", Limits{})
	if ram.LatencyMount != "" || loopBacking(ram.Device) != filepath.Join(ram.Dir, ramMountName, backingName) {
		t.Fatalf("the RAM disk's loop device is on %s, want the tmpfs file", loopBacking(ram.Device))
	}
	capped := mk("ram-capped", Limits{ReadIOPS: cap, WriteIOPS: cap})
	f := fill(t, ram, "f", 32)
	g := fill(t, capped, "f", 32)
	free1, free32 := fioJob(t, ram, f, randread(1, "3")...).Read, fioJob(t, ram, f, randread(32, "3")...)
	c32 := fioJob(t, capped, g, randread(32, "3")...).Read
	t.Logf("RAM disk: QD1 %.0f IOPS at %.1f µs; QD32 %.0f IOPS, fio CPU %.0f%%; capped QD32 %.0f IOPS", free1.IOPS, free1.Lat.Mean/1e3,
		free32.Read.IOPS, free32.CPU, c32.IOPS)
	capHolds(t, "capped QD32 IOPS", c32.IOPS, cap)
	if free32.Read.IOPS < 5*c32.IOPS {
		t.Errorf("RAM disk at QD32: %.0f IOPS, not 5 times the capped disk's %.0f", free32.Read.IOPS, c32.IOPS)
	}
	if free1.Lat.Mean > 0.5/cap*1e9 {
		t.Errorf("RAM disk at QD1: %.1f µs an IO, not memory speed (under half the cap's pacing, %.0f µs)", free1.Lat.Mean/1e3, 1/cap*1e6)
	}
}
