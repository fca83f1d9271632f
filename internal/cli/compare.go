package cli

import (
	"context"
	"errors"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/store"
	"github.com/spf13/cobra"
)

func newCompareCommand(streams IOStreams) *cobra.Command {
	var db, output string
	var files outputFiles
	var allowPartial bool
	cmd := &cobra.Command{
		Use:   "compare A B [C...]",
		Short: "Compare runs, result files or label selections side by side",
		Long: `Each operand is a saved run id (or a unique prefix of one), an NDJSON file
of results, or a label selector over the history (key=value,key!=value,key,!key;
the keys suite, host, device, target and run match those fields).

A saved run is named by what it measured (suite, disk, target, start), with
its id beside. The operands' verdicts come first, side by side; then, per
test and direction, IOPS, MB/s and p50/p99/p99.9 latency, each with its
difference to the first operand; then every operand's findings, worst first.
Latency percentiles come from the merged histograms of all the operand's
results. Whether a difference is significant is Welch's t-test over the
results (repeats, or runs in a selection); with one result a side, over the
IOPS of each second of it (fio's per-window series).`,
		Example: `  iolens compare 20240501-1200 20240502-0930
  iolens compare before.ndjson after.ndjson -o md
  iolens compare storage-class=managed-premium storage-class=managed-csi --html sc.html`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := report.Comparisons.Lookup(output)
			if err != nil {
				return &UsageError{Err: err, Help: hint.Of(err)}
			}
			if err := files.resolve(output, streams.ErrOut, true, reads{inputs: args, db: db}); err != nil {
				return err
			}
			reader := report.FileReader{Stdin: streams.In, Skipped: warnSkipped(streams.ErrOut)}
			read := func(ctx context.Context, path string) ([]result.Result, error) { return reader.Read(ctx, path) }
			ops, err := compare.Resolve(cmd.Context(), args, read, func() (*store.Store, error) { return openStore(cmd.Context(), db) })
			if err == nil && !allowPartial {
				err = compare.Complete(ops)
			}
			var oe *compare.OperandError
			switch {
			case errors.As(err, &oe) && oe.Usage:
				return &UsageError{Err: oe.Err, Help: hint.Of(err)}
			case err != nil:
				return err
			}
			compare.Diagnose(ops, report.Stories)
			c := compare.Compare(ops)
			in := report.Input{Comparison: &c, Operands: ops}
			if err := files.writeHTML(report.Comparisons, in); err != nil {
				return err
			}
			if err := files.writeCopy(compare.AllResults(ops)); err != nil {
				return err
			}
			if !files.stdout() {
				return nil
			}
			return writeReport(streams.Out, format, in)
		},
	}
	dbFlag(cmd.Flags(), &db)
	outputFlag(cmd.Flags(), &output, report.Comparisons, "format: ")
	files.addFlags(cmd.Flags(), "also write every operand's results to this NDJSON file")
	cmd.Flags().BoolVar(&allowPartial, "allow-partial", false, "compare an operand whose run was interrupted (its figures are partial)")
	return cmd
}
