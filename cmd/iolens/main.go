// Command iolens measures what a disk or a Kubernetes persistent volume
// really delivers, and explains why.
package main

import (
	"os"

	"github.com/iolens/iolens/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
