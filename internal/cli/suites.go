package cli

import (
	"io"

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
			return output.print(streams.Out, runner.SuiteViews(suites), func(w io.Writer) error { return runner.WriteSuites(w, suites) })
		},
	}
	output = formatFlag(cmd.Flags(), report.Listings, "format: ")
	return cmd
}
