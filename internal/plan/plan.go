// Package plan runs diagnose's adaptive plan on a prepared target: it
// lays the test file out once, then measures random and sequential
// ceilings, QD1 latency, a QD sweep that stops at the knee, fsync until the
// etcd verdict is certain, and a sustained write that looks for a burst
// cliff, each step ending as soon as its figure is known to the precision
// asked for, all within a time budget. What it had no time to establish it
// says. It prints nothing: results go to emit, progress to a callback.
package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/units"
)

// Options tune the plan.
type Options struct {
	// Budget bounds the whole plan, layout included (default 3 minutes).
	Budget time.Duration
	// Precision is the relative precision of each figure (default 0.02).
	Precision float64
	// Clock is the time source (tests); nil is the wall clock.
	Clock func() time.Time
	// Sustained runs the burst check to its end: it writes until a
	// cliff shows and the rate after it has lasted, for as much of the
	// budget as the other tests leave (not at most a quarter of it and a
	// minute), so a disk measured at its burst rate is measured after it
	// too.
	Sustained bool
	// Analysis is the run's analysis, nil for none. The plan chooses its
	// tests as it goes, so it alone knows which result ends a group (the
	// QD sweep): it says so before emitting that result.
	Analysis *analysis.Session
}

// Event says where the plan is.
type Event struct {
	Step    string
	Message string
	// Left is the budget left.
	Left time.Duration
}

// Step bounds, in seconds of measurement.
const (
	rampS        = 1
	rateMinS     = 3
	rateMaxS     = 15
	sweepMinS    = 2
	sweepMaxS    = 8
	fsyncMinS    = 2
	fsyncMaxS    = 30
	fsyncMinN    = 300
	burstMinS    = 20
	burstMaxS    = 60
	burstShare   = 0.25 // of the budget, at most
	layoutShare  = 0.12 // of the budget, at most, for laying the file out
	overheadS    = 2    // fio start and stop around each step, at least
	sweepGroup   = analysis.SweepPrefix + "randread-4k"
	etcdLimitNs  = analysis.EtcdLimitNs
	confidence   = 0.95
	quantileP    = 0.99
	flatDoubling = 2 // doublings with no gain that end a sweep
)

