package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// Every command that runs tests goes through the one recipe, so every
// option of it is on each: the report format, the NDJSON copy, the
// page, the history and the live metrics, and quiet progress.
func TestRunCommandsShareTheRecipesOptions(t *testing.T) {
	root := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	for _, path := range []string{"run", "diagnose", "k8s run", "k8s diagnose", "k8s node-check"} {
		c, _, err := root.Find(strings.Fields(path))
		if err != nil || c.Name() != strings.Fields(path)[len(strings.Fields(path))-1] {
			t.Fatalf("%s: %v", path, err)
		}
		for _, name := range []string{"output", "out", "html", "no-save", "db", "metrics-addr", "quiet"} {
			if c.Flags().Lookup(name) == nil {
				t.Errorf("iolens %s has no --%s", path, name)
			}
		}
	}
}

// k8s run's --html goes through the output checks before the cluster is
// asked anything: a page over the job file it reads is refused.
func TestK8sRunHTMLChecked(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "job.fio")
	_, stderr, code := execute(t, "k8s", "--kubeconfig", filepath.Join(dir, "kubeconfig"), "run", "--storage-class", "fast", "--job", job, "--html", job)
	if code != 2 || !strings.Contains(stderr, "--html") || strings.Contains(stderr, "unknown flag") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
