package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/report"
	"github.com/spf13/cobra"
)

// notReports are -o flags that choose a stream, not a report: their
// values are no report's formats.
var notReports = map[string]string{
	"iolens watch":          "a live view or a stream of watch records",
	"iolens emulate events": "the emulator's event log as text or NDJSON",
	"iolens limits":         "one disk's limits as text or JSON, several disks as a table, wide records or CSV",
}

// Every command that writes a report offers exactly the formats of its
// registry in report: in its help, in shell completion and in what it
// accepts. A command with a list of its own fails here.
func TestOutputFormatsComeFromTheRegistry(t *testing.T) {
	root := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	offered := map[string]bool{}
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
		if _, ok := fl.Value.(*format); ok {
			return // text or JSON of a listing, checked as it is parsed
		}
		if _, ok := notReports[path]; ok {
			return
		}
		reg, ok := registryOf(fl)
		if !ok {
			t.Errorf("%s: -o is not a report registry's (declare it with outputFlag, or list it in notReports)", path)
			return
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
	for _, reg := range report.Registries() {
		if !offered[reg.Kind] {
			t.Errorf("no command offers the %s formats: a registry nobody reads", reg.Kind)
		}
	}
	for path := range notReports {
		if c, _, err := root.Find(strings.Fields(path)[1:]); err != nil || c.CommandPath() != path || c.Flags().Lookup("output") == nil {
			t.Errorf("notReports lists %s, which has no -o", path)
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
