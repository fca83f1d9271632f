package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Annotate replaces the findings of every result with a fresh analysis:
// the results replayed into one Session, as a run adds them as they come
// (each group closed at its last result), then Revise over the whole, as
// a run does when it ends. So 'iolens analyze' says what the live run
// said. Plain fio outputs of one pattern and block size at several depths
// form an implicit QD sweep, replayed from the shallowest depth. A watch
// log's findings are the watch's own, drawn live, and are kept.
func Annotate(rs []result.Result) {
	order := make([]int, 0, len(rs))
	for i := range rs {
		if rs[i].Suite != "watch" {
			order = append(order, i)
		}
	}
	// The order the runner made them in (repeat by repeat, test by
	// test), which files read back keep; fio outputs of one sweep, one
	// per file, by depth.
	qd := func(r *result.Result) int { return r.Test.IODepth * r.Test.NumJobs }
	sort.SliceStable(order, func(a, b int) bool {
		x, y := &rs[order[a]], &rs[order[b]]
		if x.Repeat != y.Repeat {
			return x.Repeat < y.Repeat
		}
		if x.Index != y.Index {
			return x.Index < y.Index
		}
		return qd(x) < qd(y)
	})
	s := &Session{repeats: 1, ends: map[*result.Result]bool{}, runRepeats: map[string]int{}}
	last := map[sweepKey]*result.Result{}
	for _, i := range order {
		r := &rs[i]
		s.runRepeats[r.RunID] = max(s.runRepeats[r.RunID], r.Repeat, 1)
		if k, ok := sweepOf(r, true); ok {
			last[k] = r
		}
	}
	for _, r := range last {
		s.ends[r] = true
	}
	for _, i := range order {
		rs[i].Findings = nil
		s.Add(&rs[i])
	}
	// Limits and the disk model, across each run.
	Revise(rs)
}

// sweepKey names a QD sweep: its group within a run's target, or, for
// plain fio outputs (implicit), its pattern and block size across them.
type sweepKey struct{ scope, group string }

// sweepOf is the sweep r belongs to; implicit counts plain fio outputs
// with no group, which only a replay of known results can close.
func sweepOf(r *result.Result, implicit bool) (sweepKey, bool) {
	if implicit && r.Suite == "fio" && r.Test.Group == "" {
		return sweepKey{"fio", fmt.Sprintf("%s%s-%s", SweepPrefix, r.Test.RW, units.FormatSize(r.Test.BlockSize))}, true
	}
	if strings.HasPrefix(r.Test.Group, SweepPrefix) {
		return sweepKey{r.RunID + "\x00" + targetKey(r), r.Test.Group}, true
	}
	return sweepKey{}, false
}

// Revise reads the limit of every result's directions again off the disk
// model fitted over each whole run, and puts each curve's model on the
// last result of the run that is on it. A run's results are analysed as
// they come, each against the results before it; once the run is
// complete (or read back from a file), Revise makes every test's limit
// and the headline one statement over all of it. Other findings are kept.
func Revise(rs []result.Result) {
	var fs []dirFacts
	// own[i] is where result i's facts start in fs.
	own := make([]int, len(rs)+1)
	for i := range rs {
		own[i] = len(fs)
		fs = append(fs, allFacts(&rs[i])...)
	}
	own[len(rs)] = len(fs)
	m := fitFacts(fs)
	last := map[CurveKey]int{}
	for i := range rs {
		r := &rs[i]
		kept := r.Findings[:0:0]
		for _, f := range r.Findings {
			if f.Kind != result.KindLimit && f.Kind != result.KindModel {
				kept = append(kept, f)
			}
		}
		r.Findings = kept
		for _, f := range fs[own[i]:own[i+1]] {
			c, p, pf := m.locate(r, f.dir)
			if pf != nil {
				f = *pf // as the curve knows it
			}
			r.Findings = append(r.Findings, limitFinding(f, c, p))
			if c != nil {
				last[c.Key] = i
			}
		}
	}
	for i := range m.Curves {
		c := &m.Curves[i]
		if at, ok := last[c.Key]; ok {
			rs[at].Findings = append(rs[at].Findings, modelFinding(c))
		}
	}
}

func targetKey(r *result.Result) string { return r.Target.Kind + ":" + r.Target.Path }

