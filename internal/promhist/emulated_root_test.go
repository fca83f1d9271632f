package promhist_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/cli"
	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/promhist/promql"
	"github.com/iolens/iolens/internal/promhist/promtest"
	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
)

// These tests run Debian's node exporter and Prometheus (1 s scrapes) on
// an emulated disk while plain fio drives it through known stalls and a
// known cap, then hold 'iolens analyze --prometheus' to the emulator's
// event log. Root only, about two minutes in all.

// history is an emulated disk watched by a real node exporter and
// Prometheus.
type history struct {
	disk *emulate.Disk
	dev  string
	prom *promtest.Prometheus
	ne   *promtest.NodeExporter
}

func newHistory(t *testing.T, spec emulate.Spec) *history {
	t.Helper()
	// Alone (realio.Real), although the disk is capped and in RAM: the
	// node exporter's iowait and IO pressure are the machine's, and
	// another test's IO beside this one reads as this disk waiting.
	realio.Real(t, emulate.Unavailable("fio"))
	if why := promtest.Unavailable(); why != "" {
		t.Skip(why)
	}
	spec.Dir = t.TempDir()
	spec.SizeBytes = 1 << 30
	// The backing file in RAM and the latency layer (at zero latency)
	// above it: the caps, not the host's disk, set the rates.
	spec.RAM = true
	spec.Latency = &emulate.Latency{}
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
	h := &history{disk: d, dev: filepath.Base(d.Device)}
	h.ne = promtest.StartNodeExporter(t, "^"+regexp.QuoteMeta(h.dev)+"$")
	h.prom = promtest.StartPrometheus(t, promtest.Options{Targets: []string{h.ne.Addr}})
	return h
}

