package cli

import (
	"github.com/iolens/iolens/internal/analysis"
	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/spf13/cobra"
)

func newReportCommand(streams IOStreams) *cobra.Command {
	var verbose bool
	var r replayOptions
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
			_, err := r.run(cmd, streams, args, true, false, report.Input{Verbose: verbose})
			return err
		},
	}
	outputFlag(cmd.Flags(), &r.output, report.Results, "format: ")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "text: every finding of every test, with fio's details and the evidence")
	r.files.addFlags(cmd.Flags(), "also write the results (with their expectation findings) to this NDJSON file")
	r.expect.addFlags(cmd)
	return cmd
}

// replayOptions are the flags of the commands that read saved results
// back and render them again (report, analyze): -o, --out, --html and
// --expect.
type replayOptions struct {
	output string
	files  outputFiles
	expect expectOptions
}

// run reads the results of files, re-analysed when annotate says so,
// compares them with --expect, and writes them as in says (its Outcome
// the results'), to each output asked for. renamed is outputFiles's.
func (r *replayOptions) run(cmd *cobra.Command, streams IOStreams, files []string, renamed, annotate bool, in report.Input) ([]result.Result, error) {
	format, err := report.Results.Lookup(r.output)
	if err != nil {
		return nil, &UsageError{Err: err, Help: hint.Of(err)}
	}
	if err := r.files.resolve(r.output, streams.ErrOut, renamed, reads{inputs: files}); err != nil {
		return nil, err
	}
	diag, err := r.expect.diagnoser(cmd)
	if err != nil {
		return nil, err
	}
	rs, err := report.ReadFilesContext(cmd.Context(), files, streams.In, warnSkipped(streams.ErrOut))
	if err != nil {
		return nil, err
	}
	if annotate {
		analysis.Annotate(rs)
	}
	for i := range rs {
		if diag != nil {
			diag(&rs[i])
		}
	}
	in.Outcome = diagnosis.Replay(rs)
	if err := r.files.writeHTML(report.Results, in); err != nil {
		return nil, err
	}
	if err := r.files.writeCopy(in.Results); err != nil {
		return nil, err
	}
	if r.files.stdout() {
		if err := writeReport(streams.Out, format, in); err != nil {
			return nil, err
		}
	}
	return in.Results, nil
}
