package runner

import "github.com/iolens/iolens/internal/result"

// SuiteView and TestView add to the JSON of a test what follows from its
// fields: whether it runs for its runtime whatever its size.
type SuiteView struct {
	result.Suite
	Tests []TestView `json:"tests"`
}

type TestView struct {
	result.TestSpec
	TimeBased bool `json:"time_based"`
}

// SuiteViews are suites as 'iolens suites -o json' shows them.
func SuiteViews(in []result.Suite) []SuiteView {
	out := make([]SuiteView, 0, len(in))
	for _, s := range in {
		v := SuiteView{Suite: s, Tests: []TestView{}}
		for _, t := range s.Tests {
			v.Tests = append(v.Tests, TestView{TestSpec: t, TimeBased: t.TimeBased()})
		}
		out = append(out, v)
	}
	return out
}
