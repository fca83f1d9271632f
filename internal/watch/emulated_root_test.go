package watch

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
)

// The emulator's controller logs when a write cache fills and drains and
// when burst credits run out; these tests hold watch to that log while
// plain fio, started in the background and unaware of watch, writes to
// the emulated disk. About 50 s in all, root only.

// emulatedEnv skips unless the machine can build emulated disks. The
// tests run alone (realio.Real), although their disks are capped and in
// RAM: watch reads the machine's iowait and IO pressure too, and another
// test's IO moves them (beside one, an empty bucket read as full).
func emulatedEnv(t *testing.T) {
	t.Helper()
	realio.Real(t, emulate.Unavailable("fio"))
}

// emulatedWatch is watch running in-process on an emulated disk while
// fio writes to it.
type emulatedWatch struct {
	mu   sync.Mutex
	recs []result.WatchRecord
}

func (e *emulatedWatch) records() []result.WatchRecord {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]result.WatchRecord(nil), e.recs...)
}

// runEmulated creates the disk, starts watch on its loop device, then
// fio (plain, in the disk's cgroup, writing a file on its file system),
// and keeps fio running until done says the event log holds what the
// test needs, or until timeout; watch goes on for linger after that.
// Everything is torn down when the test ends, whatever happened.
func runEmulated(t *testing.T, spec emulate.Spec, fioArgs []string, timeout time.Duration, done func([]emulate.Event) bool, linger time.Duration, ceiling *Ceiling) (*emulatedWatch, []emulate.Event) {
	t.Helper()
	spec.Dir = t.TempDir()
	spec.SizeBytes = 1 << 30
	// The backing file in RAM and the latency layer (even at zero
	// latency) above it: the caps, not the host's disk, set the rates.
	if spec.Latency == nil {
		spec.Latency = &emulate.Latency{}
	}
	spec.RAM = true
	d, err := emulate.Create(context.Background(), spec)
	if err != nil {
		t.Fatalf("emulate: %v", err)
	}
	realio.Cleanup(t, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.ForceDestroy(ctx); err != nil {
			t.Errorf("destroying the emulated disk: %v", err)
		}
	})
	e := &emulatedWatch{}
	w, err := New(Config{Devices: []string{filepath.Base(d.Device)}, Interval: time.Second, Host: "test", Ceiling: ceiling})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stopWatch := context.WithCancel(context.Background())
	watched := make(chan error, 1)
	go func() {
		watched <- w.Run(wctx, func(r result.WatchRecord) error {
			e.mu.Lock()
			e.recs = append(e.recs, r)
			e.mu.Unlock()
			return nil
		})
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			stopWatch()
			if err := <-watched; err != nil {
				t.Errorf("watch: %v", err)
			}
		}
	}
	t.Cleanup(stop)

	// An idle second or two first, so that watch's first intervals are
	// not the workload's start-up; its random length puts the events
	// anywhere between watch's ticks from one run to the next.
	time.Sleep(time.Second + time.Duration(rand.Int64N(int64(time.Second))))
	fctx, stopFio := context.WithCancel(context.Background())
	args := append([]string{"--name=w", "--filename=" + filepath.Join(d.Mount, "fio.dat"), "--direct=1", "--thread",
		"--time_based", "--runtime=" + fmt.Sprint(int(timeout.Seconds())+10), "--output=/dev/null"}, fioArgs...)
	fio := d.Command(fctx, "fio", args...)
	var fioErr strings.Builder
	fio.Stderr = &fioErr
	if err := fio.Start(); err != nil {
		stopFio()
		t.Fatal(err)
	}
	fioDone := make(chan error, 1)
	go func() { fioDone <- fio.Wait() }()
	fioEnded := false
	endFio := func() {
		if !fioEnded {
			fioEnded = true
			stopFio()
			<-fioDone
		}
	}
	// Killing fio before the disk goes; anything else left in the
	// cgroup goes with ForceDestroy.
	t.Cleanup(endFio)

	start := time.Now()
	var evs []emulate.Event
	for {
		select {
		case err := <-fioDone:
			fioEnded = true
			stopFio()
			t.Fatalf("fio ended early: %v: %s", err, fioErr.String())
		case <-time.After(250 * time.Millisecond):
		}
		if evs, err = d.Events(); err != nil {
			t.Fatal(err)
		}
		if done(evs) {
			break
		}
		if time.Since(start) > timeout {
			t.Logf("stopped waiting for the event log after %s", timeout)
			break
		}
	}
	// fio goes first: killed inside a stall, it would wait for the IO
	// the throttle holds.
	endFio()
	time.Sleep(linger)
	stop()
	return e, evs
}

