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
	rampS      = 1
	rateMinS   = 3
	rateMaxS   = 15
	sweepMinS  = 2
	sweepMaxS  = 8
	fsyncMinS  = 2
	fsyncMaxS  = 30
	fsyncMinN  = 300
	burstMinS  = 20
	burstMaxS  = 60
	burstShare = 0.25 // of the budget, at most
	// minRest is what the ceilings, QD1 and fsync need at least after
	// the burst check.
	minRest      = 5*(rampS+rateMinS+overheadS) + 10 + overheadS
	layoutShare  = 0.12 // of the budget, at most, for laying the file out
	overheadS    = 2    // fio start and stop around each step
	sweepGroup   = analysis.SweepPrefix + "randread-4k"
	etcdLimitNs  = analysis.EtcdLimitNs
	confidence   = 0.95
	quantileP    = 0.99
	flatDoubling = 2 // doublings with no gain that end a sweep
)

// Plan runs the diagnose plan on session s. Each result goes to emit as
// soon as its step ends; last marks the result that ends the QD sweep, so
// that the caller's analysis closes the group. It returns what could not
// be established.
func Plan(ctx context.Context, s *runner.Session, o Options, emit func(r result.Result, endsGroup string) error, progress func(Event)) ([]string, error) {
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
	return unknown, errors.Join(err, p.flush())
}

type planner struct {
	s        *runner.Session
	o        Options
	emit     func(result.Result, string) error
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
}

// hold emits the result held so far and holds r instead.
func (p *planner) hold(r result.Result, endsGroup string) error {
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
	return p.emit(r, p.heldEnds)
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
	res := p.s.Test(ctx, spec, runner.TestOptions{Index: p.index, Repeat: 1, N: p.index, Stop: stop})
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
	out := []result.TestSpec{
		rate("randread-4k-qd32", "randread", 4096, 32, rateMaxS), rate("randwrite-4k-qd32", "randwrite", 4096, 32, rateMaxS),
		rate("read-1m-qd8", "read", 1<<20, 8, rateMaxS), rate("write-1m-qd8", "write", 1<<20, 8, rateMaxS),
		rate("randread-4k-qd1", "randread", 4096, 1, rateMaxS), fsyncSpec(fsyncMaxS), burstSpec(burstMaxS),
	}
	for _, qd := range []int{2, 4, 8, 16, 64} {
		out = append(out, rate(fmt.Sprintf("randread-4k-qd%d", qd), "randread", 4096, qd, sweepMaxS))
	}
	return out
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
	type rateStep struct {
		spec  result.TestSpec
		group string
	}
	steps := []rateStep{
		{rate("randread-4k-qd32", "randread", 4096, 32, rateMaxS), sweepGroup},
		{rate("randwrite-4k-qd32", "randwrite", 4096, 32, rateMaxS), ""},
		{rate("read-1m-qd8", "read", 1<<20, 8, rateMaxS), ""},
		{rate("write-1m-qd8", "write", 1<<20, 8, rateMaxS), ""},
		{rate("randread-4k-qd1", "randread", 4096, 1, rateMaxS), sweepGroup},
	}
	// What the later steps need at least, so the ceilings never eat it.
	var qd32, qd1 *result.Result
	reserve := func(after int) float64 {
		return float64(len(steps)-after-1)*(rampS+rateMinS+overheadS) + 10 + overheadS // and fsync's least
	}
	for i, st := range steps {
		maxS := math.Min(rateMaxS, p.left()-reserve(i)-rampS-overheadS)
		if maxS < rateMinS {
			p.note("%s: no time left in the budget", st.spec.Name)
			continue
		}
		st.spec.RuntimeS, st.spec.Group = math.Ceil(maxS), st.group
		p.say(st.spec.Name, "%s until its rate is known to %.0f%% (at most %.0f s)", st.spec.Name, p.o.Precision*100, maxS)
		ends := ""
		if st.spec.IODepth == 1 && p.left() < sweepMinS*2+reserve(len(steps)-1) {
			ends = sweepGroup // no time for a sweep after QD1
		}
		res, err := p.test(ctx, st.spec, Converged(rateMinS, p.o.Precision), ends)
		if err != nil {
			return p.unknown, err
		}
		switch st.spec.Name {
		case "randread-4k-qd32":
			qd32 = &res
		case "randread-4k-qd1":
			qd1 = &res
		}
	}
	if err := p.fsync(ctx); err != nil {
		return p.unknown, err
	}
	return p.unknown, p.sweep(ctx, qd1, qd32)
}

