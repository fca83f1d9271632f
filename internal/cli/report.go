package cli

import (
	"io"
	"strings"

	"github.com/iolens/iolens/internal/report"
	"github.com/spf13/cobra"
)

func newReportCommand(streams IOStreams) *cobra.Command {
	var output, out string
	cmd := &cobra.Command{
		Use:   "report FILE...",
		Short: "Re-render saved results (iolens NDJSON, or fio JSON/json+ output)",
		Example: `  iolens report results.ndjson
  iolens report -o md results.ndjson
  iolens report -o html --out report.html results.ndjson
  fio --output-format=json+ job.fio > out.json && iolens report out.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			render, err := report.RendererFor(output)
			if err != nil {
				return &UsageError{Err: err, Hint: err.(*report.UnknownFormatError).Hint()}
			}
			rs, err := report.ReadFiles(args, streams.In)
			if err != nil {
				return err
			}
			return writeOut(streams.Out, out, func(w io.Writer) error { return render(w, rs) })
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "format: "+strings.Join(report.Formats, ", "))
	cmd.Flags().StringVar(&out, "out", "", "write to this file instead of standard output")
	return cmd
}
