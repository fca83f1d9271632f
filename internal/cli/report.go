package cli

import (
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/report"
	"github.com/spf13/cobra"
)

func newReportCommand(streams IOStreams) *cobra.Command {
	var output string
	var verbose bool
	var files outputFiles
	var expect expectOptions
	cmd := &cobra.Command{
		Use:   "report FILE...",
		Short: "Re-render saved results (iolens NDJSON, or fio JSON/json+ output)",
		Example: `  iolens report results.ndjson
  iolens report -o md results.ndjson
  iolens report --html report.html results.ndjson
  fio --output-format=json+ job.fio > out.json && iolens report out.json
  iolens report results.ndjson --expect azure:P15 --vm Standard_DS2_v2`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := report.Results.Lookup(output)
			if err != nil {
				return &UsageError{Err: err, Help: hint.Of(err)}
			}
			if err := files.resolve(output, streams.ErrOut, true, reads{inputs: args}); err != nil {
				return err
			}
			diag, err := expect.diagnoser(cmd)
			if err != nil {
				return err
			}
			rs, err := report.ReadFilesContext(cmd.Context(), args, streams.In, warnSkipped(streams.ErrOut))
			if err != nil {
				return err
			}
			for i := range rs {
				if diag != nil {
					diag(&rs[i])
				}
			}
			in := report.Input{Outcome: diagnosis.Replay(rs), Verbose: verbose}
			if err := files.writeHTML(report.Results, in); err != nil {
				return err
			}
			if err := files.writeCopy(in.Results); err != nil {
				return err
			}
			if !files.stdout() {
				return nil
			}
			return writeReport(streams.Out, format, in)
		},
	}
	outputFlag(cmd.Flags(), &output, report.Results, "format: ")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "text: every finding of every test, with fio's details and the evidence")
	files.addFlags(cmd.Flags(), "also write the results (with their expectation findings) to this NDJSON file")
	expect.addFlags(cmd)
	return cmd
}