// fsync measures etcd's pattern until its p99 is certainly on one side
// of 10 ms.
func (p *planner) fsync(ctx context.Context) error {
	maxS := math.Min(fsyncMaxS, p.left()-overheadS)
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

// sweep doubles the queue depth of 4k random reads between QD1 and QD32
// until two doublings add nothing, or QD1 already reaches the QD32 rate.
func (p *planner) sweep(ctx context.Context, qd1, qd32 *result.Result) error {
	if qd1 == nil || qd32 == nil || qd1.Read == nil || qd32.Read == nil {
		p.note("QD sweep: needs the QD1 and QD32 reads")
		return nil
	}
	top := qd32.Read.IOPS
	if qd1.Read.IOPS >= top*(1-2*p.o.Precision) {
		return nil // flat from QD1: knee at 1, the QD1 result ended the group
	}
	prev, flat := qd1.Read.IOPS, 0
	depths := []int{2, 4, 8, 16, 64}
	for i, qd := range depths {
		maxS := math.Min(sweepMaxS, p.left()-burstMinS-overheadS-rampS)
		if maxS < sweepMinS {
			p.note("QD sweep: stopped at QD%d for lack of time; the knee is not established", qd/2)
			return nil
		}
		if qd == 64 && prev < top*(1-2*p.o.Precision) {
			break // QD32 is above QD16 and the sweep has it
		}
		spec := rate(fmt.Sprintf("randread-4k-qd%d", qd), "randread", 4096, qd, maxS)
		spec.RuntimeS, spec.Group = math.Ceil(maxS), sweepGroup
		ends := ""
		last := i == len(depths)-1 || depths[i+1] == 64 && prev >= top
		p.say(spec.Name, "QD sweep: %s (at most %.0f s)", spec.Name, maxS)
		// Whether this depth ends the sweep is known only from its
		// figure, which the analysis needs before it is emitted: the
		// step runs first, then decides.
		p.index++
		res := p.s.Test(ctx, spec, runner.TestOptions{Index: p.index, Repeat: 1, N: p.index, Stop: Converged(sweepMinS, p.o.Precision)})
		iops := 0.0
		if res.Read != nil {
			iops = res.Read.IOPS
		}
		if iops <= prev*(1+2*p.o.Precision) {
			flat++
		} else {
			flat = 0
		}
		if last || flat >= flatDoubling || iops >= top*(1-p.o.Precision) || res.Status != "ok" {
			ends = sweepGroup
		}
		if err := p.hold(res, ends); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ends != "" {
			return nil
		}
		prev = math.Max(prev, iops)
	}
	return nil
}

// burst writes until a cliff shows and its lower plateau has lasted, or
// for its share of the budget.
func (p *planner) burst(ctx context.Context) error {
	maxS := math.Min(math.Min(burstMaxS, burstShare*p.o.Budget.Seconds()), p.left()-overheadS-rampS-minRest)
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
			p.note("burst: no cliff in %s of sustained 4k writes (after the layout's): a burst bucket or write cache lasting longer would not show; run 'iolens run --suite sustained-write' to look further",
				units.FormatSeconds(res.RuntimeS()))
		}
	}
	return nil
}

func runtimeS(r *result.Result) float64 {
	var ms int64
	for _, d := range []*result.DirResult{r.Read, r.Write} {
		if d != nil {
			ms = max(ms, d.RuntimeMs)
		}
	}
	return float64(ms) / 1000
}