// fio runs plain fio on the disk's file system, in its cgroup, until done
// says the event log holds what the test needs (or timeout), and returns
// the event log.
func (h *history) fio(t *testing.T, args []string, timeout time.Duration, done func([]emulate.Event) bool) []emulate.Event {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	all := append([]string{"--name=w", "--filename=" + filepath.Join(h.disk.Mount, "fio.dat"), "--direct=1", "--thread",
		"--time_based", "--runtime=" + fmt.Sprint(int(timeout.Seconds())+10), "--output=/dev/null"}, args...)
	cmd := h.disk.Command(ctx, "fio", all...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	defer func() {
		stop()
		<-ended
	}()
	start := time.Now()
	for {
		select {
		case err := <-ended:
			ended <- err
			t.Fatalf("fio ended early: %v: %s", err, stderr.String())
		case <-time.After(250 * time.Millisecond):
		}
		evs, err := h.disk.Events()
		if err != nil {
			t.Fatal(err)
		}
		if done(evs) || time.Since(start) > timeout {
			return evs
		}
	}
}

// analyze runs 'iolens analyze --prometheus' on the range, as a user
// would, and reads its JSON.
func (h *history) analyze(t *testing.T, from, to time.Time) *promhist.Analysis {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := cli.NewRootCommand(cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
	cmd.SetArgs([]string{"analyze", "--prometheus", h.prom.URL, "--instance", h.ne.Addr, "--device", h.dev,
		"--from", from.UTC().Format(time.RFC3339Nano), "--to", to.UTC().Format(time.RFC3339Nano), "-o", "json"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("analyze: %v\n%s", err, errb.String())
	}
	var a promhist.Analysis
	if err := json.Unmarshal(out.Bytes(), &a); err != nil {
		t.Fatalf("analyze -o json: %v\n%s", err, out.String())
	}
	var txt strings.Builder
	promhist.Text(&txt, &a, time.UTC)
	t.Logf("analyze --prometheus %s to %s:\n%s", from.UTC().Format(time.TimeOnly), to.UTC().Format(time.TimeOnly), txt.String())
	t.Cleanup(func() {
		if t.Failed() {
			h.logRows(t, from, to)
		}
	})
	return &a
}

// logRows logs the intervals the analysis judged, to see what it saw
// when a check fails.
func (h *history) logRows(t *testing.T, from, to time.Time) {
	c, err := promhist.NewClient(h.prom.URL, promhist.Auth{}, promhist.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := promhist.Analyze(context.Background(), c, promhist.Options{Selector: promql.Selector{{Name: "instance", Op: "=", Value: h.ne.Addr}},
		Devices: []string{h.dev}, From: from, To: to})
	if err != nil {
		t.Logf("analyze again: %v", err)
		return
	}
	for _, r := range a.Results(time.UTC) {
		var rows []string
		for i, s := range r.Devices[0].Samples {
			iow := -1.0
			if i < len(r.System) {
				iow = r.System[i].IowaitPct
			}
			rows = append(rows, fmt.Sprintf("%s:%.2fMB/s:%.0fIOPS:util%.0f:q%.1f:iow%.0f", r.Start.Add(time.Duration(s.T*float64(time.Second))).UTC().Format("05.0"),
				(s.ReadBWBytes+s.WriteBWBytes)/1e6, s.ReadIOPS+s.WriteIOPS, s.UtilPct, s.QueueSize, iow))
		}
		t.Logf("intervals (end s:rate:IOPS:util %%:aqu-sz:iowait %%): %s", strings.Join(rows, " "))
	}
}

// settle waits until Prometheus has scraped past now.
func settle() { time.Sleep(2500 * time.Millisecond) }

func findings(a *promhist.Analysis, kind string) []promhist.Finding {
	var out []promhist.Finding
	for _, n := range a.Nodes {
		for _, f := range n.Findings {
			if kind == "" || f.Kind == kind {
				out = append(out, f)
			}
		}
	}
	return out
}

// TestHistoryWriteCacheStalls: a readwrite cache of 150 MB taking 40 MB/s
// in front of a 10 MB/s disk fills in about 5 s, then stalls for about
// 15 s while it drains, again and again. Each complete stall of the
// event log is found, its start within the scrape interval (1 s) and its
// duration within 20%.
func TestHistoryWriteCacheStalls(t *testing.T) {
	h := newHistory(t, emulate.Spec{Name: "prom-stall", Limits: emulate.Limits{ReadBPS: 10e6, WriteBPS: 10e6},
		Cache: emulate.CacheReadWrite, CacheBPS: 40e6, CacheIOPS: 2000, CacheBytes: 150e6})
	time.Sleep(3 * time.Second) // idle scrapes first
	from := time.Now()
	// Synchronous writes from four threads: the tasks held by the full
	// cache wait in iowait, which the node exporter reports. Requests of
	// 256 KiB: the few the throttle lets through in a second of the stall
	// stay far below a tenth of the rate before it (1 MiB ones need not).
	evs := h.fio(t, []string{"--rw=write", "--bs=256k", "--ioengine=psync", "--numjobs=4", "--size=256M"}, 60*time.Second, func(evs []emulate.Event) bool {
		s := emulate.Stalls(evs)
		return len(s) >= 2 && time.Since(s[1].End) > 2*time.Second
	})
	settle()
	to := time.Now()
	truth := emulate.Stalls(evs)
	if len(truth) < 2 {
		t.Fatalf("the event log has %d complete stalls, want 2: %+v", len(truth), evs)
	}
	a := h.analyze(t, from, to)
	stalls := findings(a, result.KindStall)
	for _, want := range truth {
		var got *promhist.Finding
		for i := range stalls {
			if stalls[i].Start.Sub(want.Start).Abs() <= time.Second {
				got = &stalls[i]
			}
		}
		wantD := want.End.Sub(want.Start)
		if got == nil {
			t.Errorf("stall %s to %s (%s, event log): none found within 1 s of its start", want.Start.Format(time.TimeOnly), want.End.Format(time.TimeOnly), wantD)
			continue
		}
		gotD := got.End.Sub(got.Start)
		if math.Abs(gotD.Seconds()-wantD.Seconds()) > 0.2*wantD.Seconds() {
			t.Errorf("stall of %s (event log) found lasting %s: more than 20%% off", wantD, gotD)
		}
		t.Logf("stall: event log %s + %.1f s; found %s + %.1f s (start %+.2f s, duration %+.0f%%)", want.Start.Format("15:04:05.000"), wantD.Seconds(),
			got.Start.Format("15:04:05.000"), gotD.Seconds(), got.Start.Sub(want.Start).Seconds(), (gotD.Seconds()/wantD.Seconds()-1)*100)
	}
	// The complete ones, and one the range may have cut.
	if len(stalls) > len(truth)+1 {
		t.Errorf("%d stalls found for %d in the event log", len(stalls), len(truth))
	}
}

// TestHistoryCap: an idle disk, then writes against a 20 MB/s cap. The
// idle stretch shows nothing; the writes show one flat write ceiling at
// 20 MB/s, within 2%, and no stall.
func TestHistoryCap(t *testing.T) {
	const capBPS = 20e6
	h := newHistory(t, emulate.Spec{Name: "prom-cap", Limits: emulate.Limits{ReadBPS: capBPS, WriteBPS: capBPS}})
	idleFrom := time.Now()
	time.Sleep(15 * time.Second)
	idleTo := time.Now()
	h.fio(t, []string{"--rw=write", "--bs=64k", "--ioengine=psync", "--numjobs=4", "--size=256M"}, 25*time.Second,
		func([]emulate.Event) bool { return false })
	settle()
	to := time.Now()

	idle := h.analyze(t, idleFrom, idleTo)
	if fs := findings(idle, ""); len(fs) > 0 || len(idle.Nodes[0].Ceilings) > 0 {
		t.Errorf("an idle disk: %d findings and %d ceilings, want none", len(fs), len(idle.Nodes[0].Ceilings))
	}
	a := h.analyze(t, idleFrom, to)
	cs := a.Nodes[0].Ceilings
	if len(cs) != 1 {
		t.Fatalf("want one ceiling, got %d: %+v", len(cs), cs)
	}
	c := cs[0]
	if c.Dir != "write" || c.Code != result.CodeBandwidthCap {
		t.Errorf("ceiling: %s %s, want a write bandwidth ceiling", c.Dir, c.Code)
	}
	if d := c.BWBytes/capBPS - 1; math.Abs(d) > 0.02 {
		t.Errorf("ceiling at %.0f B/s, the cap is %.0f: %+.1f%%, want within 2%%", c.BWBytes, capBPS, d*100)
	}
	t.Logf("ceiling %.0f B/s for a cap of %.0f (%+.2f%%), held %.0f s", c.BWBytes, capBPS, (c.BWBytes/capBPS-1)*100, c.HeldS)
	if st := findings(a, result.KindStall); len(st) > 0 {
		t.Errorf("a stall at a cap: %s", st[0].Summary)
	}
}

// TestHistorySteady: a workload of its own pace (8 MB/s, rate-limited)
// on a disk far from its cap: nothing to report.
func TestHistorySteady(t *testing.T) {
	h := newHistory(t, emulate.Spec{Name: "prom-steady", Limits: emulate.Limits{ReadBPS: 200e6, WriteBPS: 200e6}})
	time.Sleep(2 * time.Second)
	from := time.Now()
	h.fio(t, []string{"--rw=write", "--bs=64k", "--ioengine=libaio", "--iodepth=1", "--rate=8m", "--size=256M"}, 25*time.Second,
		func([]emulate.Event) bool { return false })
	settle()
	a := h.analyze(t, from, time.Now())
	for _, f := range findings(a, "") {
		if f.Device == "" {
			// The host's writeback is the whole machine's, not this disk's.
			t.Logf("host-wide: %s", f.Summary)
			continue
		}
		t.Errorf("a steady disk: %s %s", f.Kind, f.Summary)
	}
	for _, c := range a.Nodes[0].Ceilings {
		t.Errorf("a steady disk: a ceiling at %.0f B/s", c.BWBytes)
	}
}