// Session analyses the results of a run as they come, so that each is
// saved with its findings. Group findings (a QD sweep, the instability of
// a repeated test) land on the result that completes the group.
type Session struct {
	tests   []result.TestSpec
	repeats int
	done    []result.Result
	// facts are the limit inference's view of every result so far, by
	// the scope of the curves they can be on (modelScope): a result's
	// limits read only its own scope's, so a run over many targets or
	// nodes does not refit every other one's curves at each result.
	facts map[[2]string][]dirFacts
	// closing names groups whose next result is their last (a plan that
	// decides as it goes says so; a suite's order says it otherwise).
	closing map[string]bool
	// ends are the results that end their sweep, and runRepeats each
	// run's repeats, when the results are known beforehand (Annotate).
	ends       map[*result.Result]bool
	runRepeats map[string]int
	// byTest indexes done by run and test, for the repeats of a test;
	// bySweep by sweep, for the members of the sweep a result closes.
	byTest  map[[2]string][]int
	bySweep map[sweepKey][]int
	// replay holds a replay's facts by scope, each curve fitted when a
	// sweep needs it and kept until a new fact is on it: a replay of many
	// shapes fits each once, not every curve again at every sweep.
	replay map[[2]string]*replayScope
}

// replayScope is one scope's facts and curves in a replay, the curves in
// the order their first facts came (fitFacts's order).
type replayScope struct {
	keys   []CurveKey
	facts  map[CurveKey][]dirFacts
	fitted map[CurveKey]*Curve
	// capped are the curves fitted capped, which crossSizes compares.
	capped map[CurveKey]bool
	dirty  []CurveKey
}

// replayFact adds f to its scope and marks its curve to be fitted again.
func (s *Session) replayFact(sc [2]string, f dirFacts) {
	k, ok := curveKey(f.r, f.dir)
	if !ok || f.r.Test.IOEngine == "null" {
		return // on no curve (fitFacts leaves it off)
	}
	if s.replay == nil {
		s.replay = map[[2]string]*replayScope{}
	}
	rp := s.replay[sc]
	if rp == nil {
		rp = &replayScope{facts: map[CurveKey][]dirFacts{}, fitted: map[CurveKey]*Curve{}, capped: map[CurveKey]bool{}}
		s.replay[sc] = rp
	}
	if _, seen := rp.facts[k]; !seen {
		rp.keys = append(rp.keys, k)
	}
	rp.facts[k] = append(rp.facts[k], f)
	if rp.fitted[k] != nil || len(rp.facts[k]) == 1 {
		rp.dirty = append(rp.dirty, k)
		delete(rp.fitted, k)
	}
}

// replayCurve is the curve of the first of own's directions that is on
// one, as fitFacts over the scope's facts so far would give it: the
// curves with new facts fitted again, the others as they were, and its
// kind compared across block sizes (crossSizes).
func (s *Session) replayCurve(sc [2]string, own []*result.Result) *Curve {
	rp := s.replay[sc]
	if rp == nil {
		return nil
	}
	for _, k := range rp.dirty {
		if rp.fitted[k] != nil {
			continue
		}
		c := fitCurve(k, rp.facts[k])
		rp.fitted[k] = &c
		rp.capped[k] = isCapped(&c)
	}
	rp.dirty = rp.dirty[:0]
	for _, lr := range own {
		for _, dir := range []string{"read", "write"} {
			k, ok := curveKey(lr, dir)
			if !ok || lr.Test.IOEngine == "null" || rp.fitted[k] == nil || !holds(rp.fitted[k], lr, dir) {
				continue
			}
			c := *rp.fitted[k]
			if isCapped(&c) {
				var others []*Curve
				for _, o := range rp.keys {
					if rp.capped[o] && o != k {
						others = append(others, rp.fitted[o])
					}
				}
				crossOne(&c, others)
			}
			return &c
		}
	}
	return nil
}

// holds says whether one of c's points took or keeps r's direction dir.
func holds(c *Curve, r *result.Result, dir string) bool {
	for _, p := range c.Points {
		for _, fs := range [][]dirFacts{p.facts, p.alt} {
			for _, f := range fs {
				if f.r == r && f.dir == dir {
					return true
				}
			}
		}
	}
	return false
}

// LastOfGroup says that the next result of group ends it: a plan that
// chooses its tests as it goes (diagnose's QD sweep) calls it before
// adding the group's last result, whose sweep finding is then computed.
func (s *Session) LastOfGroup(group string) {
	if s.closing == nil {
		s.closing = map[string]bool{}
	}
	s.closing[group] = true
}

// NewSession starts the analysis of a run of suite, repeated repeats
// times in the runner's order (every test, then again).
func NewSession(suite result.Suite, repeats int) *Session {
	return &Session{tests: suite.Tests, repeats: max(repeats, 1)}
}

