package watch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/diskstats"
	"github.com/iolens/iolens/internal/result"
)

// TestReplayIsWatch: a replay fed the counters of each recorded
// sequence logs what the live watch logs from the same /proc: the same
// states and the same findings, at the same times, in the same words.
// (throttle.seq is left out: its evidence is the cgroup throttle, which
// a live watch reads beside the counters and a replay has not.)
func TestReplayIsWatch(t *testing.T) {
	for _, tc := range []struct {
		seq     string
		ceiling *Ceiling
	}{
		{"idle.seq", nil}, {"stall.seq", nil}, {"saturation.seq", nil}, {"writeback.seq", nil},
		{"cliff.seq", &Ceiling{Name: "azure:P10", IOPS: 500, BurstIOPS: 3500, BurstSeconds: 10, CreditStartPct: 100}},
		{"atcap.seq", &Ceiling{Name: "test:500", IOPS: 500}},
	} {
		t.Run(tc.seq, func(t *testing.T) {
			live, replayed := both(t, tc.seq, Config{Ceiling: tc.ceiling})
			if a, b := describe(live), describe(replayed); a != b {
				t.Errorf("live watch:\n%s\nreplay:\n%s", a, b)
			}
			if len(findings(live)) == 0 && tc.seq != "idle.seq" {
				t.Errorf("no findings: the sequence tests nothing")
			}
		})
	}
}

// describe prints the records a watch and a replay must agree on.
func describe(recs []result.WatchRecord) string {
	var b strings.Builder
	for _, r := range recs {
		switch r.Type {
		case result.WatchTypeSample:
			for _, d := range r.Devices {
				fmt.Fprintf(&b, "%g %s %s %.3f %.3f\n", r.T, d.Device, d.State, d.WriteBWBytes+d.ReadBWBytes, d.QueueSize)
			}
		case result.WatchTypeFinding:
			f := r.Finding
			fmt.Fprintf(&b, "%g %s %s %s %g: %s\n", r.T, f.Device, f.Kind, f.Phase, *f.StartS, f.Summary)
		}
	}
	return b.String()
}

// both runs a sequence through a live watch of a fixture tree and
// through a replay of the counters read from the same tree.
func both(t *testing.T, name string, cfg Config) (live, replayed []result.WatchRecord) {
	t.Helper()
	seq := readSeq(t, name)
	var devs []string
	for _, iv := range seq {
		if !contains(devs, iv.dev) {
			devs = append(devs, iv.dev)
		}
	}
	tr := newTree(t, devs...)
	cfg.ProcRoot, cfg.SysRoot, cfg.Devices, cfg.Host = tr.proc, tr.sys, devs, "fixture"
	cfg.Interval = time.Second
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := NewReplay(cfg, w.Devices())
	if err != nil {
		t.Fatal(err)
	}
	reader, err := diskstats.NewReader(tr.proc, tr.sys, devs)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := w.Start(t0); err != nil {
		t.Fatal(err)
	}
	rp.Start(t0)
	prev, err := reader.Snapshot(t0)
	if err != nil {
		t.Fatal(err)
	}
	prevPSI := tr.psiTotal
	last := 0
	for i := 0; i < len(seq); {
		n := seq[i].n
		for ; i < len(seq) && seq[i].n == n; i++ {
			iv := seq[i]
			c, d := tr.counters[iv.dev], iv.deltas
			c[0] += d[0]
			c[3] += d[1]
			c[1] += d[2]
			c[4] += d[3]
			c[2] += d[4]
			c[5] += d[5]
			c[7] += d[6]
			c[8] += d[7]
			c[6] = d[8]
			h := iv.host
			tr.cpuIowait += h[0]
			tr.cpuTotal += 100
			tr.wbkB, tr.dirty = h[1], h[2]
			tr.psiTotal += h[3]
		}
		tr.flush()
		now := t0.Add(time.Duration(n) * time.Second)
		rs, err := w.Tick(now)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, rs...)
		cur, err := reader.Snapshot(now)
		if err != nil {
			t.Fatal(err)
		}
		dt := now.Sub(prev.At)
		pressure := min(100, float64(tr.psiTotal-prevPSI)/float64(dt.Microseconds())*100)
		rs, err = rp.Step(diskstats.Diff(prev, cur), dt, pressure)
		if err != nil {
			t.Fatal(err)
		}
		replayed = append(replayed, rs...)
		prev, prevPSI, last = cur, tr.psiTotal, n
	}
	end := t0.Add(time.Duration(last) * time.Second)
	return append(live, w.Flush(end)...), append(replayed, rp.Flush(end)...)
}

func TestReplayRefuses(t *testing.T) {
	if _, err := NewReplay(Config{Interval: time.Second}, nil); err != ErrNoDevices {
		t.Errorf("no devices: %v", err)
	}
	if _, err := NewReplay(Config{}, []result.WatchDeviceInfo{{Name: "sda"}}); err == nil {
		t.Error("no interval: accepted")
	}
	rp, err := NewReplay(Config{Interval: time.Second}, []result.WatchDeviceInfo{{Name: "sda"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rp.Step(diskstats.Tick{At: time.Now()}, time.Second, -1); err == nil {
		t.Error("Step before Start: accepted")
	}
	rp.Start(time.Now())
	if _, err := rp.Step(diskstats.Tick{At: time.Now()}, 0, -1); err == nil {
		t.Error("an interval of no length: accepted")
	}
}
