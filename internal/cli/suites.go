package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/spf13/cobra"
)

// suiteView and testView add to the JSON of a test what follows from its
// fields: whether it runs for its runtime whatever its size.
type suiteView struct {
	result.Suite
	Tests []testView `json:"tests"`
}

type testView struct {
	result.TestSpec
	TimeBased bool `json:"time_based"`
}

func suitesJSON(in []result.Suite) []suiteView {
	out := make([]suiteView, 0, len(in))
	for _, s := range in {
		v := suiteView{Suite: s, Tests: []testView{}}
		for _, t := range s.Tests {
			v.Tests = append(v.Tests, testView{TestSpec: t, TimeBased: t.TimeBased()})
		}
		out = append(out, v)
	}
	return out
}

func newSuitesCommand(streams IOStreams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "suites [NAME]",
		Short: "List the built-in suites and each test's parameters",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			suites := runner.Suites()
			if len(args) == 1 {
				s, err := runner.LookupSuite(args[0])
				if err != nil {
					return err
				}
				suites = []result.Suite{s}
			}
			switch output {
			case "json":
				enc := json.NewEncoder(streams.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(suitesJSON(suites))
			case "text":
			default:
				return &UsageError{Err: fmt.Errorf("unknown output format %q", output), Help: "valid formats: text, json"}
			}
			for i, s := range suites {
				if i > 0 {
					fmt.Fprintln(streams.Out)
				}
				fmt.Fprintf(streams.Out, "%s: %s\n", s.Name, s.Description)
				tw := tabwriter.NewWriter(streams.Out, 0, 0, 2, ' ', 0)
				for _, t := range s.Tests {
					fmt.Fprintf(tw, "  %s\t%s\n", t.Name, t.Summary())
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}
