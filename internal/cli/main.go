package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// errOutputClosed ends a command whose standard output or error went away
// (iolens run | head): it stops as on Ctrl-C, and cleans up the same way.
var errOutputClosed = errors.New("standard output was closed")

// Main runs iolens as a process with args and returns its exit status.
// Ctrl-C, SIGTERM and SIGHUP (the terminal closed) end the command
// through its context, so everything it made is cleaned up. A reader that goes away (SIGPIPE) does the same:
// the signal is taken, not left to kill the process mid-run, and the
// first write that finds the pipe closed ends the command; the status is
// then 141, as for a process SIGPIPE ended.
func Main(args []string) int { return mainOf(args, NewRootCommand) }

// PluginMain is Main for the kubectl plugin (kubectl-iolens).
func PluginMain(args []string) int { return mainOf(args, NewKubectlPluginCommand) }

func mainOf(args []string, newCommand func(IOStreams) *cobra.Command) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	go func() {
		for range pipe { // the write that raised it fails with EPIPE
		}
	}()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	gone := func() { cancel(errOutputClosed) }
	streams := IOStreams{In: os.Stdin, Out: &pipeWatch{f: os.Stdout, gone: gone}, ErrOut: &pipeWatch{f: os.Stderr, gone: gone}}
	cmd := newCommand(streams)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if errors.Is(context.Cause(ctx), errOutputClosed) {
		// Standard error may be the closed pipe too; say it where it can.
		fmt.Fprintf(os.Stderr, "iolens: stopped: %v; everything the command made was removed\n", errOutputClosed)
		return 141
	}
	return ExitCode(err, ctx.Err() != nil, os.Stderr)
}

// pipeWatch is a standard stream that calls gone when a write finds its
// reader gone (EPIPE).
type pipeWatch struct {
	f    *os.File
	gone func()
}

func (p *pipeWatch) Write(b []byte) (int, error) {
	n, err := p.f.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.gone()
	}
	return n, err
}

var _ io.Writer = (*pipeWatch)(nil)
