package analysis_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/emulate"
	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/realio"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
)

// The ground truth: emulated disks whose controller logs when bursts and
// stalls happen, measured with iolens's own runner, analysed as iolens
// run analyses every result. About a minute of IO in all.

func groundTruthEnv(t *testing.T) {
	t.Helper()
	realio.Real(t, emulate.Unavailable("fio"))
}

// cappedGroundTruthEnv is groundTruthEnv for a test whose figures the
// kernel's caps on measure's disk (in RAM) set, read from fio's own log:
// it runs in parallel, beside at most one other such test of any package.
// Call it first.
func cappedGroundTruthEnv(t *testing.T) {
	t.Helper()
	t.Parallel()
	realio.Capped(t, emulate.Unavailable("fio"))
}

// measure runs one test on a fresh emulated disk and returns the result
// with its findings, the controller's events, and the wall-clock instant
// of the result's t=0 (fio's measurement start).
func measure(t *testing.T, spec emulate.Spec, test result.TestSpec) (result.Result, []emulate.Event, time.Time) {
	t.Helper()
	spec.Dir = t.TempDir()
	if spec.SizeBytes == 0 {
		spec.SizeBytes = 1 << 30
	}
	// The backing file in RAM and the latency layer (even at zero
	// latency) above it: the caps, not the host's disk, set the rates.
	if spec.Latency == nil {
		spec.Latency = &emulate.Latency{}
	}
	spec.RAM = true
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
	cfg := runner.Config{Suite: result.Suite{Name: "groundtruth", Tests: []result.TestSpec{test}},
		Dir: d.Mount, Emulated: d.Name, CommandPrefix: d.CommandPrefix(), NoPrecondition: true, SizeBytes: 64 << 20}
	var res result.Result
	session := analysis.NewSession(cfg.Suite, 1)
	err = runner.Run(ctx, cfg, func(r result.Result) error {
		session.Add(&r)
		res = r
		return nil
	}, nil)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	evs, err := d.Events()
	if err != nil {
		t.Fatal(err)
	}
	out, err := fio.Decode(res.FioJSON)
	if err != nil {
		t.Fatal(err)
	}
	var rt int64
	for _, j := range out.AllJobs() {
		rt = max(rt, j.Read.Runtime, j.Write.Runtime)
	}
	origin := time.UnixMilli(out.TimestampMs - rt)
	for _, f := range res.Findings {
		t.Logf("finding [%s] %s", f.Severity, f.Summary)
	}
	var mbs []string
	for _, p := range analysis.Series(&res) {
		mbs = append(mbs, fmt.Sprintf("%.1f", p.BWBytes/1e6))
	}
	t.Logf("1 s MB/s: %s", strings.Join(mbs, " "))
	return res, evs, origin
}

