package analysis

import (
	"fmt"
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// Annotate replaces the findings of every result with a fresh analysis:
// each result on its own, then the QD sweeps (on the sweep's last test)
// and the instability of repeated tests (on the last repeat). It is what
// iolens analyze does to saved results.
func Annotate(rs []result.Result) {
	for i := range rs {
		if rs[i].Suite == "watch" {
			continue // a watch log's findings are the watch's own, drawn live
		}
		rs[i].Findings = ResultFindings(&rs[i])
	}
	ptrs := make([]*result.Result, len(rs))
	for i := range rs {
		ptrs[i] = &rs[i]
	}
	// Limits and the disk model, across each run.
	Revise(rs)
	// QD sweeps, per run.
	type gkey struct{ run, target, group string }
	var order []gkey
	groups := map[gkey][]*result.Result{}
	for _, r := range ptrs {
		k := gkey{r.RunID, targetKey(r), r.Test.Group}
		if r.Suite == "fio" && r.Test.Group == "" {
			// Plain fio output, one file per depth: runs of the same
			// pattern and block size form an implicit sweep.
			k = gkey{"fio", "", fmt.Sprintf("%s%s-%s", SweepPrefix, r.Test.RW, units.FormatSize(r.Test.BlockSize))}
		} else if !strings.HasPrefix(r.Test.Group, SweepPrefix) {
			continue
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range order {
		members := groups[k]
		var others []*result.Result
		for _, r := range ptrs {
			if r.RunID == k.run && targetKey(r) == k.target && r.Test.Group != k.group {
				others = append(others, r)
			}
		}
		if k.run == "fio" {
			others = nil
			for _, r := range ptrs {
				if r.Suite == "fio" && !contains(members, r) {
					others = append(others, r)
				}
			}
		}
		if sw, ok := AnalyzeSweep(strings.TrimPrefix(k.group, SweepPrefix), members, others); ok {
			last := lastOf(members)
			last.Findings = append(last.Findings, SweepFinding(sw))
		}
	}
	// Repeats.
	for _, tr := range Repeats(rs) {
		fs := unstableFindings(tr)
		if len(fs) == 0 {
			continue
		}
		var last *result.Result
		for _, r := range ptrs {
			if r.RunID == tr.RunID && r.Test.Name == tr.Test && r.Status == "ok" && (last == nil || r.Repeat > last.Repeat) {
				last = r
			}
		}
		last.Findings = append(last.Findings, fs...)
	}
}

// Revise reads the limit of every result's directions again off the disk
// model fitted over each whole run, and puts each curve's model on the
// last result of the run that is on it. A run's results are analysed as
// they come, each against the results before it; once the run is
// complete (or read back from a file), Revise makes every test's limit
// and the headline one statement over all of it. Other findings are kept.
func Revise(rs []result.Result) {
	var fs []dirFacts
	for i := range rs {
		fs = append(fs, allFacts(&rs[i])...)
	}
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
		for _, f := range fs {
			if f.r != r {
				continue
			}
			c, p := m.Curve(r, f.dir)
			r.Findings = append(r.Findings, limitFinding(f, c, p))
			if c != nil {
				last[c.Key] = i
			}
		}
	}
	for i := range m.Curves {
		c := &m.Curves[i]
		if at, ok := last[c.Key]; ok {
			rs[at].Findings = append(rs[at].Findings, ModelFinding(c))
		}
	}
}

func contains(rs []*result.Result, r *result.Result) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

func targetKey(r *result.Result) string { return r.Target.Kind + ":" + r.Target.Path }

func lastOf(rs []*result.Result) *result.Result {
	last := rs[0]
	for _, r := range rs[1:] {
		qd := func(x *result.Result) int { return x.Test.IODepth * x.Test.NumJobs }
		if r.Repeat > last.Repeat || r.Repeat == last.Repeat && (r.Index > last.Index || r.Index == last.Index && qd(r) > qd(last)) {
			last = r
		}
	}
	return last
}

// Session analyses the results of a run as they come, so that each is
// saved with its findings. Group findings (a QD sweep, the instability of
// a repeated test) land on the result that completes the group.
type Session struct {
	tests   []result.TestSpec
	repeats int
	done    []result.Result
	// facts are the limit inference's view of every result so far.
	facts []dirFacts
	// closing names groups whose next result is their last (a plan that
	// decides as it goes says so; a suite's order says it otherwise).
	closing map[string]bool
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
	lim, curves := limitFindings(r, s.facts)
	r.Findings = append(r.Findings, lim...)
	for _, c := range curves {
		r.Findings = append(r.Findings, ModelFinding(c))
	}
	var sweepCurve *Curve
	if len(curves) > 0 {
		sweepCurve = curves[0]
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
	s.done = append(s.done, light)
	for _, f := range allFacts(r) {
		lr := &result.Result{RunID: r.RunID, Suite: r.Suite, Status: r.Status, Test: r.Test, Target: r.Target} // the facts keep the full result alive otherwise
		f.r = lr
		s.facts = append(s.facts, f)
	}

	if r.Repeat < s.repeats || r.Status != "ok" {
		return
	}
	if g := r.Test.Group; strings.HasPrefix(g, SweepPrefix) && (s.closing[g] || s.closing == nil && s.lastOfGroup(r.Index, g)) {
		delete(s.closing, g)
		var members, others []*result.Result
		for i := range s.done {
			d := &s.done[i]
			if d.RunID != r.RunID {
				continue
			}
			if d.Test.Group == g {
				members = append(members, d)
			} else {
				others = append(others, d)
			}
		}
		if sw, ok := analyzeSweep(strings.TrimPrefix(g, SweepPrefix), members, others, sweepCurve); ok {
			r.Findings = append(r.Findings, SweepFinding(sw))
		}
	}
	if s.repeats > 1 {
		var same []result.Result
		for _, d := range s.done {
			if d.RunID == r.RunID && d.Test.Name == r.Test.Name {
				same = append(same, d)
			}
		}
		for _, tr := range Repeats(same) {
			r.Findings = append(r.Findings, unstableFindings(tr)...)
		}
	}
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
