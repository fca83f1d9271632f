package cli

import (
	"strings"
	"testing"
)

// Both k8s commands that run benchmarks take --push.
func TestPushFlag(t *testing.T) {
	root := NewRootCommand(IOStreams{})
	for _, path := range [][]string{{"k8s", "run"}, {"k8s", "node-check"}} {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Flags().Lookup("push") == nil {
			t.Errorf("%s has no --push", strings.Join(path, " "))
		}
	}
}