// Plan runs the diagnose plan on session s. Each result goes to emit as
// soon as its step ends, the end of the QD sweep told to o.Analysis
// first. It returns what could not be established.
func Plan(ctx context.Context, s *runner.Session, o Options, emit func(result.Result) error, progress func(Event)) ([]string, error) {
	if o.Budget <= 0 {
		o.Budget = 3 * time.Minute
	}
	if o.Precision <= 0 {
		o.Precision = 0.02
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if progress == nil {
		progress = func(Event) {}
	}
	p := &planner{s: s, o: o, emit: emit, progress: progress, deadline: o.Clock().Add(o.Budget)}
	unknown, err := p.run(ctx)
	if ctx.Err() != nil {
		p.notRun()
		unknown = p.unknown
	}
	if ctx.Err() != nil && p.held != nil {
		// The last result says the run was cut short, so every report
		// and the history mark it partial.
		p.held.Notes = append(p.held.Notes, result.NoteInterrupted)
	}
	return unknown, errors.Join(err, p.flush())
}

// MinBudget is the least budget the plan's core tests and fsync fit in
// (the burst check and the extra depths are skipped, and said so, below
// about twice it).
func MinBudget() time.Duration {
	s := 10 + float64(len(coreSteps()))*(rampS+rateMinS+overheadS) + 10 + overheadS
	return time.Duration(math.Ceil(s/10)*10) * time.Second
}

type planner struct {
	s        *runner.Session
	o        Options
	emit     func(result.Result) error
	progress func(Event)
	deadline time.Time
	index    int
	unknown  []string
	// held is the last result, emitted when the next one comes or at the
	// end, so that what the plan could not establish travels with the
	// run's results (as notes on the one that follows it).
	held     *result.Result
	heldEnds string
	noted    int // unknowns already attached
	// done are the results so far: the model the next depth is chosen
	// from.
	done []result.Result
	// over is what fio's start and stop have taken around each step.
	over overhead
}

// overhead learns how long a step takes beyond what fio measures (its
// start, its file's opening, its stop) on this host: on a loaded one,
// more than the overheadS the budget allows at first, and the steps
// before the last core test must leave it room.
type overhead struct {
	sum float64
	n   int
}

// observe adds a step that took wallS seconds for measuredS of fio's
// measurement, ramp included.
func (o *overhead) observe(wallS, measuredS float64) {
	if wallS > 0 && measuredS > 0 && wallS >= measuredS {
		o.sum += wallS - measuredS
		o.n++
	}
}

// seconds is the mean seen so far, and never less than overheadS.
func (o overhead) seconds() float64 {
	if o.n == 0 {
		return overheadS
	}
	return math.Max(overheadS, o.sum/float64(o.n))
}

// minRest is what the ceilings, QD1 and fsync need at least after the
// burst check.
func (p *planner) minRest() float64 {
	ov := p.over.seconds()
	return float64(len(coreSteps()))*(rampS+rateMinS+ov) + 10 + ov
}

// hold emits the result held so far and holds r instead.
func (p *planner) hold(r result.Result, endsGroup string) error {
	p.done = append(p.done, r)
	err := p.flush()
	p.held, p.heldEnds = &r, endsGroup
	return err
}

// flush emits the held result with the unknowns noted so far.
func (p *planner) flush() error {
	if p.held == nil {
		return nil
	}
	r := *p.held
	p.held = nil
	for _, u := range p.unknown[p.noted:] {
		r.Notes = append(r.Notes, result.NoteNotEstablished+u)
	}
	p.noted = len(p.unknown)
	if p.heldEnds != "" && p.o.Analysis != nil {
		p.o.Analysis.LastOfGroup(p.heldEnds)
	}
	return p.emit(r)
}

// notRun notes the core steps and fsync that a run stopped part way did
// not measure, and the depth sweep, so that every report lists what the
// run skipped and why.
func (p *planner) notRun() {
	measured := map[string]bool{}
	for _, r := range p.done {
		if r.Status == "ok" {
			measured[r.Test.Name] = true
		}
	}
	for _, st := range coreSteps() {
		if !measured[st.spec.Name] {
			p.note("%s: not run: the run was interrupted", st.spec.Name)
		}
	}
	if name := fsyncSpec(0).Name; !measured[name] {
		p.note("%s and the etcd verdict: not run: the run was interrupted", name)
	}
	p.note("the depth sweep past the core tests: not run: the run was interrupted")
}

func (p *planner) left() float64 { return p.deadline.Sub(p.o.Clock()).Seconds() }

func (p *planner) note(format string, a ...any) {
	p.unknown = append(p.unknown, fmt.Sprintf(format, a...))
}

func (p *planner) say(step, format string, a ...any) {
	p.progress(Event{Step: step, Message: fmt.Sprintf(format, a...), Left: time.Duration(p.left() * float64(time.Second))})
}

// test runs one step and emits its result.
func (p *planner) test(ctx context.Context, spec result.TestSpec, stop runner.StopRule, endsGroup string) (result.Result, error) {
	p.index++
	start := p.o.Clock()
	res := p.s.Test(ctx, spec, runner.TestOptions{Index: p.index, Repeat: 1, N: p.index, Stop: stop})
	if res.Status == "ok" {
		p.over.observe(p.o.Clock().Sub(start).Seconds(), res.RuntimeS()+spec.RampS)
	}
	if res.Status != "ok" && ctx.Err() == nil {
		p.note("%s: the test failed (%s)", spec.Name, firstLine(res.Error))
	}
	if err := p.hold(res, endsGroup); err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

// Suite is what a diagnose plan may run, for the runner to size its
// scratch space (iolens diagnose, and the agent of iolens k8s diagnose).
func Suite() result.Suite {
	return result.Suite{Name: "diagnose", Description: "iolens diagnose: an adaptive plan", Tests: Specs()}
}

// Specs lists every test the plan may run (the layout aside), in its
// longest form: what a target must have room for.
func Specs() []result.TestSpec {
	out := []result.TestSpec{fsyncSpec(fsyncMaxS), burstSpec(burstMaxS)}
	for _, st := range coreSteps() {
		out = append(out, st.spec)
	}
	for _, sh := range shapes() {
		for qd := 1; qd <= sh.maxQD; qd *= 2 {
			out = append(out, sh.spec(qd, 1, sweepMaxS))
		}
		out = append(out, sh.spec(sh.maxQD, cpuRetryJobs, sweepMaxS))
	}
	return dedupe(out)
}

// dedupe keeps the first test of each name.
func dedupe(ts []result.TestSpec) []result.TestSpec {
	seen := map[string]bool{}
	var out []result.TestSpec
	for _, t := range ts {
		if !seen[t.Name] {
			seen[t.Name] = true
			out = append(out, t)
		}
	}
	return out
}

// shape is one curve the plan measures: a pattern and block size whose
// IOPS and latency it follows across queue depths.
type shape struct {
	rw    string
	bs    int64
	group string
	// maxQD is the deepest queue the plan tries; steps the most depths
	// it adds to the core tests.
	maxQD, steps int
}

// shapes are the curves, most important first: the budget left after the
// core tests goes to them in this order.
func shapes() []shape {
	return []shape{
		{"randread", 4096, sweepGroup, 256, 6},
		{"randwrite", 4096, "", 256, 3},
		{"read", 1 << 20, "", 64, 2},
		{"write", 1 << 20, "", 64, 2},
	}
}

func (sh shape) dir() string {
	if sh.rw == "randwrite" || sh.rw == "write" {
		return "write"
	}
	return "read"
}

// spec is the shape's test at qd outstanding IOs over jobs fio jobs.
func (sh shape) spec(qd, jobs int, maxS float64) result.TestSpec {
	name := fmt.Sprintf("%s-%s-qd%d", sh.rw, strings.ToLower(units.FormatSize(sh.bs)), qd)
	if jobs > 1 {
		name += fmt.Sprintf("-%djobs", jobs)
	}
	spec := rate(name, sh.rw, sh.bs, max(1, qd/jobs), maxS)
	spec.NumJobs, spec.Group = jobs, sh.group
	return spec
}

type coreStep struct {
	spec  result.TestSpec
	group string
}

// coreSteps are the tests every plan runs after the burst check: each
// curve's deep end and its base (QD1 for small blocks).
func coreSteps() []coreStep {
	sh := shapes()
	return []coreStep{
		{sh[0].spec(32, 1, rateMaxS), sweepGroup},
		{sh[1].spec(32, 1, rateMaxS), ""},
		{sh[2].spec(8, 1, rateMaxS), ""},
		{sh[3].spec(8, 1, rateMaxS), ""},
		{sh[0].spec(1, 1, rateMaxS), sweepGroup},
		{sh[1].spec(1, 1, rateMaxS), ""},
	}
}

func fsyncSpec(maxS float64) result.TestSpec {
	return result.TestSpec{Name: "fdatasync-2300", Description: "etcd's WAL pattern until its p99 is known against 10 ms",
		RW: "write", BlockSize: 2300, IODepth: 1, NumJobs: 1, IOEngine: "sync", Fdatasync: 1, SizeBytes: 22 << 20, OwnFile: true,
		RuntimeS: math.Ceil(maxS)}
}

func burstSpec(maxS float64) result.TestSpec {
	spec := rate("burst-randwrite-4k-qd32", "randwrite", 4096, 32, maxS)
	spec.Description = "sustained writes: a burst cliff or a write cache filling shows as a drop to a lower plateau"
	spec.Group = result.GroupBurstCheck
	return spec
}

func rate(name, rw string, bs int64, qd int, maxS float64) result.TestSpec {
	return result.TestSpec{Name: name, RW: rw, BlockSize: bs, IODepth: qd, NumJobs: 1, Direct: true, IOEngine: "libaio",
		RuntimeS: math.Ceil(maxS), RampS: rampS}
}

func (p *planner) run(ctx context.Context) ([]string, error) {
	if p.s.Target().Kind != "device" {
		maxS := math.Max(10, layoutShare*p.o.Budget.Seconds())
		p.say("layout", "writing the test file once (at most %.0f s), measuring the sequential write on the way", maxS)
		p.index++
		res := p.s.Layout(ctx, runner.TestOptions{Index: p.index, Repeat: 1, N: p.index}, maxS)
		if err := p.hold(res, ""); err != nil {
			return p.unknown, err
		}
		if res.Status != "ok" {
			return p.unknown, fmt.Errorf("laying out the test file: %s", res.Error)
		}
	}
	// The burst check comes first, right after the layout: a bucket of
	// credits or a write cache that runs out half way through the plan
	// would make the tests before and after it disagree. Then the
	// ceilings and QD1 latency, fsync, and the sweep.
	if err := p.burst(ctx); err != nil {
		return p.unknown, err
	}
	steps := coreSteps()
	for i, st := range steps {
		if ctx.Err() != nil {
			return p.unknown, ctx.Err()
		}
		maxS := coreMax(p.left(), p.over.seconds(), i, len(steps))
		if maxS < rateMinS {
			p.note("%s: no time left in the budget", st.spec.Name)
			continue
		}
		st.spec.RuntimeS, st.spec.Group = math.Floor(maxS), st.group
		p.say(st.spec.Name, "%s until its rate is known to %.0f%% (at most %.0f s)", st.spec.Name, p.o.Precision*100, maxS)
		if _, err := p.test(ctx, st.spec, Converged(rateMinS, p.o.Precision), ""); err != nil {
			return p.unknown, err
		}
	}
	if err := p.fsync(ctx); err != nil {
		return p.unknown, err
	}
	for _, sh := range shapes() {
		if err := p.finish(ctx, sh); err != nil {
			return p.unknown, err
		}
	}
	return p.unknown, nil
}

// coreMax is the longest core step i of n may measure, with left seconds
// of the budget and ov seconds of fio's start and stop around a step:
// what the later core steps and fsync need at least is kept for them, so
// they are never eaten, and the step takes at most an even share of
// what is left for the core steps still to come (fsync's least set
// aside): a first step that took its whole 15 s on a small budget would
// leave the last one none. Less than rateMinS means no time for it.
func coreMax(left, ov float64, i, n int) float64 {
	reserve := float64(n-i-1)*(rampS+rateMinS+ov) + 10 + ov // and fsync's least
	share := (left-10-ov)/float64(n-i) - rampS - ov
	return math.Min(math.Min(rateMaxS, math.Max(share, rateMinS)), left-reserve-rampS-ov)
}

// fsync measures etcd's pattern until its p99 is certainly on one side
// of 10 ms.
func (p *planner) fsync(ctx context.Context) error {
	maxS := math.Min(fsyncMaxS, p.left()-p.over.seconds())
	if maxS < 3 {
		p.note("fsync and the etcd verdict: no time left in the budget")
		return nil
	}
	spec := fsyncSpec(maxS)
	p.say("fsync", "fdatasync after every 2300-byte write until p99 is known against etcd's 10 ms (at most %.0f s)", maxS)
	res, err := p.test(ctx, spec, QuantileDecided(etcdLimitNs, fsyncMinS, fsyncMinN), "")
	if err != nil {
		return err
	}
	if res.Status == "ok" && res.Sync != nil {
		if _, decided := quantileSide(&res.Sync.Hist, etcdLimitNs); !decided {
			p.note("etcd verdict: after %s syncs fdatasync p99 is still not certainly on one side of 10 ms", units.Commas(int64(res.Sync.Hist.Count())))
		}
	}
	return nil
}

// cpuRetryJobs is how many fio jobs the plan splits a CPU-bound depth
// into, to see whether the device has more to give than one fio job can
// ask of it.
const cpuRetryJobs = 2

// finish measures more depths of one shape until its curve shows what
// binds it: deeper while latency stays at its base (up to maxQD), between
// the base and the plateau until the knee is bracketed within a doubling,
// and, where one fio job ran out of CPU, the same depth with more jobs.
// It stops with a note when the budget runs out first.
func (p *planner) finish(ctx context.Context, sh shape) error {
	defer p.endGroup(sh.group)
	for n := 0; n < sh.steps+1; n++ {
		c := p.curve(sh)
		if c == nil {
			return nil // its core tests did not run
		}
		qd, jobs, why := nextDepth(c, sh)
		if qd == 0 {
			return nil
		}
		if n == sh.steps {
			p.note("%s curve: %s, but the plan's %d extra depths are spent", sh.name(), why, sh.steps)
			return nil
		}
		maxS := math.Min(sweepMaxS, p.left()-p.over.seconds()-rampS)
		if maxS < sweepMinS {
			p.note("%s curve: %s; no time left in the budget", sh.name(), why)
			return nil
		}
		spec := sh.spec(qd, jobs, maxS)
		spec.RuntimeS = math.Ceil(maxS)
		p.say(spec.Name, "%s: %s (at most %.0f s)", spec.Name, why, maxS)
		if _, err := p.test(ctx, spec, Converged(sweepMinS, p.o.Precision), ""); err != nil {
			return err
		}
	}
	return nil
}

func (sh shape) name() string {
	return fmt.Sprintf("%s %s", sh.rw, units.IOSize(sh.bs))
}

// curve is the model's curve of sh over the results so far.
func (p *planner) curve(sh shape) *analysis.Curve {
	rs := make([]*result.Result, len(p.done))
	for i := range p.done {
		rs[i] = &p.done[i]
	}
	m := analysis.FitModel(rs)
	for i := range m.Curves {
		c := &m.Curves[i]
		if c.Key.Dir == sh.dir() && c.Key.BlockSize == sh.bs && c.Key.Random == strings.HasPrefix(sh.rw, "rand") && !c.Key.Buffered {
			return c
		}
	}
	return nil
}

// nextDepth is the depth (and fio jobs) that tells most about c next,
// with why; 0 when the curve says what binds it.
func nextDepth(c *analysis.Curve, sh shape) (qd, jobs int, why string) {
	have := map[int]bool{}
	for _, p := range c.Points {
		have[p.QD] = true
	}
	deep := c.Deepest()
	switch c.State {
	case analysis.StateOneDepth:
		if !have[1] {
			return 1, 1, "its latency at one IO in flight"
		}
		return 0, 0, ""
	case analysis.StateLatency, analysis.StateApproaching:
		if deep.QD*2 > sh.maxQD {
			return 0, 0, ""
		}
		if c.State == analysis.StateLatency {
			return deep.QD * 2, 1, fmt.Sprintf("latency still %s at QD%d: a deeper queue", units.Latency(deep.LatNs), deep.QD)
		}
		return deep.QD * 2, 1, fmt.Sprintf("still rising %.0f%% per doubling at QD%d: a deeper queue", 100*c.Gain, deep.QD)
	}
	// On the plateau: one fio job out of CPU gets a second job.
	if c.Kind == result.CodeCPU && c.CPURetry == nil {
		for _, p := range c.Points {
			if p.QD == deep.QD && p.Jobs == 1 && p.CPUBound && deep.QD >= cpuRetryJobs {
				return deep.QD, cpuRetryJobs, fmt.Sprintf("one fio job ran out of CPU at QD%d: %d jobs", deep.QD, cpuRetryJobs)
			}
		}
	}
	// Bracket the knee within a doubling: the deepest depth below it and
	// the shallowest on the plateau.
	below, onIt := 0, 0
	for _, p := range c.Points {
		if c.PointCode(&p) == result.CodeLatency && p.QD > below {
			below = p.QD
		}
	}
	for _, p := range c.Points {
		if p.QD > below && (onIt == 0 || p.QD < onIt) {
			onIt = p.QD
		}
	}
	if below > 0 && onIt > 2*below {
		q := below * 2
		for have[q] && q < onIt {
			q *= 2
		}
		if q < onIt && !have[q] {
			return q, 1, fmt.Sprintf("the knee is between QD%d and QD%d", below, onIt)
		}
	}
	return 0, 0, ""
}

// endGroup marks the held result as the last of group (when it is in it).
func (p *planner) endGroup(group string) {
	if group != "" && p.held != nil && p.held.Test.Group == group {
		p.heldEnds = group
	}
}

// burst writes until a cliff shows and its lower plateau has lasted, or
// for its share of the budget.
func (p *planner) burst(ctx context.Context) error {
	maxS := math.Min(math.Min(burstMaxS, burstShare*p.o.Budget.Seconds()), p.left()-p.over.seconds()-rampS-p.minRest())
	if p.o.Sustained {
		maxS = p.left() - p.over.seconds() - rampS - p.minRest()
	}
	if maxS < burstMinS {
		p.note("burst check: %.0f s left of the budget, less than the %d s it needs: a burst bucket or write cache is not excluded", math.Max(maxS, 0), burstMinS)
		return nil
	}
	spec := burstSpec(maxS)
	p.say("burst", "sustained 4k writes for up to %.0f s, looking for a burst cliff", maxS)
	res, err := p.test(ctx, spec, CliffSeen(), "")
	if err != nil {
		return err
	}
	if res.Status == "ok" {
		cliff := false
		for _, f := range analysis.ResultFindings(&res) {
			cliff = cliff || f.Kind == result.KindCliff
		}
		if !cliff {
			more := "'iolens diagnose --sustained' writes until one runs out"
			if p.o.Sustained {
				more = "a longer --budget writes for longer"
			}
			p.note("burst: no cliff in %s of sustained 4k writes (after the layout's): a burst bucket or write cache lasting longer would not show; %s",
				units.FormatSeconds(res.RuntimeS()), more)
		}
	}
	return nil
}

// firstLine is the first line of s, at most 200 characters.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