// NewPlanSession starts the analysis of a run whose tests a plan chooses
// as it goes: a group ends where the plan says (LastOfGroup).
func NewPlanSession() *Session { return &Session{repeats: 1, closing: map[string]bool{}} }

// Add sets r's findings and remembers the figures later groups need.
func (s *Session) Add(r *result.Result) {
	r.Findings = append(r.Findings, ResultFindings(r)...)
	repeats := s.repeats
	if s.runRepeats != nil {
		repeats = s.runRepeats[r.RunID]
	}
	key, inSweep := sweepOf(r, s.ends != nil)
	closes := inSweep && r.Repeat >= repeats && r.Status == "ok" && s.closes(r, key.group)
	var sweepCurve *Curve
	if s.ends == nil {
		lim, curves := limitFindings(r, s.facts[modelScope(r)])
		r.Findings = append(r.Findings, lim...)
		for _, c := range curves {
			r.Findings = append(r.Findings, modelFinding(c))
		}
		if len(curves) > 0 {
			sweepCurve = curves[0]
		}
	}
	// Keep the summary figures only: series and raw output are not
	// needed again.
	light := *r
	light.FioSeries, light.Devices, light.System, light.Tail, light.FioJSON = nil, nil, nil, nil, nil
	light.Findings = nil
	for _, f := range r.Findings {
		if f.Kind == result.KindLimit { // a sweep's regime reads them
			light.Findings = append(light.Findings, f)
		}
	}
	if s.byTest == nil {
		s.byTest, s.bySweep = map[[2]string][]int{}, map[sweepKey][]int{}
	}
	tk := [2]string{r.RunID, r.Test.Name}
	s.byTest[tk] = append(s.byTest[tk], len(s.done))
	if inSweep {
		s.bySweep[key] = append(s.bySweep[key], len(s.done))
	}
	s.done = append(s.done, light)
	var own []*result.Result
	for _, f := range allFacts(r) {
		lr := &result.Result{RunID: r.RunID, Suite: r.Suite, Status: r.Status, Test: r.Test, Target: r.Target} // the facts keep the full result alive otherwise
		f.r = lr
		sc := modelScope(r)
		if s.ends != nil {
			s.replayFact(sc, f)
			own = append(own, lr)
			continue
		}
		if s.facts == nil {
			s.facts = map[[2]string][]dirFacts{}
		}
		s.facts[sc] = append(s.facts[sc], f)
	}
	if closes && s.ends != nil {
		// A replay's limits are all read again at its end (Revise): only
		// the sweep it closes needs the curve so far.
		sweepCurve = s.replayCurve(modelScope(r), own)
	}

	if r.Repeat < repeats || r.Status != "ok" {
		return
	}
	if closes {
		delete(s.closing, key.group)
		var members, others []*result.Result
		inGroup := map[int]bool{}
		for _, i := range s.bySweep[key] {
			members = append(members, &s.done[i])
			inGroup[i] = true
		}
		if sweepCurve == nil {
			// Only a sweep with no curve of its own fits one over the
			// results beside it.
			for i := range s.done {
				d := &s.done[i]
				switch {
				case inGroup[i]:
				case key.scope == "fio" && d.Suite == "fio",
					key.scope != "fio" && d.RunID == r.RunID && targetKey(d) == targetKey(r):
					others = append(others, d)
				}
			}
		}
		if sw, ok := analyzeSweep(strings.TrimPrefix(key.group, SweepPrefix), members, others, sweepCurve); ok {
			r.Findings = append(r.Findings, sweepFinding(sw))
		}
	}
	if repeats > 1 {
		var same []result.Result
		for _, i := range s.byTest[tk] {
			same = append(same, s.done[i])
		}
		for _, tr := range Repeats(same) {
			r.Findings = append(r.Findings, unstableFindings(tr)...)
		}
	}
}

// closes reports whether r ends its sweep group: known beforehand in a
// replay, said by a plan, or read from the suite's order.
func (s *Session) closes(r *result.Result, group string) bool {
	switch {
	case s.ends != nil:
		return s.ends[r]
	case s.closing != nil:
		return s.closing[group]
	}
	return s.lastOfGroup(r.Index, group)
}

// lastOfGroup reports whether no test after the 1-based index belongs to
// group.
func (s *Session) lastOfGroup(index int, group string) bool {
	for i := index; i < len(s.tests); i++ {
		if s.tests[i].Group == group {
			return false
		}
	}
	return true
}
