package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/iolens/iolens/internal/diagnosis"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/pipeline"
	"github.com/iolens/iolens/internal/report"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/store"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// dbFlag is the --db flag every history-backed command shares.
func dbFlag(f *pflag.FlagSet, p *string) {
	f.StringVar(p, "db", "", "history database (default $"+store.EnvDB+", else $XDG_DATA_HOME/iolens/history.db or ~/.local/share/iolens/history.db)")
}

// openStore opens the history for the commands that only read it: read
// only, never creating a file, never migrating a schema this build reads
// as it is.
func openStore(ctx context.Context, path string) (*store.Store, error) {
	return store.OpenDefault(ctx, path, store.Options{ReadOnly: true})
}

func newHistoryCommand(streams IOStreams) *cobra.Command {
	var db, selector string
	var output *format
	var limit int
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List, show, export, import and remove saved runs",
		Long: `Every 'iolens run' is saved (unless --no-save) in a SQLite database under the
user's data directory. 'history' lists the runs, newest first, with their
headline figures; its subcommands show, export, import and remove them.
Run ids may be shortened to any unique prefix.`,
		Example: `  iolens history
  iolens history -l storage-class=managed-premium
  iolens history show 20240501-1200
  iolens history export 20240501-120000-ab12cd > run.ndjson
  iolens history import --label cluster=aks-west results/*.ndjson
  iolens history rm 20240501-120000-ab12cd`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			runs, err := store.ListRuns(cmd.Context(), db, selector, limit)
			if errors.Is(err, store.ErrNoDatabase) {
				// Nothing saved yet is an empty history, not a failure.
				var nd *store.NoDatabaseError
				errors.As(err, &nd)
				fmt.Fprintf(streams.ErrOut, "iolens: nothing saved yet: %v\n", nd)
			} else if err != nil {
				return err
			}
			return output.print(streams.Out, runs, func(w io.Writer) error { return store.WriteRunList(w, runs) })
		},
	}
	f := cmd.PersistentFlags()
	dbFlag(f, &db)
	output = formatFlag(cmd.Flags(), report.Listings, "format: ")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "only runs with results matching this label selector")
	cmd.Flags().IntVar(&limit, "limit", 0, "show only the newest N runs")
	cmd.AddCommand(newHistoryShowCommand(streams, &db), newHistoryRmCommand(streams, &db),
		newHistoryExportCommand(streams, &db), newHistoryImportCommand(streams, &db))
	return cmd
}

func newHistoryShowCommand(streams IOStreams, db *string) *cobra.Command {
	var ro renderOptions
	cmd := &cobra.Command{
		Use:   "show ID...",
		Short: "Report saved runs, as 'iolens report' would",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputs(reads{db: *db}, [2]string{"--out", ro.out}); err != nil {
				return err
			}
			rs, err := store.ReadRuns(cmd.Context(), *db, args)
			if err != nil {
				return err
			}
			return ro.render(streams, rs)
		},
	}
	ro.addFlags(cmd.Flags())
	return cmd
}

func newHistoryRmCommand(streams IOStreams, db *string) *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID...",
		Short: "Remove saved runs",
		Long: `Remove saved runs, each named by its id or a prefix of it that matches no
other run. Every id is checked before anything is removed.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Removing from a database that does not exist creates none.
			return store.RemoveRuns(cmd.Context(), *db, args, func(id string) { fmt.Fprintf(streams.ErrOut, "removed run %s\n", id) })
		},
	}
}

func newHistoryExportCommand(streams IOStreams, db *string) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export ID...",
		Short: "Write saved runs as NDJSON, the form 'history import' and 'report' read",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputs(reads{db: *db}, [2]string{"--out", out}); err != nil {
				return err
			}
			rs, err := store.ReadRuns(cmd.Context(), *db, args)
			if err != nil {
				return err
			}
			ndjson, err := report.Results.Lookup("ndjson")
			if err != nil {
				return err
			}
			// The records only: NDJSON carries no diagnosis.
			in := report.Input{Outcome: diagnosis.Outcome{Results: rs}}
			if out == "" || out == "-" {
				return writeReport(streams.Out, ndjson, in)
			}
			return writeFile(out, report.Results, "ndjson", in)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write to this file instead of standard output")
	markOutput(cmd.Flags(), "out")
	return cmd
}

func newHistoryImportCommand(streams IOStreams, db *string) *cobra.Command {
	var labels []string
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Add results from NDJSON files (or fio JSON output) to the history",
		Long: `Import results saved with --out, exported with 'history export', or written by
fio itself. Importing the same results twice stores them once. --label adds
labels to every imported result, to tell clusters or machines apart.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			extra, err := parseLabels(labels)
			if err != nil {
				return &UsageError{Err: err.(*UsageError).Err, Help: "--label takes key=value"}
			}
			read := func(ctx context.Context, p string) ([]result.Result, error) {
				return report.ReadFilesContext(ctx, []string{p}, streams.In, warnSkipped(streams.ErrOut))
			}
			return store.ImportFiles(cmd.Context(), *db, args, read, extra, func(p string, st store.SaveStats) {
				fmt.Fprintf(streams.ErrOut, "%s: %d results added, %d already stored (runs: %s)\n", p, st.Added, st.Skipped, strings.Join(st.Runs, ", "))
			})
		},
	}
	cmd.Flags().StringArrayVar(&labels, "label", nil, "key=value label added to every imported result (repeatable)")
	return cmd
}

// renderOptions are -o and --out of the commands that render results.
type renderOptions struct {
	output, out string
}

func (ro *renderOptions) addFlags(f *pflag.FlagSet) {
	outputFlag(f, &ro.output, report.Results, "format: ")
	f.StringVar(&ro.out, "out", "", "write to this file instead of standard output")
	markOutput(f, "out")
}

func (ro *renderOptions) render(streams IOStreams, rs []result.Result) error {
	format, err := report.Results.Lookup(ro.output)
	if err != nil {
		return &UsageError{Err: err, Help: hint.Of(err)}
	}
	in := report.Input{Outcome: diagnosis.Replay(rs)}
	if ro.out == "" || ro.out == "-" {
		return writeReport(streams.Out, format, in)
	}
	return writeFile(ro.out, report.Results, format.Name, in)
}

// runSaveOptions are the flags of 'run' that keep results: the history
// database and the live metrics endpoint.
type runSaveOptions struct {
	noSave      bool
	db          string
	metricsAddr string
}

func (o *runSaveOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.noSave, "no-save", false, "do not save the results in the history database")
	dbFlag(f, &o.db)
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve live Prometheus metrics on this address while the run goes (e.g. :9101)")
}

// start opens what keeps the run's results: the history (unless
// --no-save) and the live metrics (--metrics-addr).
func (o *runSaveOptions) start(ctx context.Context, streams IOStreams, runID, suite string, labels map[string]string) (*pipeline.Run, error) {
	k, err := pipeline.Open(ctx, pipeline.Options{RunID: runID, Suite: suite, Labels: labels, NoSave: o.noSave, DB: o.db,
		MetricsAddr: o.metricsAddr, Build: buildOf(), Log: streams.ErrOut})
	return k, err
}
