// Package diagnosis turns a run's results into the answer a user came for:
// a model of the disk (what it delivers per direction and which limit
// binds each figure, its QD1 latency and knee, fsync and the etcd verdict,
// burst and stalls), the limit of every test, the catalog disks whose
// published limits fit, and a verdict in a few lines. It only reads the
// findings the analysis attached to the results, so the verdict can never
// contradict them. Build is pure: results in, a Diagnosis out; Of adds
// the catalog's disks that fit. An Outcome holds a run's results with the
// diagnosis of each run and target among them, built once, by the run's
// pipeline or by Replay of saved results; every report reads it.
package diagnosis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// schema names the version of the diagnosis object.
const schema = "iolens.diagnosis/v1"

// Diagnosis is the disk model and its verdict.
type Diagnosis struct {
	Schema string `json:"schema"`
	RunID  string `json:"run_id"`
	// Target is what was measured (the first result's).
	Target result.Target `json:"target"`
	// Verdict is the answer in a few lines (five at most, and one more
	// when the run was interrupted), first in every report.
	Verdict []string `json:"verdict"`
	// IOErrors are the tests that failed with an IO error (nil when none
	// did): the verdict's first line says them.
	IOErrors *IOErrors `json:"io_errors"`
	// ToChange is Advice: what to change, one short line per thing.
	ToChange []string `json:"to_change"`
	Disk     Disk     `json:"disk"`
	// Curves is the disk model: IOPS and latency against queue depth,
	// per direction and IO shape, as fitted over the run.
	Curves []Curve `json:"curves"`
	// Interrupted: the run was stopped before its plan ended; the
	// figures are partial and no catalog disk is matched.
	Interrupted bool `json:"interrupted"`
	// Status is what became of the run, as the history lists it.
	Status result.RunStatus `json:"status"`
	// Limits names the binding limit of every test and direction.
	Limits []Limit `json:"limits"`
	// CatalogMatch lists the catalog disks (and VM sizes) whose published
	// limits fit the measured ceilings, nearest first.
	CatalogMatch []Match `json:"catalog_match"`
	// Expected is the disk the results were compared with, and where that
	// came from (--expect, a storage class, cloud metadata); nil if none.
	Expected *Expected `json:"expected"`
	// Unknown says what the run could not establish, and why.
	Unknown []string `json:"not_established"`
	// Results are the full records (diagnose -o json only).
	Results []result.Result `json:"results,omitempty"`
}

// Disk is what the disk delivers.
type Disk struct {
	Read   *Direction `json:"read"`
	Write  *Direction `json:"write"`
	Fsync  *Fsync     `json:"fsync"`
	Burst  *Burst     `json:"burst"`
	Stalls []Stall    `json:"stalls"`
	// AtBurst: the flat levels measured are a catalog disk's burst
	// rates, not what it holds (nil when none fits): the expected disk's,
	// or the nearest; AtBurstAlso the other disks with those burst rates
	// (none when the expected disk is the one).
	AtBurst     *BurstMatch `json:"at_burst"`
	AtBurstAlso []string    `json:"at_burst_also,omitempty"`
}

// BurstMatch is a catalog disk whose burst rates fit the flat levels
// measured: while its credits last it runs at BurstIOPS and
// BurstBWBytes, once they are gone at BaseIOPS and BaseBWBytes.
type BurstMatch struct {
	Disk         string  `json:"disk"`
	BurstIOPS    float64 `json:"burst_iops"`
	BurstBWBytes float64 `json:"burst_bw_bytes"`
	BaseIOPS     float64 `json:"base_iops"`
	BaseBWBytes  float64 `json:"base_bw_bytes"`
	// BucketIOs and BucketBytes are the credit buckets' sizes (0: none
	// of that kind); LastsS how long a full bucket lasts at the rate
	// measured (0: unknown).
	BucketIOs   float64 `json:"bucket_ios"`
	BucketBytes float64 `json:"bucket_bytes"`
	LastsS      float64 `json:"lasts_s"`
	// Distance is the largest relative gap between a measured level and
	// the burst rate (0.05 = 5%).
	Distance float64 `json:"distance"`
}

// BurstMatcher finds catalog disks whose burst rates fit measured flat
// levels (0 when a figure is not flat); the limits package provides it.
type BurstMatcher func(iops, bwBytes float64) []BurstMatch

