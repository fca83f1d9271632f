package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/spf13/cobra"
)

func newSuitesCommand(streams IOStreams) *cobra.Command {
	var output *format
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
			return output.print(streams.Out, runner.SuiteViews(suites), func(w io.Writer) error { return writeSuites(w, suites) })
		},
	}
	output = formatFlag(cmd.Flags(), report.Listings, "format: ")
	return cmd
}

// writeSuites lists suites and their tests.
func writeSuites(w io.Writer, suites []result.Suite) error {
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