// ofKind returns watch's findings of kind, in order.
func ofKind(recs []result.WatchRecord, kind string) []result.WatchRecord {
	var out []result.WatchRecord
	for _, r := range recs {
		if r.Finding != nil && r.Finding.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// logStates logs watch's rows, to see what it saw when a check fails.
func logStates(t *testing.T, recs []result.WatchRecord) {
	t.Helper()
	var rows []string
	for _, r := range recs {
		if r.Type == result.WatchTypeSample && len(r.Devices) > 0 {
			d := r.Devices[0]
			p := -1.0
			if r.IOPressurePct != nil {
				p = *r.IOPressurePct
			}
			rows = append(rows, fmt.Sprintf("%.1f:%s:%.3fMB/s:%.0fIOPS:psi%.0f:iow%.0f", r.T, d.State, (d.ReadBWBytes+d.WriteBWBytes)/1e6,
				d.ReadIOPS+d.WriteIOPS, p, r.System.IowaitPct))
		}
	}
	t.Logf("watch rows (t:state:rate:IOPS:IO pressure %%:iowait %%): %s", strings.Join(rows, " "))
}

// TestEmulatedWriteCacheStall: a readwrite cache of 160 MB taking
// 80 MB/s in front of a 20 MB/s disk fills in about 3 s and then stalls
// for about 8 s, twice in the run. For every complete stall of the event
// log, watch logs the stall's start and its end within 2 s of the
// controller's events, and places the start within 2 s.
func TestEmulatedWriteCacheStall(t *testing.T) {
	emulatedEnv(t)
	spec := emulate.Spec{Name: "watch-stall", Limits: emulate.Limits{ReadBPS: 20e6, WriteBPS: 20e6},
		Cache: emulate.CacheReadWrite, CacheBPS: 80e6, CacheIOPS: 2000, CacheBytes: 160e6}
	fio := []string{"--rw=write", "--bs=1M", "--iodepth=4", "--ioengine=libaio", "--size=256M"}
	// Two complete stalls, and fio running on after the second (the cache
	// fills again in about 3 s); watch runs on for 3 s in all after it.
	e, evs := runEmulated(t, spec, fio, 45*time.Second, func(evs []emulate.Event) bool {
		s := emulate.Stalls(evs)
		return len(s) >= 2 && time.Since(s[1].End) > 1500*time.Millisecond
	}, 1500*time.Millisecond, nil)
	recs := e.records()
	logStates(t, recs)
	if len(recs) == 0 {
		t.Fatal("watch logged nothing")
	}
	origin := recs[0].Time
	axis := func(at time.Time) float64 { return at.Sub(origin).Seconds() }
	truth := emulate.Stalls(evs)
	// The last may have ended too late for watch to see the end (timeout).
	if n := len(truth); n > 0 && axis(truth[n-1].End)+2 > recs[len(recs)-1].T {
		truth = truth[:n-1]
	}
	if len(truth) == 0 {
		t.Fatalf("no complete stall in the event log: %+v", evs)
	}
	stalls := ofKind(recs, "stall")
	for _, want := range truth {
		var start, end *result.WatchRecord
		for i := range stalls {
			f := stalls[i].Finding
			if f.Phase == "start" && math.Abs(*f.StartS-axis(want.Start)) <= 2 && start == nil {
				start = &stalls[i]
			}
		}
		if start == nil {
			t.Errorf("stall from t=%.2f to t=%.2f (event log): no stall start logged within 2 s of it", axis(want.Start), axis(want.End))
			continue
		}
		for i := range stalls {
			if f := stalls[i].Finding; f.Phase == "end" && *f.StartS == *start.Finding.StartS {
				end = &stalls[i]
			}
		}
		// watch reads the throttle the controller writes, so a tick right
		// after the change may see it at once: a record stamped a few
		// milliseconds before the event's own time stamp is that, not a
		// guess ahead of the event.
		const early = -0.1
		logged := start.Time.Sub(want.Start).Seconds()
		if logged < early || logged > 2 {
			t.Errorf("stall at t=%.2f logged at t=%.2f: %.2f s after the event, want within 2 s", axis(want.Start), start.T, logged)
		}
		if end == nil {
			t.Errorf("stall from t=%.2f to t=%.2f: no end logged", axis(want.Start), axis(want.End))
			continue
		}
		ended := end.Time.Sub(want.End).Seconds()
		if ended < early || ended > 2 {
			t.Errorf("stall ending at t=%.2f: end logged at t=%.2f, %.2f s after the event, want within 2 s", axis(want.End), end.T, ended)
		}
		t.Logf("stall: event log t=%.2f..%.2f; watch placed it at %.0f..%.0f, logged the start %.2f s and the end %.2f s after the events",
			axis(want.Start), axis(want.End), *start.Finding.StartS, *end.Finding.StartS+*end.Finding.DurationS, logged, ended)
	}
	// Nothing but these stalls and one still open when watching ended:
	// each has a start and an end record.
	if len(stalls) > 2*(len(truth)+1) {
		t.Errorf("%d stall records for %d complete stalls", len(stalls), len(truth))
		for _, r := range stalls {
			t.Logf("  %s", r.Finding.Summary)
		}
	}
}

// TestEmulatedCreditCliff: a gp2-style bucket, scaled 30x, lasts about
// 10 s at 1500 IOPS against a 300 IOPS baseline. watch places the cliff
// within 2 s of the controller's burst-end; it logs it once the lower
// plateau has held (the detector waits 5 s for that), and calls none of
// it a stall.
func TestEmulatedCreditCliff(t *testing.T) {
	emulatedEnv(t)
	const base, burst, burstS, scale = 300, 1500, 10.0, 30
	spec := emulate.Spec{Name: "watch-cliff", Limits: emulate.Limits{ReadIOPS: base, WriteIOPS: base},
		BurstIOPS: burst, BucketIOs: (burst - base) * burstS * scale, Scale: scale}
	fio := []string{"--rw=randwrite", "--bs=4k", "--iodepth=16", "--ioengine=libaio", "--size=32M"}
	var cliffAt time.Time
	e, evs := runEmulated(t, spec, fio, 35*time.Second, func(evs []emulate.Event) bool {
		for _, ev := range evs {
			if ev.Event == emulate.EventBurstEnd && ev.Resource == emulate.ResourceIOPS {
				cliffAt = ev.Time
				// The detector logs after 5 s of the lower plateau.
				return time.Since(ev.Time) > 8*time.Second
			}
		}
		return false
	}, 0, nil)
	recs := e.records()
	logStates(t, recs)
	if cliffAt.IsZero() {
		t.Fatalf("no burst-end in the event log: %+v", evs)
	}
	origin := recs[0].Time
	truth := cliffAt.Sub(origin).Seconds()
	cliffs := ofKind(recs, "cliff")
	if len(cliffs) != 1 {
		for _, r := range cliffs {
			t.Logf("  %s", r.Finding.Summary)
		}
		t.Fatalf("want one cliff, got %d; the burst ended at t=%.2f", len(cliffs), truth)
	}
	c := cliffs[0]
	if d := *c.Finding.StartS - truth; math.Abs(d) > 2 {
		t.Errorf("cliff placed at t=%.2f, the burst ended at t=%.2f (event log): %+.2f s", *c.Finding.StartS, truth, d)
	}
	t.Logf("cliff: burst ended at t=%.2f (event log); watch placed it at t=%.2f (%+.2f s) and logged it at t=%.2f, %.2f s after the event: %s",
		truth, *c.Finding.StartS, *c.Finding.StartS-truth, c.T, c.Time.Sub(cliffAt).Seconds(), c.Finding.Summary)
	for _, r := range ofKind(recs, "stall") {
		t.Errorf("a stall on a credit cliff: %s", r.Finding.Summary)
	}
}

// TestEmulatedP15AtItsCap: an emulated Azure P15 (the catalog's figures:
// 1,100 IOPS, 3,500 while its 2,400 x 1,800 IO bucket lasts), driven at
// its cap by random reads, watched with --expect azure:P15. With a full
// bucket the disk bursts at 3,500 IOPS: watch shows 100% of the ceiling
// in force and the credit draining at (rate - 1,100) / 4,320,000 of the
// bucket a second (0.056% at 3,500). With an empty bucket the disk holds
// 1,100 IOPS: 100% of its ceiling, the base rate (not 31% of the burst).
// About 3 minutes with the other real-IO tests' wait; root only.
func TestEmulatedP15AtItsCap(t *testing.T) {
	emulatedEnv(t)
	p, err := emulate.LookupProfile("azure:P15")
	if err != nil {
		t.Fatal(err)
	}
	ceiling, err := ExpectFromCatalog("azure:P15", "")
	if err != nil {
		t.Fatal(err)
	}
	ceiling.CreditStartPct = 100
	fio := []string{"--rw=randread", "--bs=4k", "--iodepth=32", "--ioengine=libaio", "--size=64M"}
	for _, tc := range []struct {
		name  string
		empty bool
		rate  float64
	}{{"bursting", false, 3500}, {"at the base", true, 1100}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := emulate.Spec{Name: "watch-p15", StartEmpty: tc.empty}
			p.Apply(&spec)
			c := *ceiling
			e, _ := runEmulated(t, spec, fio, 14*time.Second, func([]emulate.Event) bool { return false }, 0, &c)
			recs := e.records()
			logStates(t, recs)
			// The steady part: from 3 s after fio started reading.
			var ts, credit, pcts, rates []float64
			var first float64 = -1
			for _, r := range recs {
				if tc.empty && r.Type == result.WatchTypeFinding && r.Finding != nil && r.Finding.Kind == result.KindBurst {
					// Issue 39.5: nothing drains at the base rate.
					t.Errorf("at the base with an empty bucket, t=%.0f: %s", r.T, r.Finding.Summary)
				}
				if r.Type != result.WatchTypeSample || len(r.Devices) == 0 || r.Devices[0].CeilingPct == nil {
					continue
				}
				d := r.Devices[0]
				if tc.empty && d.BurstLeftS != nil && d.ReadIOPS <= burstingAbove*1100 {
					t.Errorf("t=%.0f at %.0f IOPS, the base: %.0f s of credit left, want none", r.T, d.ReadIOPS, *d.BurstLeftS)
				}
				if d.ReadIOPS < 0.5*tc.rate {
					continue
				}
				if first < 0 {
					first = r.T
				}
				if r.T < first+3 {
					continue
				}
				ts, rates = append(ts, r.T), append(rates, d.ReadIOPS)
				if math.Abs(d.ReadIOPS/tc.rate-1) <= 0.05 {
					// At the cap: the share of the ceiling it shows, and
					// the state it is in.
					pcts = append(pcts, *d.CeilingPct)
					if d.State != "at_cap" {
						t.Errorf("at %.0f IOPS of a %.0f cap: state %s, want at_cap", d.ReadIOPS, tc.rate, d.State)
					}
				}
				if d.BurstCreditPct != nil {
					credit = append(credit, *d.BurstCreditPct)
				}
			}
			if len(ts) < 6 || len(credit) != len(ts) || len(pcts) < 4 {
				t.Fatalf("%d steady samples (%d with credit, %d at the cap)", len(ts), len(credit), len(pcts))
			}
			mean := func(v []float64) float64 {
				var s float64
				for _, x := range v {
					s += x
				}
				return s / float64(len(v))
			}
			rate := mean(rates)
			if math.Abs(rate/tc.rate-1) > 0.1 {
				t.Fatalf("the disk ran at %.0f IOPS, not at its cap of %.0f", rate, tc.rate)
			}
			for _, v := range pcts {
				if math.Abs(v-100) > 5 {
					t.Errorf("%.1f%% of the ceiling at the cap, want 100%% (rows %v)", v, pcts)
				}
			}
			// The credit's slope, by least squares, against the drain the
			// bucket model gives at the rate measured.
			mt, mc := mean(ts), mean(credit)
			var sxy, sxx float64
			for i := range ts {
				sxy += (ts[i] - mt) * (credit[i] - mc)
				sxx += (ts[i] - mt) * (ts[i] - mt)
			}
			slope := sxy / sxx
			want := -math.Max(rate-1100, 0) / 4.32e6 * 100
			t.Logf("%s: %.0f IOPS, %.1f%% of the ceiling, credit %.3f%% to %.3f%%, %.5f%%/s (the model at that rate: %.5f%%/s)",
				tc.name, rate, mean(pcts), credit[0], credit[len(credit)-1], slope, want)
			if tc.empty {
				// An empty bucket gains what the disk leaves unused below
				// its base, and the emulator lets it burst for a moment
				// once it holds a second's worth: watch, seeing it fall
				// back to the base, knows the bucket is about dry.
				// Never seen bursting, the estimate is the level assumed
				// at the start, untouched.
				if last := credit[len(credit)-1]; last > 1 && math.Abs(last-100) > 1e-6 {
					t.Errorf("an empty bucket estimated at %.2f%%", last)
				}
				return
			}
			if math.Abs(slope/want-1) > 0.1 {
				t.Errorf("credit drains %.5f%%/s, want %.5f%%/s within 10%%", slope, want)
			}
		})
	}
}
