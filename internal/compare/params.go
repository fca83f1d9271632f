package compare

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
)

// param is one parameter a comparison must hold equal.
type param struct {
	name string
	of   func(r *result.Result) string
	// byDesign says a plan varies it itself: diagnose stops each test
	// when its figure is known, so two diagnose runs differ there by
	// design, not by a choice a comparison must warn of.
	byDesign bool
}

var params = []param{
	{name: "pattern", of: func(r *result.Result) string { return r.Test.RW }},
	{name: "block size", of: func(r *result.Result) string { return units.FormatSize(r.Test.BlockSize) }},
	{name: "queue depth", of: func(r *result.Result) string {
		s := strconv.Itoa(max(1, r.Test.IODepth))
		if r.Test.NumJobs > 1 {
			s += fmt.Sprintf(" x %d jobs", r.Test.NumJobs)
		}
		return s
	}},
	{name: "IO mode", of: func(r *result.Result) string {
		switch {
		case r.Test.Direct:
			return "direct"
		case r.Test.DirectUnknown:
			return "unknown (not in fio's output)"
		}
		return "buffered"
	}},
	{name: "engine", of: engine},
	{name: "runtime", of: func(r *result.Result) string {
		if r.Test.RuntimeS <= 0 {
			return "until the size is done"
		}
		return units.FormatSeconds(r.Test.RuntimeS)
	}, byDesign: true},
	{name: "ramp", of: func(r *result.Result) string { return units.FormatSeconds(r.Test.RampS) }},
	{name: "file size", of: func(r *result.Result) string {
		n := r.Test.SizeBytes
		if n <= 0 {
			n = r.Target.SizeBytes
		}
		if n <= 0 {
			return "unknown"
		}
		return units.HumanBytes(float64(n))
	}},
	{name: "sample interval", of: func(r *result.Result) string {
		return strconv.FormatFloat(r.Interval()*1000, 'f', -1, 64) + " ms"
	}},
}

// plan is the suite of diagnose's adaptive plan (plan.Suite's name).
const plan = "diagnose"

// engine is the IO engine a test used: its typed field, or the ioengine
// of its job file's options.
func engine(r *result.Result) string {
	e := r.Test.IOEngine
	for _, o := range r.Test.Options {
		if strings.EqualFold(strings.TrimSpace(o.Key), "ioengine") {
			e = o.Value
		}
	}
	if e == "" {
		return "fio's default"
	}
	return e
}

// mismatches lists every parameter whose values differ between the
// operands that ran a test, one line per parameter and set of values,
// with the tests it concerns.
func mismatches(ops []Operand, order []key) []Mismatch {
	var out []Mismatch
	at := map[string]int{} // param + values -> index in out
	tests := map[string]bool{}
	shared := 0
	// Each operand's good results by test, found once: a lookup per
	// test and parameter would otherwise read every result again.
	okByTest := make([]map[string][]*result.Result, len(ops))
	for i, op := range ops {
		okByTest[i] = map[string][]*result.Result{}
		for j := range op.Results {
			if r := &op.Results[j]; r.Status == "ok" {
				okByTest[i][r.Test.Name] = append(okByTest[i][r.Test.Name], r)
			}
		}
	}
	// The tests some operand ran outside diagnose's plan, found once.
	unplanned := map[string]bool{}
	for _, op := range ops {
		for j := range op.Results {
			if r := &op.Results[j]; r.Suite != plan {
				unplanned[r.Test.Name] = true
			}
		}
	}
	for _, k := range order {
		if tests[k.test] {
			continue
		}
		tests[k.test] = true
		ran := 0
		for i := range ops {
			if len(okByTest[i][k.test]) > 0 {
				ran++
			}
		}
		if ran >= 2 {
			shared++
		}
		planned := !unplanned[k.test]
		for _, p := range params {
			if p.byDesign && planned {
				continue
			}
			vals := make([]string, len(ops))
			distinct := map[string]bool{}
			present := 0
			for i := range ops {
				set := map[string]bool{}
				for _, r := range okByTest[i][k.test] {
					set[p.of(r)] = true
				}
				if len(set) == 0 {
					continue
				}
				present++
				vs := make([]string, 0, len(set))
				for v := range set {
					vs = append(vs, v)
				}
				sort.Strings(vs)
				vals[i] = strings.Join(vs, ", ")
				distinct[vals[i]] = true
			}
			if present < 2 || len(distinct) < 2 {
				continue
			}
			id := p.name + "\x00" + strings.Join(vals, "\x00")
			i, ok := at[id]
			if !ok {
				i = len(out)
				at[id] = i
				out = append(out, Mismatch{Param: p.name, Values: vals})
			}
			out[i].Tests = append(out[i].Tests, k.test)
		}
	}
	for i := range out {
		out[i].Shared = shared
	}
	return out
}
