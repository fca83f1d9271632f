package cli

import (
	"strings"
	"testing"
)

// diagnose --help: the basics first, then output, then the flags that
// only matter on a cloud disk, the Azure- and IBM-only ones under a
// heading of their own; every flag once.
func TestDiagnoseHelpGrouped(t *testing.T) {
	out, _, code := execute(t, "diagnose", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	heads := []string{"\nFlags:\n", "\nOutput and history:\n", "\nComparing with a cloud disk", "\nAzure and IBM Cloud only:\n"}
	at := make([]int, len(heads))
	for i, h := range heads {
		at[i] = strings.Index(out, h)
		if at[i] < 0 || i > 0 && at[i] < at[i-1] {
			t.Fatalf("heading %q missing or out of order:\n%s", h, out)
		}
	}
	section := func(i int) string {
		if i+1 < len(at) {
			return out[at[i]:at[i+1]]
		}
		return out[at[i]:]
	}
	for i, flags := range [][]string{{"--budget", "--emulated", "--device", "--size"}, {"--output", "--html", "--no-save", "--verbose"},
		{"--expect", "--vm", "--no-metadata"}, {"--cache", "--attached"}} {
		for _, f := range flags {
			if !strings.Contains(section(i), "  "+f+" ") && !strings.Contains(section(i), ", "+f+" ") {
				t.Errorf("%s is not under %q:\n%s", f, heads[i], out)
			}
			if n := strings.Count(out[at[0]:], "  "+f+" ") + strings.Count(out[at[0]:], ", "+f+" "); n != 1 {
				t.Errorf("%s listed %d times", f, n)
			}
		}
	}
	for _, want := range []string{"bottleneck", "removes it"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