func byKind(fs []result.Finding, kind string) []result.Finding {
	var out []result.Finding
	for _, f := range fs {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

func write(name, rw string, bs int64, qd int, runtime float64) result.TestSpec {
	return result.TestSpec{Name: name, RW: rw, BlockSize: bs, IODepth: qd, NumJobs: 1, Direct: true, IOEngine: "libaio", RuntimeS: runtime}
}

// TestGroundTruthCreditBurst: a gp2-style bucket, scaled 30x, lasts about
// 8 s at 1500 IOPS against a 300 IOPS baseline; the cliff's burst end
// (the cliff) matches the controller's burst-end within 10% (1.5 s at
// least).
func TestGroundTruthCreditBurst(t *testing.T) {
	groundTruthEnv(t)
	const base, burst, burstS, scale = 300, 1500, 8.0, 30
	res, evs, origin := measure(t, emulate.Spec{Name: "gt-burst", Limits: emulate.Limits{ReadIOPS: base, WriteIOPS: base},
		BurstIOPS: burst, BucketIOs: (burst - base) * burstS * scale, Scale: scale},
		write("burst", "randwrite", 4096, 16, 22))
	var end time.Time
	for _, e := range evs {
		if e.Event == emulate.EventBurstEnd && e.Resource == emulate.ResourceIOPS && e.Time.After(origin) {
			end = e.Time
			break
		}
	}
	if end.IsZero() {
		t.Fatalf("no burst-end event after the start: %+v", evs)
	}
	truth := end.Sub(origin).Seconds()
	cliffs := byKind(res.Findings, analysis.KindCliff)
	if len(cliffs) != 1 {
		t.Fatalf("want one cliff, got %d", len(cliffs))
	}
	// The burst ends when the bucket does, whatever rate the first
	// seconds ran at (a loaded machine starts slow and spends credits
	// slower): compare where the cliff is.
	got := *cliffs[0].StartS
	t.Logf("burst end: event log t=%.2f s, cliff finding t=%.2f s (ratio %.3f), burst %.2f s", truth, got, got/truth, *cliffs[0].DurationS)
	if math.Abs(got-truth) > math.Max(1.5, 0.1*truth) {
		t.Errorf("cliff at t=%.1f s, event log says the burst ended at t=%.1f s: off by more than 10%%", got, truth)
	}
	if len(byKind(res.Findings, analysis.KindStall)) != 0 {
		t.Error("stall findings on a credit cliff")
	}
	// The caps bound both rates from above; a loaded machine may run
	// below them (a slow start lowers the burst's mean).
	near := func(got, cap float64) bool { return got <= 1.1*cap && got >= 0.75*cap }
	if hi, lo := cliffs[0].Evidence["burst_rate"], cliffs[0].Evidence["plateau_rate"]; !near(hi, burst*4096) || !near(lo, base*4096) {
		t.Errorf("rates %.0f and %.0f B/s, want about %d and %d", hi, lo, burst*4096, base*4096)
	}
}

// TestGroundTruthWriteCache: a readwrite cache of 180 MB taking 80 MB/s
// in front of a 20 MB/s disk fills in about 3 s and stalls for about
// 9 s. Every stall of the event log has its finding: start within 2 s,
// duration within 20%.
func TestGroundTruthWriteCache(t *testing.T) {
	cappedGroundTruthEnv(t)
	res, evs, origin := measure(t, emulate.Spec{Name: "gt-cache", Limits: emulate.Limits{ReadBPS: 20e6, WriteBPS: 20e6},
		Cache: emulate.CacheReadWrite, CacheBPS: 80e6, CacheIOPS: 2000, CacheBytes: 180e6},
		write("cache", "write", 1<<20, 4, 28))
	rt := float64(res.Write.RuntimeMs) / 1000
	type span struct{ start, dur float64 }
	var truth []span
	for _, st := range emulate.Stalls(evs) {
		from, to := st.Start.Sub(origin).Seconds(), st.End.Sub(origin).Seconds()
		if from >= 0 && to <= rt {
			truth = append(truth, span{from, to - from})
		}
	}
	if len(truth) < 2 {
		t.Fatalf("want two complete stalls in the event log, got %+v from %+v", truth, evs)
	}
	stalls := byKind(res.Findings, analysis.KindStall)
	for _, want := range truth {
		var match *result.Finding
		for i := range stalls {
			if math.Abs(*stalls[i].StartS-want.start) <= 2 {
				match = &stalls[i]
			}
		}
		if match == nil {
			t.Errorf("stall at %.1f s for %.1f s (event log): no finding starts within 2 s", want.start, want.dur)
			continue
		}
		got := *match.DurationS
		t.Logf("stall: event log %.2f s from %.2f s; finding %.0f s from %.0f s (ratio %.3f)", want.dur, want.start, got, *match.StartS, got/want.dur)
		if math.Abs(got/want.dur-1) > 0.20 {
			t.Errorf("stall at %.1f s: %.1f s long by the event log, %.0f s by the finding", want.start, want.dur, got)
		}
		if match.Severity == analysis.SevInfo {
			t.Errorf("a throttle stall called an idle application: %s", match.Summary)
		}
	}
	// Beyond the event log's complete stalls, at most one more: a stall
	// still open when fio ended.
	if len(stalls) > len(truth)+1 {
		t.Errorf("%d stall findings for %d stalls", len(stalls), len(truth))
	}
}

// TestGroundTruthStaticCap: a plain 800 IOPS cap gives a flat series: no
// stall, no cliff.
func TestGroundTruthStaticCap(t *testing.T) {
	cappedGroundTruthEnv(t)
	res, _, _ := measure(t, emulate.Spec{Name: "gt-static", Limits: emulate.Limits{ReadIOPS: 800, WriteIOPS: 800}},
		write("static", "randwrite", 4096, 16, 10))
	if res.Write == nil || math.Abs(res.Write.IOPS/800-1) > 0.1 {
		t.Fatalf("the cap did not hold: %+v", res.Write)
	}
	for _, f := range res.Findings {
		if f.Kind == analysis.KindStall || f.Kind == analysis.KindCliff {
			t.Errorf("false alarm on a static cap: %s", f.Summary)
		}
	}
}
