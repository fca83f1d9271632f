// Command iolens measures what a disk or a Kubernetes persistent volume
// really delivers, and explains why.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/iolens/iolens/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	streams := cli.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	err := cli.NewRootCommand(streams).ExecuteContext(ctx)
	interrupted := ctx.Err() != nil
	stop()
	os.Exit(cli.ExitCode(err, interrupted, os.Stderr))
}
