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
}

var params = []param{
	{"pattern", func(r *result.Result) string { return r.Test.RW }},
	{"block size", func(r *result.Result) string { return units.FormatSize(r.Test.BlockSize) }},
	{"queue depth", func(r *result.Result) string {
		s := strconv.Itoa(max(1, r.Test.IODepth))
		if r.Test.NumJobs > 1 {
			s += fmt.Sprintf(" x %d jobs", r.Test.NumJobs)
		}
		return s
	}},
	{"IO mode", func(r *result.Result) string {
		switch {
		case r.Test.Direct:
			return "direct"
		case r.Test.DirectUnknown:
			return "unknown (not in fio's output)"
		}
		return "buffered"
	}},
	{"engine", engine},
	{"runtime", func(r *result.Result) string {
		if r.Test.RuntimeS <= 0 {
			return "until the size is done"
		}
		return units.FormatSeconds(r.Test.RuntimeS)
	}},
	{"ramp", func(r *result.Result) string { return units.FormatSeconds(r.Test.RampS) }},
	{"file size", func(r *result.Result) string {
		n := r.Test.SizeBytes
		if n <= 0 {
			n = r.Target.SizeBytes
		}
		if n <= 0 {
			return "unknown"
		}
		return units.HumanBytes(float64(n))
	}},
	{"sample interval", func(r *result.Result) string {
		return strconv.FormatFloat(r.Interval()*1000, 'f', -1, 64) + " ms"
	}},
}

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
	for _, k := range order {
		if tests[k.test] {
			continue
		}
		tests[k.test] = true
		ran := 0
		for _, op := range ops {
			for j := range op.Results {
				if op.Results[j].Status == "ok" && op.Results[j].Test.Name == k.test {
					ran++
					break
				}
			}
		}
		if ran >= 2 {
			shared++
		}
		for _, p := range params {
			vals := make([]string, len(ops))
			distinct := map[string]bool{}
			present := 0
			for i, op := range ops {
				set := map[string]bool{}
				for j := range op.Results {
					r := &op.Results[j]
					if r.Status != "ok" || r.Test.Name != k.test {
						continue
					}
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
