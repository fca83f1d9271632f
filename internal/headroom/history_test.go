package headroom_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/headroom"
	"github.com/iolens/iolens/internal/limits"
	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/promhist/promtest"
)

// fleet is a generated history of two nodes at a 15 s scrape interval,
// 480 samples (2 hours), whose every figure is set by hand:
//
//   - node-1 (azure:Standard_D4s_v3) sdb, capped at 500 IOPS: 50 IOPS of 4 KiB,
//     and 500 IOPS for intervals (200, 240]: 40 steps, 600 s at its cap;
//   - node-1 sdc, an azure:P30 (5,000 IOPS, 200 MB/s) doing 2 IOPS:
//     idle, and a cheaper disk carries it;
//   - node-1 sda, no cap given: its cap unknown;
//   - node-1 misses samples [400, 420): a gap of 21 steps;
//   - node-2 (aws:m5.large) sdb, 100 IOPS with a burst to 1,000 for 600
//     s (a bucket of 540,000 IOs): 1,000 IOPS for (100, 140] empties it
//     in exactly 40 steps, then 100 IOPS for (140, 180] at its base: 80
//     steps, 1,200 s, at its cap, the credit at 0 from sample 140;
//   - node-2 sdc and sdd, each capped at 100 MB/s, each 41 MB/s for
//     (300, 340]: 82 MB/s together, above 95% of the VM's 81.25 MB/s, so
//     the VM binds for 600 s while each volume is at 41% of its own.
type fleet struct {
	start time.Time
	step  time.Duration
	n     int
}

func (f fleet) synths() []*promtest.Synth {
	quiet := func(i int) promtest.HostRates { return promtest.HostRates{} }
	small := func(iops float64) promtest.Rates {
		return promtest.Rates{ReadIOPS: iops / 2, WriteIOPS: iops / 2, ReadBytes: iops / 2 * 4096, WriteBytes: iops / 2 * 4096,
			Util: math.Min(1, iops/1000), Queue: 1, ReadAwaitMs: 1, WriteAwaitMs: 2}
	}
	n1 := &promtest.Synth{Instance: "node-1:9100", Start: f.start, Step: f.step, N: f.n, Devices: []string{"sda", "sdb", "sdc"}, CPUs: 1,
		Host: quiet, Missing: map[int]bool{}}
	for i := 400; i < 420; i++ {
		n1.Missing[i] = true
	}
	n1.Dev = func(dev string, i int) promtest.Rates {
		switch dev {
		case "sdb":
			if i > 200 && i <= 240 {
				return small(500)
			}
			return small(50)
		case "sdc":
			return small(2)
		}
		return small(20)
	}
	n2 := &promtest.Synth{Instance: "node-2:9100", Start: f.start, Step: f.step, N: f.n, Devices: []string{"sdb", "sdc", "sdd"}, CPUs: 1, Host: quiet}
	n2.Dev = func(dev string, i int) promtest.Rates {
		switch dev {
		case "sdb":
			switch {
			case i > 100 && i <= 140:
				return small(1000)
			case i > 140 && i <= 180:
				return small(100)
			}
			return small(10)
		default:
			if i > 300 && i <= 340 {
				// 41 MB/s in 1 MiB writes.
				return promtest.Rates{WriteIOPS: 41e6 / (1 << 20), WriteBytes: 41e6, Util: 0.5, Queue: 2, WriteAwaitMs: 20}
			}
			return small(5)
		}
	}
	return []*promtest.Synth{n1, n2}
}

func (f fleet) series() []*promtest.Series {
	var out []*promtest.Series
	for _, s := range f.synths() {
		out = append(out, s.Build()...)
	}
	return append(out, f.ebs()...)
}

// ebs are the EBS CSI driver's counters, as its node plugin would have
// exported them: node-1 sdb (vol-capped) above its IOPS limit for the 40
// steps it is held there; node-2 sdc (vol-bound) above the instance's
// throughput limit for the 40 steps the VM binds, never its own.
func (f fleet) ebs() []*promtest.Series {
	var out []*promtest.Series
	mk := func(name, vol string, from, to int) {
		s := &promtest.Series{Labels: map[string]string{"__name__": name, "volume_id": vol, "instance_id": "i-0" + vol[4:], "job": "ebs-csi-node"}}
		v := 100.0 // a counter that did not start at zero
		for i := 0; i < f.n; i++ {
			if i > from && i <= to {
				v += f.step.Seconds()
			}
			s.TS, s.V = append(s.TS, f.at(i).UnixMilli()), append(s.V, v)
		}
		out = append(out, s)
	}
	for _, m := range []string{"aws_ebs_csi_exceeded_tp_seconds_total", "aws_ebs_csi_ec2_exceeded_iops_seconds_total", "aws_ebs_csi_ec2_exceeded_tp_seconds_total"} {
		mk(m, "vol-capped", 0, 0)
	}
	mk("aws_ebs_csi_exceeded_iops_seconds_total", "vol-capped", 200, 240)
	for _, m := range []string{"aws_ebs_csi_exceeded_iops_seconds_total", "aws_ebs_csi_exceeded_tp_seconds_total", "aws_ebs_csi_ec2_exceeded_iops_seconds_total"} {
		mk(m, "vol-bound", 0, 0)
	}
	mk("aws_ebs_csi_ec2_exceeded_tp_seconds_total", "vol-bound", 300, 340)
	return out
}

