package cli

import (
	"fmt"
	"io"

	"github.com/iolens/iolens/internal/buildinfo"
	"github.com/iolens/iolens/internal/metrics"
	"github.com/iolens/iolens/internal/report"
	"github.com/spf13/cobra"
)

// buildOf is what the metrics exporters label iolens_build_info with.
func buildOf() metrics.Build {
	return metrics.Build{Version: Version, Commit: buildinfo.Revision()}
}

func newVersionCommand(streams IOStreams) *cobra.Command {
	var fioBinary string
	var output *format
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of iolens, its source commit, Go and fio",
		Long: `Print the version of iolens, the commit it was built from, the Go version and
platform, and the version of the fio binary iolens would run (--fio). A
missing fio is reported, not an error: iolens itself still has a version.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := buildinfo.Read(cmd.Context(), fioBinary)
			return output.print(streams.Out, v, func(w io.Writer) error {
				commit := v.Commit
				if commit == "" {
					commit = "unknown"
				}
				fv := v.Fio
				if fv == "" {
					fv = "not found (" + v.FioError + ")"
				}
				_, err := fmt.Fprintf(w, "iolens  %s\ncommit  %s\ngo      %s %s\nfio     %s\n", v.Version, commit, v.Go, v.Platform, fv)
				return err
			})
		},
	}
	output = formatFlag(cmd.Flags(), report.Listings, "format: ")
	cmd.Flags().StringVar(&fioBinary, "fio", "fio", "the fio binary to ask")
	return cmd
}
