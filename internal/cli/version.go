package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/iolens/iolens/internal/fio"
	"github.com/iolens/iolens/internal/metrics"
	"github.com/spf13/cobra"
)

// Commit is the source revision, set at build time with
// -ldflags "-X .../cli.Commit=..."; without it, the revision the Go
// toolchain stamped into the binary is used.
var Commit = ""

// VersionInfo is what 'iolens version' reports.
type VersionInfo struct {
	Version string `json:"version"`
	// Commit is the source revision ("" when the binary does not know it).
	Commit   string `json:"commit"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
	// Fio is fio's own version string ("fio-3.33"), "" when fio could not
	// be run; FioError says why.
	Fio      string `json:"fio"`
	FioError string `json:"fio_error,omitempty"`
}

// buildCommit is Commit, or the VCS revision in the build info ("-dirty"
// appended for a modified work tree).
func buildCommit(info *debug.BuildInfo, ok bool) string {
	if Commit != "" {
		return Commit
	}
	if !ok {
		return ""
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}

// buildOf is what the metrics exporters label iolens_build_info with.
func buildOf() metrics.Build {
	info, ok := debug.ReadBuildInfo()
	return metrics.Build{Version: Version, Commit: buildCommit(info, ok)}
}

func versionInfo(ctx context.Context, fioBinary string) VersionInfo {
	info, ok := debug.ReadBuildInfo()
	v := VersionInfo{
		Version:  Version,
		Commit:   buildCommit(info, ok),
		Go:       runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	// fio is asked, not assumed: the version a run records is the one
	// found here. A hung binary must not hang the command.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fv, err := fio.Version(ctx, fioBinary)
	if err != nil {
		v.FioError = err.Error()
	} else {
		v.Fio = fv
	}
	return v
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
			v := versionInfo(cmd.Context(), fioBinary)
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
