package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/iolens/iolens/internal/compare"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/store"
	"github.com/spf13/cobra"
)

func newCompareCommand(streams IOStreams) *cobra.Command {
	var db, output string
	var files outputFiles
	cmd := &cobra.Command{
		Use:   "compare A B [C...]",
		Short: "Compare runs, result files or label selections side by side",
		Long: `Each operand is a saved run id (or a unique prefix of one), an NDJSON file
of results, or a label selector over the history (key=value,key!=value,key,!key;
the keys suite, host, device, target and run match those fields).

Per test and direction it shows IOPS, MB/s and p50/p99/p99.9 latency, each
with its difference to the first operand. Latency percentiles come from the
merged histograms of all the operand's results. Whether a difference is
significant is Welch's t-test over the results (repeats, or runs in a
selection); with fewer than two on either side it says "not enough data".`,
		Example: `  iolens compare 20240501-1200 20240502-0930
  iolens compare before.ndjson after.ndjson -o md
  iolens compare storage-class=managed-premium storage-class=managed-csi --html sc.html`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !validFormat(output, compare.Formats) {
				return &UsageError{Err: fmt.Errorf("unknown output format %q", output), Help: "valid formats: " + strings.Join(compare.Formats, ", ")}
			}
			if err := files.resolve(output, streams.ErrOut, true); err != nil {
				return err
			}
			ops, err := resolveOperands(cmd.Context(), db, args, streams.In)
			if err != nil {
				return err
			}
			c := compare.Compare(ops)
			page := func(w io.Writer) error { return report.WriteHTML(w, compare.Page(ops, c)) }
			if err := files.writeHTML(page); err != nil {
				return err
			}
			var all []result.Result
			for _, op := range ops {
				all = append(all, op.Results...)
			}
			if err := files.writeCopy(all); err != nil {
				return err
			}
			switch {
			case !files.stdout():
				return nil
			case output == "html":
				return page(streams.Out)
			}
			return compare.Write(reportOut(streams.Out, output), output, c)
		},
	}
	dbFlag(cmd.Flags(), &db)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "format: "+strings.Join(compare.Formats, ", "))
	files.addFlags(cmd.Flags(), "also write every operand's results to this NDJSON file")
	return cmd
}

func validFormat(f string, fs []string) bool {
	for _, x := range fs {
		if f == x {
			return true
		}
	}
	return false
}

// resolveOperands reads each operand: an existing file, a selector, or a
// run id. The database is opened only when an operand needs it.
func resolveOperands(ctx context.Context, db string, args []string, stdin io.Reader) ([]compare.Operand, error) {
	var s *store.Store
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	open := func() error {
		if s != nil {
			return nil
		}
		var err error
		s, err = openStore(ctx, db)
		return err
	}
	var ops []compare.Operand
	for _, a := range args {
		var rs []result.Result
		var err error
		if _, statErr := os.Stat(a); statErr == nil || a == "-" {
			rs, err = report.ReadFiles([]string{a}, stdin)
		} else if store.LooksLikeSelector(a) {
			sel, perr := store.ParseSelector(a)
			if perr != nil {
				return nil, &UsageError{Err: perr, Help: "a selector is key=value,key!=value,key,!key"}
			}
			if err = open(); err == nil {
				rs, err = s.Select(ctx, sel)
			}
			if err == nil && len(rs) == 0 {
				err = &hintError{fmt.Errorf("selector %q matches no saved result", a), "'iolens history' lists the runs and their labels"}
			}
		} else {
			if err = open(); err == nil {
				rs, err = s.Results(ctx, a)
			}
			if errors.Is(err, store.ErrNotFound) {
				err = &hintError{fmt.Errorf("%q is neither a file, a label selector nor a saved run", a), "'iolens history' lists the saved runs"}
			}
		}
		if err != nil {
			return nil, err
		}
		ops = append(ops, compare.Operand{Name: a, Results: rs})
	}
	return ops, nil
}