func (f fleet) at(i int) time.Time { return f.start.Add(time.Duration(i) * f.step) }

func (f fleet) options(t *testing.T) headroom.Options {
	t.Helper()
	cat := limits.MustDefault()
	var rules []headroom.Rule
	for _, e := range []string{"node-1:9100/sdb=iops=500,bw=100MB", "node-1:9100/sdc=azure:P30",
		"node-2:9100/sdb=iops=100,burst-iops=1000,burst-s=600", "node-2:9100/sdc=bw=100MB", "node-2:9100/sdd=bw=100MB",
		"node-3:9100/sdx=iops=100"} {
		r, err := headroom.ParseRule(e, headroom.SourceExpect, cat)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		rules = append(rules, r)
	}
	rules[0].VolumeID, rules[3].VolumeID = "vol-capped", "vol-bound"
	return headroom.Options{From: f.start, To: f.at(f.n - 1), Rules: rules, DefaultVM: "aws:m5.large",
		VMs: map[string]string{"node-1:9100": "azure:Standard_D4s_v3"}, Catalog: cat, Margin: 0.3}
}

func byName(t *testing.T, r *headroom.Report, inst, dev string) *headroom.Volume {
	t.Helper()
	for _, v := range r.Volumes {
		if v.Instance == inst && v.Device == dev {
			return v
		}
	}
	t.Fatalf("no volume %s %s in %d", inst, dev, len(r.Volumes))
	return nil
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v ± %v", what, got, want, tol)
	}
}