// Direction is one direction's ceilings and what binds them, read off the
// disk model's curves (a small-block and a large-block curve).
type Direction struct {
	// IOPS is the small-block figure: the curve's ceiling when it reached
	// its plateau, else the most it measured (at IOPSQD). IOPSLimit is
	// the code of the limit that binds it (result.CodeIOPSCap...),
	// IOPSTest the test, IOPSLow..IOPSHigh the interval of the rate, and
	// IOPSState the curve's state (result.StatePlateau...).
	IOPS      float64 `json:"iops"`
	IOPSLimit string  `json:"iops_limit"`
	IOPSTest  string  `json:"iops_test"`
	IOPSLow   float64 `json:"iops_low"`
	IOPSHigh  float64 `json:"iops_high"`
	IOPSQD    int     `json:"iops_qd"`
	IOPSState string  `json:"iops_state"`
	IOPSWhy   string  `json:"iops_why"`
	// BWBytes is the large-block figure in bytes/s, with the same
	// companions.
	BWBytes float64 `json:"bw_bytes"`
	BWLimit string  `json:"bw_limit"`
	BWTest  string  `json:"bw_test"`
	BWLow   float64 `json:"bw_low"`
	BWHigh  float64 `json:"bw_high"`
	BWQD    int     `json:"bw_qd"`
	BWState string  `json:"bw_state"`
	BWWhy   string  `json:"bw_why"`
	// QD1LatencyNs is the mean latency at one IO outstanding (0 when no
	// QD1 test ran), QD1P99Ns its p99.
	QD1LatencyNs float64 `json:"qd1_latency_ns"`
	QD1P99Ns     float64 `json:"qd1_p99_ns"`
	QD1IOPS      float64 `json:"qd1_iops"`
	// QD1Modes are the two latency populations of the QD1 test, faster
	// first, when its histogram holds two (a cache's hits and misses);
	// nil when it holds one.
	QD1Modes []LatencyMode `json:"qd1_modes"`
	// KneeQD is the depth where IOPS stop growing in proportion, from the
	// fit (base latency x ceiling, rounded up; 1 when QD1 already reaches
	// the ceiling; 0 when no plateau was reached).
	KneeQD int `json:"knee_qd"`
	// KneeReachedQD is the shallowest depth measured at the plateau's
	// level (within 10%), KneeBelowQD the deepest measured short of it
	// and KneeBelowShare its share of the level: the knee lies between
	// the two measured depths (0: no plateau, or none below it).
	KneeReachedQD  int     `json:"knee_reached_qd"`
	KneeBelowQD    int     `json:"knee_below_qd"`
	KneeBelowShare float64 `json:"knee_below_share"`
}

// KneeWords says where the plateau begins in measured depths ("QD32
// reaches it; QD4 gets 49%"), "" without a plateau.
func (d *Direction) KneeWords() string {
	if d == nil || d.KneeReachedQD == 0 {
		return ""
	}
	s := fmt.Sprintf("QD%d reaches it", d.KneeReachedQD)
	if d.KneeBelowQD > 0 {
		s += fmt.Sprintf("; QD%d gets %.0f%%", d.KneeBelowQD, 100*d.KneeBelowShare)
	}
	return s
}

// KneeBracket reads the knee off a plateau's measured depths: the
// shallowest at the plateau's level (within 10%) and the deepest short
// of it (nil when the first depth measured reaches it); nil, nil without
// a plateau.
func (c *Curve) KneeBracket() (below, reached *CurvePoint) {
	if c.State != result.StatePlateau || c.LevelIOPS <= 0 {
		return nil, nil
	}
	for i := range c.Points {
		p := &c.Points[i]
		if p.IOPS >= 0.9*c.LevelIOPS {
			return below, p
		}
		below = p
	}
	return nil, nil
}

// Curve is one curve of the disk model as the diagnosis shows it.
type Curve struct {
	Dir         string  `json:"dir"`
	IOSizeBytes int64   `json:"io_size_bytes"`
	Random      bool    `json:"random"`
	Buffered    bool    `json:"buffered,omitempty"`
	State       string  `json:"state"`
	Limit       string  `json:"limit"`
	BaseLatNs   float64 `json:"base_lat_ns"`
	BaseQD      int     `json:"base_qd"`
	// CeilingIOPS is the fitted asymptote (0: the curve does not bend
	// within what was measured); LevelIOPS the headline rate: the
	// plateau's measured level, or the best rate measured.
	CeilingIOPS float64 `json:"ceiling_iops"`
	LevelIOPS   float64 `json:"level_iops"`
	RateLow     float64 `json:"rate_low"`
	RateHigh    float64 `json:"rate_high"`
	KneeQD      float64 `json:"knee_qd"`
	// Sharpness is the fitted knee's (1 gradual, large a sharp corner;
	// 0 when the curve does not bend) and ServiceLatNs the fit's latency
	// with no queueing: the fit can be drawn again.
	Sharpness    float64 `json:"sharpness"`
	ServiceLatNs float64 `json:"service_lat_ns"`
	Residual     float64 `json:"residual"`
	// Points are the depths the curve rests on.
	Points []CurvePoint `json:"points"`
	// Test is the result that carries the model (the curve's last).
	Test    string `json:"test"`
	Summary string `json:"summary"`
}

// CurvePoint is one depth of a curve.
type CurvePoint struct {
	QD    int     `json:"qd"`
	IOPS  float64 `json:"iops"`
	LatNs float64 `json:"lat_mean_ns"`
}

// Large says the curve measures bandwidth.
func (c *Curve) Large() bool { return isLarge(c.IOSizeBytes) }

