package diagnosis

import (
	"slices"

	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/result"
)

// Outcome is what a run leaves, or what saved results replay to: the
// results, each with its findings read over its whole run, and the
// diagnosis of each run and target among them, built once, which every
// report reads and none builds.
type Outcome struct {
	Results []result.Result
	// Diagnoses holds one diagnosis per run and target of Results, in the
	// order each first appears (a watch log's says what it can: a watch
	// measured no curve).
	Diagnoses []Diagnosis
}

// Diagnosis is the diagnosis of the outcome's first run and target (nil
// when there is none): the run's, when it is one run on one target.
func (o *Outcome) Diagnosis() *Diagnosis {
	if len(o.Diagnoses) == 0 {
		return nil
	}
	return &o.Diagnoses[0]
}

// For is the diagnosis of g, one run and target's results (nil when the
// outcome has none of it).
func (o *Outcome) For(g []result.Result) *Diagnosis {
	if len(g) == 0 {
		return nil
	}
	k := groupKey(&g[0])
	for i := range o.Diagnoses {
		d := &o.Diagnoses[i]
		if d.RunID+"\x00"+d.Target.Kind+"\x00"+d.Target.Path == k {
			return d
		}
	}
	return nil
}

// groupKey names the run and target r belongs to: the results one
// diagnosis is built from.
func groupKey(r *result.Result) string {
	return r.RunID + "\x00" + r.Target.Kind + "\x00" + r.Target.Path
}

// Groups splits rs by run and target, in the order each first appears.
func Groups(rs []result.Result) [][]result.Result {
	var keys []string
	m := map[string][]result.Result{}
	for i := range rs {
		k := groupKey(&rs[i])
		if _, ok := m[k]; !ok {
			keys = append(keys, k)
		}
		m[k] = append(m[k], rs[i])
	}
	out := make([][]result.Result, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// Replay is the outcome of saved results, as the run that made them
// left it: each run's findings read again over the whole run, and the
// diagnosis of each run and target.
func Replay(rs []result.Result) Outcome {
	rs = slices.Clone(rs)
	// Plain fio output read together is one sweep across the files (a
	// file per depth is how such sweeps are kept), as the analysis reads it.
	plain := result.Subset(rs, (*result.Result).PlainFio, analysis.Revise)
	return replayWith(rs, func(g []result.Result, _ []string) Diagnosis {
		if plain && g[0].PlainFio() {
			return Of(g, nil)
		}
		return Saved(g)
	})
}

// Saved is the diagnosis of saved results (one run and target's, or a
// set compared as one): their limits and curves read again off the model
// of each whole run, in place, then the diagnosis built. Results analysed
// as they came were each read against the results before them only.
func Saved(rs []result.Result) Diagnosis {
	analysis.Revise(rs)
	return Of(rs, nil)
}

// replayWith is Replay building each diagnosis with build.
func replayWith(rs []result.Result, build func(rs []result.Result, unknown []string) Diagnosis) Outcome {
	out := Outcome{Results: slices.Clone(rs)}
	// Each run and target's results lie together, as a run and a file
	// keep them: each is revised in place, in the results' own order.
	if spans, ok := contiguous(out.Results); ok {
		for _, sp := range spans {
			out.Diagnoses = append(out.Diagnoses, build(out.Results[sp[0]:sp[1]], nil))
		}
		return out
	}
	// Interleaved (files of several runs read together): each group
	// revised apart, then put back in the results' order.
	groups := Groups(rs)
	byKey := map[string][]result.Result{}
	for _, g := range groups {
		out.Diagnoses = append(out.Diagnoses, build(g, nil))
		byKey[groupKey(&g[0])] = g
	}
	for i := range out.Results {
		k := groupKey(&out.Results[i])
		out.Results[i] = byKey[k][0]
		byKey[k] = byKey[k][1:]
	}
	return out
}

// contiguous splits rs into the spans of its runs and targets, when each
// lies in one piece.
func contiguous(rs []result.Result) ([][2]int, bool) {
	var spans [][2]int
	seen := map[string]bool{}
	for i := range rs {
		if i > 0 && groupKey(&rs[i]) == groupKey(&rs[i-1]) {
			spans[len(spans)-1][1] = i + 1
			continue
		}
		k := groupKey(&rs[i])
		if seen[k] {
			return nil, false
		}
		seen[k] = true
		spans = append(spans, [2]int{i, i + 1})
	}
	return spans, true
}
