// Command kubectl-iolens is the kubectl plugin form of 'iolens k8s':
// 'kubectl iolens run --storage-class fast' is 'iolens k8s run
// --storage-class fast'.
package main

import (
	"os"

	"github.com/iolens/iolens/internal/cli"
)

func main() {
	os.Exit(cli.PluginMain(os.Args[1:]))
}