// Fsync is the sync latency a WAL sees.
type Fsync struct {
	P99Ns  float64 `json:"p99_ns"`
	P999Ns float64 `json:"p99_9_ns"`
	Syncs  uint64  `json:"syncs"`
	// Etcd is "pass", "warn" or "fail" against etcd's 10 ms.
	Etcd string `json:"etcd"`
}

// Burst is a cliff: a rate held for a while, then a lower baseline.
type Burst struct {
	Test      string  `json:"test"`
	Unit      string  `json:"unit"` // "bytes" (per second) or "iops"
	Rate      float64 `json:"rate"`
	DurationS float64 `json:"duration_s"`
	Baseline  float64 `json:"baseline"`
	// Between: the drop fell between two tests of the same shape (Test
	// names both), so DurationS only bounds when it happened.
	Between bool `json:"between_tests,omitempty"`
}

// Stall is a collapse of throughput.
type Stall struct {
	Test      string  `json:"test"`
	StartS    float64 `json:"start_s"`
	DurationS float64 `json:"duration_s"`
	Severity  string  `json:"severity"`
	Summary   string  `json:"summary"`
}

// Limit is the limit finding of one test and direction.
type Limit struct {
	Test           string  `json:"test"`
	Dir            string  `json:"dir"`
	Code           string  `json:"code"`
	CeilingIOPS    float64 `json:"ceiling_iops,omitempty"`
	CeilingBWBytes float64 `json:"ceiling_bw_bytes,omitempty"`
	Summary        string  `json:"summary"`
}

// Match is a catalog disk whose limits fit the measured ceilings.
type Match struct {
	Disk string `json:"disk"`
	VM   string `json:"vm,omitempty"`
	// IOPS and BWBytes are its published sustained limits.
	IOPS    float64 `json:"iops"`
	BWBytes float64 `json:"bw_bytes"`
	// Distance is the largest relative gap between a measured ceiling
	// and the disk's (0.05 = 5%).
	Distance float64 `json:"distance"`
}

// Expected is the disk the results were compared with.
type Expected struct {
	Disk   string `json:"disk"`
	VM     string `json:"vm,omitempty"`
	Source string `json:"source"`
}

// Matcher finds catalog disks whose sustained limits fit measured caps
// (0 when a figure is not a cap); the limits package provides it.
type Matcher func(iops, bwBytes float64) []Match

// Options add what the results alone do not hold.
type Options struct {
	Match Matcher
	// MatchBurst names a flat level that is a catalog disk's burst rate.
	MatchBurst BurstMatcher
	Expected   *Expected
	// Unknown lists what a plan had no time or means to establish.
	Unknown []string
	// Interrupted: the run was stopped part way.
	Interrupted bool
}

// verdictKinds are the kinds of finding the verdict reads: the limits and
// curves of the disk model, stalls, cliffs (a burst) and the etcd verdict.
// Every report lists every finding, but a finding of another kind reaches
// the verdict only once Build reads it and it is listed here.
var verdictKinds = []string{result.KindLimit, result.KindModel, result.KindStall, result.KindCliff, result.KindEtcd}

