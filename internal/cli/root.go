package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/iolens/iolens/internal/buildinfo"
	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/termtext"
	"github.com/spf13/cobra"
)

// Version is this build's version (buildinfo.Version, which -ldflags set).
var Version = buildinfo.Version

// IOStreams are the standard streams a command reads and writes. They are
// injected so tests can capture output.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// NewRootCommand builds the iolens command tree.
func NewRootCommand(streams IOStreams) *cobra.Command {
	written := filterStreams(&streams)
	cmd := &cobra.Command{
		Use:   "iolens",
		Short: "Measure what a disk or persistent volume really delivers, and explain why",
		Long: `iolens measures what a disk or a Kubernetes persistent volume really
delivers, and explains why. 'iolens diagnose' answers in three minutes: what the
disk delivers, which limit binds each workload (a cap, latency, the device, the
CPU) and what to change. 'iolens run' runs fio suites with latency histograms
and fine time series from fio and the device; 'iolens k8s' does both on volumes
of any storage class; every saved result can be re-read, compared and exported.`,
	}
	for _, sub := range subcommands {
		cmd.AddCommand(sub(streams))
	}
	strictUsage(cmd)
	asRoot(cmd, streams, written)
	completeValues(cmd)
	return cmd
}

// asRoot makes cmd, its commands built on streams, the root of a tree
// (iolens, or the kubectl plugin): its own error printer and version,
// the streams, with written once a command has run, every mistake in a
// flag a usage error, and every output checked.
func asRoot(cmd *cobra.Command, streams IOStreams, written func(*cobra.Command, []string) error) {
	cmd.SilenceUsage, cmd.SilenceErrors, cmd.Version = true, true, Version
	cmd.PersistentPostRunE = written
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// A value's own parser says what it accepts; else the help.
		help := fmt.Sprintf("see '%s --help'", c.CommandPath())
		if h := hint.Of(err); h != "" {
			help = h
		}
		return &UsageError{Err: err, Help: help}
	})
	guardOutputs(cmd)
}

// strictUsage makes every mistake in how a command is called a usage
// error (exit 2, with a hint): an unknown subcommand of a command group
// (cobra would print help and exit 0), and a wrong number of arguments
// (cobra would exit 1 like a failure).
func strictUsage(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictUsage(sub)
	}
	hint := func() string { return fmt.Sprintf("see '%s --help'", c.CommandPath()) }
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			var names []string
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() {
					names = append(names, s.Name())
				}
			}
			h := "subcommands: " + strings.Join(names, ", ")
			if cmd.SuggestionsMinimumDistance <= 0 {
				cmd.SuggestionsMinimumDistance = 2
			}
			if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
				h = "did you mean '" + cmd.CommandPath() + " " + sug[0] + "'? " + h
			}
			return &UsageError{Err: fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath()), Help: h}
		}
		return
	}
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return &UsageError{Err: err, Help: hint()}
			}
			return nil
		}
	}
}

// subcommands lists the constructors of every top-level command. Each
// command lives in its own file and adds itself here.
var subcommands = []func(IOStreams) *cobra.Command{
	newDiagnoseCommand,
	newRunCommand,
	newSuitesCommand,
	newReportCommand,
	newAnalyzeCommand,
	newHeadroomCommand,
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
	newWordsTopic,
}

// UsageError is a mistake in how iolens was called: exit status 2.
type UsageError struct {
	Err error
	// Help says what to do instead.
	Help string
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Hint says what to do instead.
func (e *UsageError) Hint() string { return e.Help }

// ErrFindings is a verdict, not a failure: --fail-on found findings as
// severe as asked. It exits with its own status (4), so CI can tell it
// from a crash.
var ErrFindings = errors.New("findings at or above the --fail-on severity")

// ErrPartial reports that some work failed while the rest completed and was
// kept. It is the same sentinel the benchmark runner uses.
var ErrPartial = runner.ErrTestsFailed

// ExitCode prints err (with its hint, if any) and returns the process exit
// code: 0 success, 1 failure, 2 usage error, 3 partial failure (some
// tests failed, the others' results were kept), 4 findings at the
// --fail-on severity, 130 interrupted.
func ExitCode(err error, interrupted bool, w io.Writer) int {
	if err == nil {
		if interrupted {
			return 130
		}
		return 0
	}
	w = termtext.NewWriter(w) // an error may quote a file, a run id, a server
	fmt.Fprintf(w, "iolens: error: %v\n", err)
	if h := hint.Of(err); h != "" {
		fmt.Fprintf(w, "hint: %s\n", h)
	}
	var u *UsageError
	var hu *hint.UsageError // a library's: a mistake in what it was asked
	var us *runner.UnknownSuiteError
	var st interface{ ExitStatus() int }
	switch {
	case errors.As(err, &st):
		return st.ExitStatus() // a command iolens ran for the user, e.g. emulate exec
	case interrupted:
		return 130
	case errors.As(err, &u), errors.As(err, &hu), errors.As(err, &us):
		return 2
	case errors.Is(err, ErrFindings):
		return 4
	case errors.Is(err, ErrPartial):
		var tf *runner.TestsFailedError
		if errors.As(err, &tf) && !tf.Partial() {
			return 1
		}
		return 3
	}
	return 1
}
