package headroom_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/headroom"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/promhist/promql"
	"github.com/iolens/iolens/internal/promhist/promtest"
	"github.com/iolens/iolens/internal/realio"
)

// TestEmulatedAtCap: Debian's node exporter and Prometheus (1 s scrapes)
// watch an emulated disk capped at 20 MB/s while plain fio writes to it
// for 30 s after 10 s idle. headroom, told the cap, finds the disk at its
// cap for as long as fio wrote (within the intervals fio's start and end
// fall in, and one of jitter), and nothing while it was idle.
// Root only, under a minute.
func TestEmulatedAtCap(t *testing.T) {
	t.Parallel()
	// The disk is in RAM with a cap far below the machine's: the cap,
	// not the machine, sets every figure checked.
	realio.Capped(t, emulate.Unavailable("fio"))
	if why := promtest.Unavailable(); why != "" {
		t.Skip(why)
	}
	const capBPS = 20e6
	spec := emulate.Spec{Name: "hr-cap", Dir: t.TempDir(), SizeBytes: 1 << 30, RAM: true, Latency: &emulate.Latency{},
		Limits: emulate.Limits{ReadBPS: capBPS, WriteBPS: capBPS}}
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
	dev := filepath.Base(d.Device)
	ne := promtest.StartNodeExporter(t, "^"+regexp.QuoteMeta(dev)+"$")
	p := promtest.StartPrometheus(t, promtest.Options{Targets: []string{ne.Addr}})
	from := time.Now()
	time.Sleep(10 * time.Second)

	ctx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stop()
	cmd := d.Command(ctx, "fio", "--name=w", "--filename="+filepath.Join(d.Mount, "fio.dat"), "--direct=1", "--thread", "--time_based",
		"--runtime=30", "--rw=write", "--bs=64k", "--ioengine=psync", "--numjobs=4", "--size=256M", "--output=/dev/null")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	began := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("fio: %v: %s", err, stderr.String())
	}
	ran := time.Since(began)
	time.Sleep(5 * time.Second) // the last scrapes
	to := time.Now()

	c, err := promhist.NewClient(p.URL, promhist.Auth{}, promhist.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cat := limits.MustDefault()
	rule, err := headroom.ParseRule(fmt.Sprintf("%s=bw=%dMB", dev, int(capBPS/1e6)), headroom.SourceExpect, cat)
	if err != nil {
		t.Fatal(err)
	}
	r, err := headroom.Run(context.Background(), c, headroom.Options{Selector: promql.Selector{{Name: "instance", Op: "=", Value: ne.Addr}},
		From: from, To: to, Rules: []headroom.Rule{rule}, Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	headroom.Text(&b, r, time.UTC)
	t.Logf("fio ran %.1f s (its start and end included)\n%s", ran.Seconds(), b.String())
	if len(r.Volumes) != 1 {
		t.Fatalf("%d volumes", len(r.Volumes))
	}
	v := r.Volumes[0]
	if v.Status != headroom.StatusAtCap {
		t.Errorf("status %s: %s", v.Status, v.Why)
	}
	// fio writes at the cap for its 30 s runtime. The intervals it starts
	// and ends in are partly idle, so below 95%: up to two scrape
	// intervals are not counted, and a third for scrape jitter on a
	// loaded machine; none may be counted beyond the runtime but one.
	// A scrape Prometheus missed while fio wrote (a loaded machine does
	// miss some) is time no one can judge: it counts as neither.
	missed := 0.0
	for _, g := range v.Gaps {
		lo, hi := g.From, g.To
		if lo.Before(began) {
			lo = began
		}
		if end := began.Add(ran); hi.After(end) {
			hi = end
		}
		if hi.After(lo) {
			missed += hi.Sub(lo).Seconds()
		}
	}
	if step := r.ScrapeIntervalS; v.AtCapS+missed < 30-3*step || v.AtCapS > 30+step {
		t.Errorf("at the cap %.1f s (and %.1f s without samples), fio wrote for 30 s: want from %.0f to %.0f s", v.AtCapS, missed, 30-3*step, 30+step)
	}
	if v.AtCapFirst == nil || v.AtCapFirst.Before(from.Add(9*time.Second)) {
		t.Errorf("at the cap from %v, while it was idle (from %v)", v.AtCapFirst, from)
	}
	// A scrape's time is when it began, not when the node exporter read
	// the counters: at 1 s steps one step's rate moves by a few percent,
	// and by more when a loaded machine delays a read. The median step
	// is the cap's; the highest within a quarter of it.
	if math.Abs(v.BWBytes.P50/capBPS-1) > 0.05 {
		t.Errorf("median step %.0f B/s, the cap is %.0f", v.BWBytes.P50, capBPS)
	}
	if math.Abs(v.BWBytes.Max/capBPS-1) > 0.25 {
		t.Errorf("highest step %.0f B/s, the cap is %.0f", v.BWBytes.Max, capBPS)
	}
}