// Build makes the diagnosis of rs (the results of one run, with their
// findings).
func Build(rs []result.Result, o Options) Diagnosis {
	d := Diagnosis{Schema: schema, Expected: o.Expected, Unknown: append([]string{}, o.Unknown...), Limits: []Limit{}, CatalogMatch: []Match{},
		Curves: []Curve{}, Interrupted: o.Interrupted}
	d.Disk.Stalls = []Stall{}
	ok := make([]*result.Result, 0, len(rs))
	for i := range rs {
		if rs[i].Status == "ok" {
			ok = append(ok, &rs[i])
		}
	}
	if len(rs) > 0 {
		d.RunID, d.Target = rs[0].RunID, rs[0].Target
	}
	d.Status = result.StatusOfResults(rs)
	for i := range rs {
		for _, n := range rs[i].Notes {
			if u, found := strings.CutPrefix(n, result.NoteNotEstablished); found && !contains(d.Unknown, u) {
				d.Unknown = append(d.Unknown, u)
			}
			d.Interrupted = d.Interrupted || n == result.NoteInterrupted
		}
	}
	if d.Interrupted && d.Status.State != result.RunInterrupted {
		d.Status = result.StatusOf(len(rs), len(rs)-len(ok), 1)
	}
	for _, r := range ok {
		for _, f := range r.Findings {
			switch f.Kind {
			case result.KindLimit:
				d.Limits = append(d.Limits, Limit{Test: r.Test.Name, Dir: f.Dir, Code: f.Code,
					CeilingIOPS: f.Evidence["limit_iops"], CeilingBWBytes: f.Evidence["limit_bw_bytes"], Summary: f.Summary})
			case result.KindModel:
				d.Curves = addCurve(d.Curves, curveOf(r, f))
			case result.KindStall:
				s := Stall{Test: r.Test.Name, Severity: f.Severity, Summary: f.Summary}
				if f.StartS != nil && f.DurationS != nil {
					s.StartS, s.DurationS = *f.StartS, *f.DurationS
				}
				d.Disk.Stalls = append(d.Disk.Stalls, s)
			case result.KindCliff:
				if d.Disk.Burst == nil {
					b := &Burst{Test: r.Test.Name, Unit: "bytes", Rate: f.Evidence["burst_rate"],
						DurationS: f.Evidence["burst_duration_s"], Baseline: f.Evidence["plateau_rate"]}
					if bs := r.Test.BlockSize; bs > 0 && !isLarge(bs) {
						// Small blocks: the credits people read about are IOPS.
						b.Unit, b.Rate, b.Baseline = "iops", b.Rate/float64(bs), b.Baseline/float64(bs)
					}
					d.Disk.Burst = b
				}
			case result.KindEtcd:
				if f.Code == result.CodeEtcdUnknown || d.Disk.Fsync != nil && d.Disk.Fsync.Syncs >= uint64(f.Evidence["syncs"]) {
					continue
				}
				d.Disk.Fsync = &Fsync{P99Ns: f.Evidence["p99_ns"], P999Ns: f.Evidence["p99_9_ns"], Syncs: uint64(f.Evidence["syncs"]),
					Etcd: strings.TrimPrefix(f.Code, "etcd-")}
			}
		}
	}
	if d.Disk.Burst == nil {
		d.Disk.Burst = dropBetweenTests(ok)
	}
	d.Disk.Read, d.Disk.Write = direction(d.Curves, ok, "read"), direction(d.Curves, ok, "write")
	if o.Match != nil && !d.Interrupted {
		var capIOPS, capBW float64
		for _, dir := range []*Direction{d.Disk.Read, d.Disk.Write} {
			if dir == nil {
				continue
			}
			if dir.IOPSLimit == result.CodeIOPSCap {
				capIOPS = math.Max(capIOPS, dir.IOPS)
			}
			if dir.BWLimit == result.CodeBandwidthCap {
				capBW = math.Max(capBW, dir.BWBytes)
			}
		}
		if capIOPS > 0 || capBW > 0 {
			if o.MatchBurst != nil {
				if bm := o.MatchBurst(capIOPS, capBW); len(bm) > 0 {
					d.Disk.AtBurst = &bm[0]
					if o.Expected == nil || o.Expected.Disk != bm[0].Disk {
						for _, m := range bm[1:] {
							d.Disk.AtBurstAlso = append(d.Disk.AtBurstAlso, m.Disk)
						}
					}
				}
			}
			// A level that is a burst rate says nothing of what the disk
			// holds: no disk is matched on it.
			if m := o.Match(capIOPS, capBW); m != nil && d.Disk.AtBurst == nil {
				d.CatalogMatch = m
			}
		}
	}
	d.IOErrors = ioErrorsOf(rs)
	d.Verdict = verdict(&d)
	if len(d.Verdict) == 0 {
		d.Verdict = []string{noVerdict(rs, ok)}
	}
	d.ToChange = advice(&d)
	if d.ToChange == nil {
		d.ToChange = []string{}
	}
	return d
}

// noVerdict says why results give no verdict, so that no report opens
// with an empty one.
func noVerdict(rs []result.Result, ok []*result.Result) string {
	switch {
	case len(rs) == 0:
		return "no verdict: there are no results"
	case len(ok) == 0:
		return "no verdict: every test failed (their errors are listed below)"
	}
	buffered, mixed := 0, 0
	for _, r := range ok {
		if r.Test.Buffered() && r.Sync == nil {
			buffered++
		}
		if rw := r.Test.RW; rw == "rw" || rw == "randrw" || rw == "readwrite" {
			mixed++
		}
	}
	switch {
	case buffered == len(ok):
		return "no verdict: every test went through the page cache (buffered IO), which measures memory and writeback, not the disk's limits"
	case mixed == len(ok):
		return "no verdict: every test mixed reads and writes, which the disk model does not fit; the table below has their figures"
	}
	return "no verdict: nothing in these results reaches it; the findings and the table below say what was measured"
}

// isLarge is a block size whose tests measure bandwidth.
func isLarge(bs int64) bool { return bs >= 64<<10 }

// probe says a test probes something other than a ceiling.
func probe(r *result.Result) bool {
	return r.Test.Group == result.GroupLayout || r.Test.Group == result.GroupBurstCheck
}

