package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/spf13/cobra"
)

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
				return writeJSON(streams.Out, runner.SuiteViews(suites))
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
