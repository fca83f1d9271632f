package cli

import (
	"strings"
	"testing"
)

// Every mistake in how iolens is called exits 2 with a hint: an unknown
// subcommand of a group (not help and exit 0), a wrong number of
// arguments (not exit 1 like a failure).
func TestUsageMistakesExit2(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"k8s", "cleanpu"}, "did you mean 'iolens k8s cleanup'"},
		{[]string{"history", "nope"}, "see 'iolens history --help'"},
		{[]string{"emulate", "creat"}, "did you mean"},
		{[]string{"diagnose", "a", "b"}, "see 'iolens diagnose --help'"},
		{[]string{"run", "a", "b"}, "see 'iolens run --help'"},
		{[]string{"history", "show"}, "see 'iolens history show --help'"},
		{[]string{"nosuch"}, "unknown command"},
		{[]string{"suites", "nope"}, "valid suites: quick"},
		{[]string{"run", "--suite", "nope", "--no-save", "/nonexistent/iolens-usage-test"}, "valid suites: quick"},
		{[]string{"diagnose", "--budget", "3", "--no-save", "/nonexistent/iolens-usage-test"}, "outside 1m0s to 24h"},
		{[]string{"diagnose", "--budget", "45s", "--no-save", "/nonexistent/iolens-usage-test"}, "need at least 1m0s"},
	} {
		_, errs, code := execute(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || !strings.Contains(errs, "hint:") && c.args[0] != "nosuch" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
	// A group with no argument still shows its help, and succeeds.
	out, _, code := execute(t, "k8s")
	if code != 0 || !strings.Contains(out, "Available Commands") {
		t.Errorf("k8s: exit %d, %q", code, out)
	}
}

// Shell completion knows the values: suites, formats, catalog disks and
// VM sizes.
func TestCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "run", "--suite", "q"}, "quick"},
		{[]string{"__complete", "diagnose", "-o", ""}, "html"},
		{[]string{"__complete", "limits", "azure:P1"}, "azure:P15"},
		{[]string{"__complete", "run", "--expect", "aws:g"}, "aws:gp3"},
		{[]string{"__complete", "diagnose", "--vm", "azure:Standard_D8"}, "azure:Standard_D8s_v3"},
	} {
		out, _, _ := execute(t, c.args...)
		if !strings.Contains(out, c.want+"\n") {
			t.Errorf("%v: %q, want %s among them", c.args, out, c.want)
		}
	}
}
