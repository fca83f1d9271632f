package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/report"
	"github.com/spf13/cobra"
)

// Issue 38: every -o of every command (a report, a listing, watch's
// stream, the emulator's events) offers exactly the formats of its
// registry in report: in its help, in shell completion and in what it
// accepts, and refuses any other. A command with a list of its own fails
// here.
func TestOutputFormatsComeFromTheRegistry(t *testing.T) {
	root := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	offered := map[string]bool{}
	outputs := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		fl := c.Flags().Lookup("output")
		if fl == nil || fl.Shorthand != "o" {
			return
		}
		path := c.CommandPath()
		outputs++
		reg, ok := registryOf(fl)
		if !ok {
			t.Errorf("%s: -o is not a report registry's (declare it with outputFlag or formatFlag)", path)
			return
		}
		// What the flag accepts is the registry's, and nothing else.
		for _, n := range reg.Names() {
			if err := fl.Value.Set(n); err != nil {
				t.Errorf("%s: -o %s refused: %v", path, n, err)
			}
		}
		if err := fl.Value.Set("no-such-format"); err == nil {
			t.Errorf("%s: -o accepts a format no registry has", path)
		}
		for i, r := range registriesOf(fl) {
			offered[r.Kind] = true
			list := strings.Join(r.Names(), ", ")
			if i == 0 && !strings.HasSuffix(strings.Split(fl.Usage, "; ")[0], list) || i > 0 && !strings.HasSuffix(strings.Split(fl.Usage, "; ")[i], ": "+list) {
				t.Errorf("%s: -o's help %q does not list the %s formats %v", path, fl.Usage, r.Kind, r.Names())
			}
		}
		names := reg.Names()
		complete, ok := c.GetFlagCompletionFunc("output")
		if !ok {
			t.Errorf("%s: -o has no completion", path)
			return
		}
		got, _ := complete(c, nil, "")
		if !slices.Equal(got, names) {
			t.Errorf("%s: -o completes %v, the registry has %v", path, got, names)
		}
		for _, n := range names {
			if _, err := reg.Lookup(n); err != nil {
				t.Errorf("%s: %s: %v", path, n, err)
			}
		}
	}
	walk(root)
	if outputs < 21 {
		t.Errorf("found %d -o flags, want at least 21: the walk is broken", outputs)
	}
	for _, reg := range report.Registries() {
		if !offered[reg.Kind] {
			t.Errorf("no command offers the %s formats: a registry nobody reads", reg.Kind)
		}
	}
}

// A command refuses a format its registry lacks, naming the ones it has.
func TestOutputFormatOutsideTheRegistryRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		reg  report.Registry
	}{
		{[]string{"report", "-o", "yaml", dir}, report.Results},
		{[]string{"compare", "-o", "ndjson", dir, dir}, report.Comparisons},
		{[]string{"diagnose", "-o", "csv", dir}, report.Diagnoses},
	} {
		_, stderr, code := execute(t, c.args...)
		if code == 0 || !strings.Contains(stderr, strings.Join(c.reg.Names(), ", ")) {
			t.Errorf("%v: exit %d, %q: want a refusal naming %v", c.args, code, stderr, c.reg.Names())
		}
	}
}