// checkFleet checks the report against the figures set by hand; the
// step is the resolution, so times are good to one step.
func checkFleet(t *testing.T, f fleet, r *headroom.Report) {
	t.Helper()
	if t.Failed() {
		return
	}
	var b strings.Builder
	headroom.Text(&b, r, time.UTC)
	t.Logf("report:\n%s", b.String())
	step := f.step.Seconds()
	if r.StepS != step {
		t.Errorf("step %v s, want %v", r.StepS, step)
	}

	capped := byName(t, r, "node-1:9100", "sdb")
	if capped.Status != headroom.StatusAtCap {
		t.Errorf("capped: status %s (%s)", capped.Status, capped.Why)
	}
	near(t, "capped at-cap s", capped.AtCapS, 600, step)
	near(t, "capped IOPS max", capped.IOPS.Max, 500, 5)
	near(t, "capped IOPS p50", capped.IOPS.P50, 50, 0.5)
	near(t, "capped await p50 ms", capped.AwaitMs.P50, 1.5, 0.02)
	if capped.AtCapFirst == nil || math.Abs(capped.AtCapFirst.Sub(f.at(200)).Seconds()) > step {
		t.Errorf("capped: at cap from %v, want %v", capped.AtCapFirst, f.at(200))
	}
	if r.Volumes[0] != capped && r.Volumes[0].Device != "sdb" {
		t.Errorf("worst first: %s %s first", r.Volumes[0].Instance, r.Volumes[0].Device)
	}
	if len(capped.Gaps) != 1 || math.Abs(capped.Gaps[0].From.Sub(f.at(399)).Seconds()) > 0.5 || math.Abs(capped.Gaps[0].To.Sub(f.at(420)).Seconds()) > 0.5 {
		t.Errorf("capped: gaps %v, want one from %v to %v", capped.Gaps, f.at(399), f.at(420))
	}

	if p := capped.Provider; p == nil || p.ExceededIOPSS != 600 || p.ExceededTPS != 0 || p.EC2ExceededIOPSS != 0 || !p.Agrees {
		t.Errorf("capped: the provider's counters %+v, want 600 s above its IOPS limit, agreeing", p)
	}
	if p := byName(t, r, "node-2:9100", "sdc").Provider; p == nil || p.EC2ExceededTPS != 600 || p.ExceededIOPSS != 0 || !p.Agrees {
		t.Errorf("VM-bound: the provider's counters %+v, want 600 s above the instance's throughput limit", p)
	}

	idle := byName(t, r, "node-1:9100", "sdc")
	if idle.Status != headroom.StatusIdle {
		t.Errorf("idle: status %s (%s)", idle.Status, idle.Why)
	}
	near(t, "idle IOPS p99", idle.IOPS.P99, 2, 0.02)
	// P30: 5,000 IOPS, 200 MB/s; 2 IOPS of 4 KiB are 1/2500 of the IOPS
	// cap.
	near(t, "idle cap % p99", idle.CapPct.P99, 100.0/2500, 0.001)
	if rc := idle.Rec; rc == nil || rc.Action != headroom.ActionSmaller || rc.CurrentUSD == nil || rc.ProposedUSD == nil || rc.DeltaUSD == nil ||
		*rc.DeltaUSD >= 0 || math.Abs(*rc.ProposedUSD-*rc.CurrentUSD-*rc.DeltaUSD) > 1e-9 {
		t.Errorf("idle: recommendation %+v, want smaller with a negative delta", idle.Rec)
	} else {
		d, err := limits.MustDefault().ParseDisk(rc.Proposed)
		if err != nil || d.Read.IOPS < rc.TargetIOPS || d.Read.BWBytes < rc.TargetBWBytes || d.Family.Kind != "disk" || d.Family.Provider != "azure" {
			t.Errorf("idle: proposed %s (%v) does not carry %v IOPS, %v B/s", rc.Proposed, err, rc.TargetIOPS, rc.TargetBWBytes)
		}
		near(t, "idle target IOPS", rc.TargetIOPS, 2.6, 0.03)
	}

	os := byName(t, r, "node-1:9100", "sda")
	if os.Status != headroom.StatusUnknown || os.CapPct != nil || os.Cap != nil {
		t.Errorf("no cap: status %s, cap %v, share %v", os.Status, os.Cap, os.CapPct)
	}
	near(t, "no cap IOPS p50", os.IOPS.P50, 20, 0.2)

	burst := byName(t, r, "node-2:9100", "sdb")
	near(t, "burst at-cap s", burst.AtCapS, 1200, step)
	if burst.CreditMinPct == nil || *burst.CreditMinPct != 0 || math.Abs(burst.CreditMinAt.Sub(f.at(140)).Seconds()) > step {
		t.Errorf("burst: lowest credit %v at %v, want 0 at %v", burst.CreditMinPct, burst.CreditMinAt, f.at(140))
	}

	for _, dev := range []string{"sdc", "sdd"} {
		v := byName(t, r, "node-2:9100", dev)
		near(t, dev+" VM-bound s", v.VMBoundS, 600, step)
		near(t, dev+" cap % max", v.CapPct.Max, 41, 0.5)
		if v.AtCapS != 0 {
			t.Errorf("%s: at its own cap %v s", dev, v.AtCapS)
		}
	}
	var n2 *headroom.Node
	for _, n := range r.Nodes {
		if n.Instance == "node-2:9100" {
			n2 = n
		}
	}
	if n2 == nil || n2.Binds != "VM throughput" {
		t.Fatalf("node-2: %+v", n2)
	}
	near(t, "node-2 at VM cap s", n2.AtCapS, 600, step)
	near(t, "node-2 VM MB/s", n2.VMBWBytes, 81.25e6, 1)

	gone := byName(t, r, "node-3:9100", "sdx")
	if gone.Status != headroom.StatusNoData || gone.CapPct != nil || gone.Intervals != 0 {
		t.Errorf("no series: %+v", gone)
	}
	if r.Totals.AtCap != 2 || r.Totals.NoData != 1 || r.Totals.CapUnknown != 1 || r.Totals.NodesBound != 1 {
		t.Errorf("totals %+v", r.Totals)
	}
}

// TestRealPrometheusFleet reads the fleet through a real Prometheus,
// its TSDB written by promtool as backfilling does.
func TestRealPrometheusFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts Prometheus")
	}
	if why := promtest.Unavailable(); why != "" {
		t.Skip(why)
	}
	f := fleet{start: time.Now().Add(-4 * time.Hour).Truncate(time.Minute), step: 15 * time.Second, n: 480}
	dir := filepath.Join(t.TempDir(), "data")
	promtest.Backfill(t, promtest.OpenMetrics(f.series()), dir)
	p := promtest.StartPrometheus(t, promtest.Options{DataDir: dir})
	c, err := promhist.NewClient(p.URL, promhist.Auth{}, promhist.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	o := f.options(t)
	var progress []string
	o.Progress = func(s string) { progress = append(progress, s) }
	r, err := headroom.Run(t.Context(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	checkFleet(t, f, r)
	if len(progress) == 0 {
		t.Error("no progress said")
	}
}
