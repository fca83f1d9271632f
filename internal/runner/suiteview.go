package runner

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/result"
)

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

// WriteSuites lists suites and their tests, as 'iolens suites' shows them.
func WriteSuites(w io.Writer, suites []result.Suite) error {
	for i, s := range suites {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s\n", s.Name, s.Description)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range s.Tests {
			fmt.Fprintf(tw, "  %s\t%s\n", t.Name, t.Summary())
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
