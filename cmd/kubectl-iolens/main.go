// Command kubectl-iolens is the kubectl plugin form of 'iolens k8s':
// 'kubectl iolens run --storage-class fast' is 'iolens k8s run
// --storage-class fast'.
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
	err := cli.NewKubectlPluginCommand(streams).ExecuteContext(ctx)
	interrupted := ctx.Err() != nil
	stop()
	os.Exit(cli.ExitCode(err, interrupted, os.Stderr))
}
