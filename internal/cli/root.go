package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/iolens/iolens/internal/runner"
	"github.com/spf13/cobra"
)

// Version is set at build time with -ldflags "-X .../cli.Version=...".
var Version = "0.1.0-dev"

// IOStreams are the standard streams a command reads and writes. They are
// injected so tests can capture output.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// NewRootCommand builds the iolens command tree.
func NewRootCommand(streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "iolens",
		Short: "Measure what a disk or persistent volume really delivers, and explain why",
		Long: `iolens runs trustworthy fio suites against a directory, a block device or
(later) Kubernetes volumes, records latency histograms and 1 s time series from
fio and from the device, and reports the results.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{Err: err, Hint: fmt.Sprintf("see '%s --help'", c.CommandPath())}
	})
	for _, sub := range subcommands {
		cmd.AddCommand(sub(streams))
	}
	return cmd
}

// subcommands lists the constructors of every top-level command. Each
// command lives in its own file and adds itself here.
var subcommands = []func(IOStreams) *cobra.Command{
	newDiagnoseCommand,
	newRunCommand,
	newSuitesCommand,
	newReportCommand,
	newAnalyzeCommand,
	newLimitsCommand,
	newCatalogCommand,
	newEmulateCommand,
	newHistoryCommand,
	newCompareCommand,
	newExportCommand,
	newK8sCommand,
	newWatchCommand,
	newEtcdCommand,
	newVersionCommand,
}

// UsageError is a mistake in how iolens was called.
type UsageError struct {
	Err  error
	Hint string
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ErrPartial reports that some work failed while the rest completed and was
// kept. It is the same sentinel the benchmark runner uses.
var ErrPartial = runner.ErrTestsFailed

// ExitCode prints err (with its hint, if any) and returns the process exit
// code: 0 success, 1 failure, 2 usage error, 3 partial failure, 130
// interrupted.
func ExitCode(err error, interrupted bool, w io.Writer) int {
	if err == nil {
		if interrupted {
			return 130
		}
		return 0
	}
	fmt.Fprintf(w, "iolens: error: %v\n", err)
	var h interface{ Hint() string }
	if errors.As(err, &h) && h.Hint() != "" {
		fmt.Fprintf(w, "hint: %s\n", h.Hint())
	} else {
		var u *UsageError
		if errors.As(err, &u) && u.Hint != "" {
			fmt.Fprintf(w, "hint: %s\n", u.Hint)
		}
	}
	var u *UsageError
	var st interface{ ExitStatus() int }
	switch {
	case errors.As(err, &st):
		return st.ExitStatus() // a command iolens ran for the user, e.g. emulate exec
	case interrupted:
		return 130
	case errors.As(err, &u):
		return 2
	case errors.Is(err, ErrPartial):
		var tf *runner.TestsFailedError
		if errors.As(err, &tf) && !tf.Partial() {
			return 1
		}
		return 3
	}
	return 1
}