// curveOf reads a model finding back.
func curveOf(r *result.Result, f result.Finding) Curve {
	ev := f.Evidence
	c := Curve{Dir: f.Dir, IOSizeBytes: int64(ev["io_size_bytes"]), Random: ev["random"] == 1, Buffered: ev["buffered"] == 1,
		State: result.StateName(ev["state"]), Limit: f.Code, BaseLatNs: ev["base_lat_ns"], BaseQD: int(ev["base_qd"]),
		CeilingIOPS: ev["ceiling_iops"], LevelIOPS: ev["level_iops"], RateLow: ev["rate_low"], RateHigh: ev["rate_high"], KneeQD: ev["knee_qd"],
		Sharpness: ev["sharpness"], ServiceLatNs: ev["service_lat_ns"], Residual: ev["residual"], Test: r.Test.Name, Summary: f.Summary, Points: []CurvePoint{}}
	for k, v := range ev {
		var qd int
		if n, err := fmt.Sscanf(k, "qd%d_iops", &qd); n == 1 && err == nil && qd > 0 && qd <= 1<<20 && k == fmt.Sprintf("qd%d_iops", qd) {
			c.Points = append(c.Points, CurvePoint{QD: qd, IOPS: v, LatNs: ev[fmt.Sprintf("qd%d_lat_ns", qd)]})
		}
	}
	sort.Slice(c.Points, func(i, j int) bool { return c.Points[i].QD < c.Points[j].QD })
	return c
}

// addCurve keeps the latest model of each curve: a run's results carry
// the model as it stood when each completed.
func addCurve(cs []Curve, c Curve) []Curve {
	for i := range cs {
		if cs[i].Dir == c.Dir && cs[i].IOSizeBytes == c.IOSizeBytes && cs[i].Random == c.Random && cs[i].Buffered == c.Buffered {
			cs[i] = c
			return cs
		}
	}
	return append(cs, c)
}

// headline picks the curve a direction's small-block (or large-block)
// figure comes from: the direct IO curve with the best rate.
func headline(cs []Curve, dir string, large bool) *Curve {
	var best *Curve
	for i := range cs {
		c := &cs[i]
		if c.Dir != dir || c.Buffered || c.Large() != large || len(c.Points) == 0 {
			continue
		}
		if best == nil || rateOf(c, large) > rateOf(best, large) {
			best = c
		}
	}
	return best
}

// rateOf is the curve's headline figure: its ceiling on a plateau, else
// the most it measured; bytes/s for large blocks.
func rateOf(c *Curve, large bool) float64 {
	v := c.LevelIOPS
	if v <= 0 {
		for _, p := range c.Points {
			v = math.Max(v, p.IOPS)
		}
	}
	if large {
		return v * float64(c.IOSizeBytes)
	}
	return v
}

// deepestBest is the depth of the most IOPS the curve measured.
func deepestBest(c *Curve) int {
	qd, best := 0, -1.0
	for _, p := range c.Points {
		if p.IOPS > best {
			qd, best = p.QD, p.IOPS
		}
	}
	return qd
}

func direction(cs []Curve, rs []*result.Result, dir string) *Direction {
	var out Direction
	seen := false
	if c := headline(cs, dir, false); c != nil {
		seen = true
		out.IOPS, out.IOPSLimit, out.IOPSTest, out.IOPSState, out.IOPSWhy = rateOf(c, false), c.Limit, c.Test, c.State, c.Summary
		out.IOPSLow, out.IOPSHigh, out.IOPSQD = c.RateLow, c.RateHigh, deepestBest(c)
		if c.State == result.StatePlateau && c.KneeQD > 0 {
			out.KneeQD = int(math.Ceil(c.KneeQD - 1e-9))
		}
		if below, reached := c.KneeBracket(); reached != nil {
			out.KneeReachedQD = reached.QD
			if below != nil {
				out.KneeBelowQD, out.KneeBelowShare = below.QD, below.IOPS/c.LevelIOPS
			}
		}
		if c.Points[0].QD == 1 && c.Random {
			out.QD1LatencyNs, out.QD1IOPS = c.Points[0].LatNs, c.Points[0].IOPS
			if out.KneeQD == 0 && c.State == result.StatePlateau {
				out.KneeQD = 1
			}
		}
	}
	if c := headline(cs, dir, true); c != nil {
		seen = true
		out.BWBytes, out.BWLimit, out.BWTest, out.BWState, out.BWWhy = rateOf(c, true), c.Limit, c.Test, c.State, c.Summary
		bs := float64(c.IOSizeBytes)
		out.BWLow, out.BWHigh, out.BWQD = c.RateLow*bs, c.RateHigh*bs, deepestBest(c)
	}
	// The QD1 p99 (and QD1 from a test no curve holds) from the results.
	for _, r := range rs {
		d := r.Dir(dir)
		if d == nil || r.Test.Fdatasync > 0 || !r.Test.Direct || probe(r) || isLarge(r.Test.BlockSize) ||
			max(1, r.Test.IODepth)*max(1, r.Test.NumJobs) != 1 || !strings.HasPrefix(r.Test.RW, "rand") {
			continue
		}
		if out.QD1P99Ns == 0 || d.Lat.N > 0 {
			out.QD1P99Ns = d.Lat.P99Ns
			out.QD1Modes = latencyModes(&d.Hist)
		}
		if out.QD1LatencyNs == 0 {
			out.QD1LatencyNs, out.QD1IOPS = d.Lat.MeanNs, d.IOPS
		}
	}
	if !seen {
		return nil
	}
	return &out
}

