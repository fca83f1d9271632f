package cli

import (
	"fmt"

	"github.com/iolens/iolens/internal/buildinfo"
	"github.com/iolens/iolens/internal/metrics"
	"github.com/spf13/cobra"
)

// buildOf is what the metrics exporters label iolens_build_info with.
func buildOf() metrics.Build {
	return metrics.Build{Version: Version, Commit: buildinfo.Revision()}
}

func newVersionCommand(streams IOStreams) *cobra.Command {
	var output, fioBinary string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of iolens, its source commit, Go and fio",
		Long: `Print the version of iolens, the commit it was built from, the Go version and
platform, and the version of the fio binary iolens would run (--fio). A
missing fio is reported, not an error: iolens itself still has a version.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return &UsageError{Err: fmt.Errorf("unknown output format %q", output), Help: "valid formats: text, json"}
			}
			v := buildinfo.Read(cmd.Context(), fioBinary)
			if output == "json" {
				return writeJSON(streams.Out, v)
			}
			commit := v.Commit
			if commit == "" {
				commit = "unknown"
			}
			fv := v.Fio
			if fv == "" {
				fv = "not found (" + v.FioError + ")"
			}
			fmt.Fprintf(streams.Out, "iolens  %s\ncommit  %s\ngo      %s %s\nfio     %s\n", v.Version, commit, v.Go, v.Platform, fv)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "format: text, json")
	cmd.Flags().StringVar(&fioBinary, "fio", "fio", "the fio binary to ask")
	return cmd
}
