package diagnosis

import (
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
	// order each first appears; a watch log has none.
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
// diagnosis of each run and target (watch logs keep their own findings
// and have none).
func Replay(rs []result.Result) Outcome {
	return replayWith(rs, func(g []result.Result, _ []string) Diagnosis { return Saved(g) })
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
	out := Outcome{}
	groups := Groups(rs)
	for _, g := range groups {
		if g[0].Suite != "watch" {
			out.Diagnoses = append(out.Diagnoses, build(g, nil))
		}
	}
	// The revised copies, in the results' own order.
	out.Results = make([]result.Result, 0, len(rs))
	byKey := map[string][]result.Result{}
	for _, g := range groups {
		byKey[groupKey(&g[0])] = g
	}
	for i := range rs {
		k := groupKey(&rs[i])
		out.Results = append(out.Results, byKey[k][0])
		byKey[k] = byKey[k][1:]
	}
	return out
}