// verdict says the model in a few lines, most important first.
func verdict(d *Diagnosis) []string {
	var out []string
	if d.IOErrors != nil {
		// An IO error is the first thing a disk check can find.
		out = append(out, ioErrorLines(d.IOErrors)...)
	}
	if t := d.Target; t.RootDisk {
		// A mistyped path or a volume that is not mounted measures the
		// root disk: say so before any figure.
		out = append(out, fmt.Sprintf("target: this is the root disk, %s, while other disks are mounted (%s)", t.Device, strings.Join(t.OtherDisks, ", ")))
	}
	if d.Interrupted {
		out = append(out, "interrupted: the run was stopped part way; the figures below are partial and no catalog disk is matched")
	}
	for _, x := range []struct {
		name string
		dir  *Direction
	}{{"read", d.Disk.Read}, {"write", d.Disk.Write}} {
		if x.dir == nil {
			continue
		}
		var parts []string
		if x.dir.IOPS > 0 {
			parts = append(parts, burstWords(d.Disk.AtBurst, len(d.Disk.AtBurstAlso) > 0, x.dir.IOPS, x.dir.IOPSLimit, figureWords(units.Figure(x.dir.IOPS)+" IOPS", x.dir.IOPSLow, x.dir.IOPSHigh, x.dir.IOPS, x.dir.IOPSState, x.dir.IOPSLimit, x.dir.IOPSQD)))
		}
		if x.dir.BWBytes > 0 {
			parts = append(parts, burstWords(d.Disk.AtBurst, len(d.Disk.AtBurstAlso) > 0, x.dir.BWBytes, x.dir.BWLimit, figureWords(units.Figure(x.dir.BWBytes/1e6)+" MB/s", x.dir.BWLow, x.dir.BWHigh, x.dir.BWBytes, x.dir.BWState, x.dir.BWLimit, x.dir.BWQD)))
		}
		if x.dir.QD1LatencyNs > 0 {
			s := fmt.Sprintf("QD1 %s per IO (%s IOPS)", units.Latency(x.dir.QD1LatencyNs), units.Figure(x.dir.QD1IOPS))
			switch k := x.dir; {
			case k.KneeReachedQD == 1:
				s += ", at the ceiling already"
			case k.KneeReachedQD > 1 && k.KneeBelowQD > 1:
				s += fmt.Sprintf("; QD%d reaches the ceiling, QD%d gets %.0f%%", k.KneeReachedQD, k.KneeBelowQD, 100*k.KneeBelowShare)
			case k.KneeReachedQD > 1:
				s += fmt.Sprintf("; QD%d reaches the ceiling", k.KneeReachedQD)
			}
			s += modesWords(x.dir.QD1Modes)
			parts = append(parts, s)
		}
		out = append(out, fmt.Sprintf("%-6s %s", x.name+":", strings.Join(parts, "; ")))
	}
	if f := d.Disk.Fsync; f != nil {
		out = append(out, fmt.Sprintf("fsync: p99 %s over %s syncs: etcd %s (limit 10 ms)", units.Latency(f.P99Ns), units.Commas(int64(f.Syncs)), strings.ToUpper(f.Etcd)))
	}
	// Burst and stalls are one story (how the rate holds over time),
	// the catalog match and the expected disk another: a line each.
	var held []string
	if b := d.Disk.Burst; b != nil && b.Between {
		held = append(held, fmt.Sprintf("burst: %s fell to %s within %s (%s): burst credits or a write cache ran out between them",
			units.PerSecond(b.Rate, b.Unit), units.PerSecond(b.Baseline, b.Unit), units.FormatSeconds(b.DurationS), b.Test))
	} else if b != nil {
		held = append(held, fmt.Sprintf("burst: %s for %s, then %s (%s): burst credits or a write cache ran out",
			units.PerSecond(b.Rate, b.Unit), units.FormatSeconds(b.DurationS), units.PerSecond(b.Baseline, b.Unit), b.Test))
	}
	if b := d.Disk.AtBurst; b != nil {
		held = append(held, atBurstWords(b, d.Disk.AtBurstAlso))
	}
	if n := len(d.Disk.Stalls); n > 0 {
		worst := d.Disk.Stalls[0]
		for _, s := range d.Disk.Stalls {
			if s.DurationS > worst.DurationS {
				worst = s
			}
		}
		held = append(held, fmt.Sprintf("stalls: %d, the longest %s in %s", n, units.FormatSeconds(worst.DurationS), worst.Test))
	}
	if len(held) > 0 {
		out = append(out, strings.Join(held, "; "))
	}
	var disk []string
	if len(d.CatalogMatch) > 0 {
		var ms []string
		for _, m := range d.CatalogMatch[:min(3, len(d.CatalogMatch))] {
			s := m.Disk
			if m.VM != "" {
				s += " on " + m.VM
			}
			ms = append(ms, fmt.Sprintf("%s (%s IOPS, %s MB/s)", s, units.Figure(m.IOPS), units.Figure(m.BWBytes/1e6)))
		}
		disk = append(disk, "looks like: "+strings.Join(ms, ", "))
	}
	if e := d.Expected; e != nil {
		s := "compared with " + e.Disk
		if e.VM != "" {
			s += " on " + e.VM
		}
		disk = append(disk, s+" ("+e.Source+")")
	}
	if len(disk) > 0 {
		out = append(out, strings.Join(disk, "; "))
	}
	return out
}

