package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/metrics"
	"github.com/spf13/cobra"
)

func newExportCommand(streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export saved runs to other tools",
	}
	cmd.AddCommand(newExportPrometheusCommand(streams))
	return cmd
}

func newExportPrometheusCommand(streams IOStreams) *cobra.Command {
	var db, out string
	var last int
	cmd := &cobra.Command{
		Use:   "prometheus [ID|SELECTOR...]",
		Short: "Write saved runs in node-exporter textfile-collector format",
		Long: `Write the results of saved runs as Prometheus metrics, in the text format
node-exporter's textfile collector reads. With no argument, the newest run
(--last N: the newest N). --out writes the file atomically (write, then
rename), as the collector requires.`,
		Example: `  iolens export prometheus --out /var/lib/node_exporter/textfile/iolens.prom
  iolens export prometheus storage-class=managed-premium --last 5
  iolens export prometheus 20240501-1200`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if last < 1 {
				return &UsageError{Err: fmt.Errorf("--last must be at least 1"), Help: "see 'iolens export prometheus --help'"}
			}
			if err := checkOutputs(reads{db: db}, [2]string{"--out", out}); err != nil {
				return err
			}
			s, err := openStore(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer s.Close()
			rs, err := s.Selected(cmd.Context(), args, last)
			if err != nil {
				return err
			}
			if len(rs) == 0 && len(args) > 0 {
				return &hint.Error{Err: fmt.Errorf("nothing matched %s", strings.Join(args, " ")),
					Advice: "'iolens history' lists the saved runs and their labels; 'iolens history -l SELECTOR' tries a selector"}
			}
			if len(rs) == 0 {
				return &hint.Error{Err: fmt.Errorf("no saved results to export"), Advice: "'iolens history' lists the saved runs"}
			}
			return writeTo(streams.Out, out, func(w io.Writer) error { return metrics.WriteTextfile(w, buildOf(), rs) })
		},
	}
	dbFlag(cmd.Flags(), &db)
	cmd.Flags().StringVar(&out, "out", "", "write to this file (atomically) instead of standard output")
	markOutput(cmd.Flags(), "out")
	cmd.Flags().IntVar(&last, "last", 1, "with no run id: export the newest N runs (per selector)")
	return cmd
}