// burstWords names a flat figure that is the burst rate of d.AtBurst's
// disk (an IOPS figure when code is the IOPS cap, bytes/s for the
// bandwidth cap): "(a flat IOPS cap)" becomes "(azure:P15's burst rate)",
// or "(a catalog disk's burst rate)" when several disks have it.
func burstWords(b *BurstMatch, several bool, v float64, code, words string) string {
	if b == nil {
		return words
	}
	rate := b.BurstIOPS
	if code == result.CodeBandwidthCap {
		rate = b.BurstBWBytes
	} else if code != result.CodeIOPSCap {
		return words
	}
	if rate <= 0 || math.Abs(v-rate) > 0.1*rate {
		return words
	}
	whose := b.Disk + "'s"
	if several {
		whose = "a catalog disk's"
	}
	return strings.Replace(words, "("+limitWords(code), "("+whose+" burst rate", 1)
}

// atBurstWords says what a disk measured at its burst rates holds once
// its credits run out, and when that is; with also (other disks of the
// same burst rates), that each holds its own.
func atBurstWords(b *BurstMatch, also []string) string {
	var burst, base []string
	if b.BurstIOPS > 0 {
		burst, base = append(burst, units.Figure(b.BurstIOPS)+" IOPS"), append(base, units.Figure(b.BaseIOPS)+" IOPS")
	}
	if b.BurstBWBytes > 0 {
		burst, base = append(burst, units.Figure(b.BurstBWBytes/1e6)+" MB/s"), append(base, units.Figure(b.BaseBWBytes/1e6)+" MB/s")
	}
	if len(also) > 0 {
		return fmt.Sprintf("burst: %s are the burst rates of %s to %s (%d disks), each holding less once its credits run out; --expect DISK says how much",
			strings.Join(burst, ", "), b.Disk, also[len(also)-1], len(also)+1)
	}
	s := fmt.Sprintf("burst: %s are %s's burst rates; it holds %s once its credits run out", strings.Join(burst, ", "), b.Disk, strings.Join(base, ", "))
	var bucket []string
	if b.BucketIOs > 0 {
		bucket = append(bucket, units.Figure(b.BucketIOs)+" IOs")
	}
	if b.BucketBytes > 0 {
		bucket = append(bucket, units.HumanBytes(b.BucketBytes))
	}
	if len(bucket) > 0 {
		s += " (a bucket of " + strings.Join(bucket, " and ")
		if b.LastsS > 0 {
			s += ", " + units.FormatSeconds(b.LastsS) + " at this rate from full"
		}
		s += ")"
	}
	return s
}

// figureWords says one headline figure: its value, how sure it is, and
// what binds it.
func figureWords(fig string, lo, hi, v float64, state, code string, qd int) string {
	switch pm := units.PlusMinus(lo, hi, v); {
	case pm != "":
		fig += pm
	case lo > 0 && hi > lo:
		fig += " ±<0.1%"
	default:
		// Every figure says how sure it is, or why it cannot.
		fig += " (± not computed: under 3 seconds of its rate recorded)"
	}
	switch state {
	case result.StateLatency:
		return fmt.Sprintf("%s at QD%d (latency-bound up to QD%d: a deeper queue gives more)", fig, qd, qd)
	case result.StateApproaching:
		return fmt.Sprintf("%s at QD%d (past the knee, no plateau measured: the ceiling is this or higher)", fig, qd)
	case result.StateOneDepth:
		return fmt.Sprintf("%s at QD%d (%s; one depth measured)", fig, qd, limitWords(code))
	}
	return fmt.Sprintf("%s (%s)", fig, limitWords(code))
}

func limitWords(code string) string {
	switch code {
	case result.CodeIOPSCap:
		return "a flat IOPS cap"
	case result.CodeBandwidthCap:
		return "a flat bandwidth cap"
	case result.CodeLatency:
		return "latency-bound"
	case result.CodeDevice:
		return "the device saturates"
	case result.CodeCPU:
		return "CPU-bound"
	case "", result.CodeUnknown:
		return "limit unknown"
	}
	return code
}

// advice says what to change, from what binds: one short line per thing,
// none contradicting another.
func advice(d *Diagnosis) []string {
	var says []string
	add := func(s string) {
		for _, x := range says {
			if x == s {
				return
			}
		}
		says = append(says, s)
	}
	if e := d.IOErrors; e != nil {
		add("the disk returned IO errors: copy what matters off it and replace it; its kernel log (dmesg) and SMART data say which sectors")
	}
	etcdAtRisk := d.Disk.Fsync != nil && d.Disk.Fsync.Etcd != "pass"
	qd1Said := false
	// Which directions each line is about: a line that holds for one of
	// two measured directions names it, so that "the device saturates"
	// beside "more IOs in flight give more" does not read as a
	// contradiction.
	dirsOf := map[string][]string{}
	measured := 0
	for di, dir := range []*Direction{d.Disk.Read, d.Disk.Write} {
		if dir == nil {
			continue
		}
		measured++
		name := [2]string{"reads", "writes"}[di]
		add := func(s string) {
			add(s)
			if !contains(dirsOf[s], name) {
				dirsOf[s] = append(dirsOf[s], name)
			}
		}
		for _, x := range []struct{ code, state string }{{dir.IOPSLimit, dir.IOPSState}, {dir.BWLimit, dir.BWState}} {
			switch {
			case x.state == result.StateLatency || x.state == result.StateApproaching:
				s := "more IOs in flight (a deeper queue, more clients) give more: no ceiling was reached"
				if etcdAtRisk {
					s = "more IOs in flight give more throughput (not etcd's WAL: it syncs one write at a time)"
				}
				add(s)
			case (x.code == result.CodeIOPSCap || x.code == result.CodeBandwidthCap) && d.Disk.AtBurst != nil:
				add(sustainedAdvice(d.Disk.AtBurst, len(d.Disk.AtBurstAlso) > 0))
			case x.code == result.CodeIOPSCap, x.code == result.CodeBandwidthCap:
				add("a larger disk, a higher tier or a larger VM raises the caps; a deeper queue does not")
			case x.code == result.CodeCPU:
				add("the CPU binds: more fio jobs or a larger VM show what the disk itself can do")
			case x.code == result.CodeDevice:
				add("the device saturates: a faster device, or less competing IO")
			}
		}
		if dir.IOPSState == result.StatePlateau && dir.QD1LatencyNs > 0 && dir.IOPS > 0 && dir.QD1IOPS < 0.5*dir.IOPS && !qd1Said && dir.KneeReachedQD > 1 {
			qd1Said = true // the other direction's line would say the same
			// Read off the measured depths: the shallowest at the
			// ceiling, and the deepest short of it with its share.
			s := fmt.Sprintf("one IO at a time gets %s of %s IOPS; QD%d reaches the ceiling", units.Figure(dir.QD1IOPS), units.Figure(dir.IOPS), dir.KneeReachedQD)
			if dir.KneeBelowQD > 1 {
				s += fmt.Sprintf(", QD%d gets %.0f%% of it", dir.KneeBelowQD, 100*dir.KneeBelowShare)
			}
			add(s)
			dirsOf[s] = []string{"reads", "writes"} // read off one, it holds for both
		}
	}
	if measured == 2 {
		for i, s := range says {
			if ds := dirsOf[s]; len(ds) == 1 {
				says[i] = ds[0] + ": " + s
			}
		}
	}
	if f := d.Disk.Fsync; f != nil && f.Etcd == "fail" {
		add("fsync p99 is above etcd's 10 ms: etcd's WAL needs a faster disk, with no host write cache")
	}
	return says
}

// sustainedAdvice asks for the figure a bursting disk holds, and says
// how long a run must be to see it (the bucket at the rate measured, and
// about 4 minutes for the plan's other tests).
func sustainedAdvice(b *BurstMatch, several bool) string {
	if several || b.LastsS <= 0 {
		return "size for what the disk holds after its burst: 'diagnose --sustained' measures it"
	}
	what := units.Figure(b.BaseIOPS) + " IOPS"
	if b.BurstIOPS <= 0 {
		what = units.Figure(b.BaseBWBytes/1e6) + " MB/s"
	}
	return fmt.Sprintf("size for %s's %s after its burst: 'diagnose --sustained --budget %dm' measures it", b.Disk, what, int(math.Ceil((b.LastsS+240)/60)))
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// dropBetweenTests finds a burst that ran out between two tests of the same
// shape (pattern, block size, depth): the later one far below the earlier,
// with neither showing a cliff of its own (each was too short to). A
// credit bucket or write cache drained by the tests in between does this.
func dropBetweenTests(rs []*result.Result) *Burst {
	type shape struct {
		rw     string
		bs     int64
		qd     int
		direct bool
	}
	first := map[shape]*result.Result{}
	for _, r := range rs {
		k := shape{r.Test.RW, r.Test.BlockSize, max(1, r.Test.IODepth) * max(1, r.Test.NumJobs), r.Test.Direct}
		f, seen := first[k]
		if !seen {
			first[k] = r
			continue
		}
		for _, dir := range []string{"write", "read"} {
			a, b := f.Dir(dir), r.Dir(dir)
			if a == nil || b == nil || a.IOPS <= 0 || b.IOPS >= 0.7*a.IOPS {
				continue
			}
			dur := r.Start.Sub(f.Start).Seconds()
			return &Burst{Test: f.Test.Name + " then " + r.Test.Name, Unit: "iops", Rate: a.IOPS, DurationS: math.Max(dur, 0), Baseline: b.IOPS, Between: true}
		}
	}
	return nil
}
