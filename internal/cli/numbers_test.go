package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 27.7: every number watch takes goes through units: NaN, an
// infinity, a negative or an out-of-range value is a usage error that
// says what is accepted (a NaN ceiling used to stop at-cap alerts
// without a word).
func TestWatchNumbers(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--at-cap", "NaN"}, "--at-cap"},
		{[]string{"--at-cap", "-5"}, "negative"},
		{[]string{"--at-cap", "500"}, "out of range"},
		{[]string{"--stall-ratio", "NaN"}, "--stall-ratio"},
		{[]string{"--stall-ratio", "-0.1"}, "negative"},
		{[]string{"--stall-ratio", "Inf"}, "--stall-ratio"},
		{[]string{"--saturated-queue", "nan"}, "--saturated-queue"},
		{[]string{"--saturated-queue", "-1"}, "negative"},
		{[]string{"--burst-credit", "NaN"}, "--burst-credit"},
		{[]string{"--burst-credit", "101"}, "out of range"},
		{[]string{"--top", "-1"}, "--top"},
		{[]string{"--top", "1e9"}, "--top"},
		{[]string{"--interval", "-1s"}, "negative"},
		{[]string{"--expect", "iops=NaN"}, "iops"},
		{[]string{"--expect", "iops=-500"}, "negative"},
		{[]string{"--expect", "iops=500,bw=Inf"}, "bw"},
		{[]string{"--expect", "iops=1e308"}, "iops"},
		{[]string{"--expect", "iops=500,burst-s=NaN"}, "burst-s"},
	} {
		args := append([]string{"watch", "--duration", "1s"}, c.args...)
		_, errOut, code := execute(t, args...)
		if code != 2 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "hint: ") {
			t.Errorf("%v: exit %d, %q; want 2, %q and a hint", c.args, code, errOut, c.want)
		}
	}
	for _, c := range [][]string{
		{"k8s", "agent", "--diagnose", "--precision", "NaN"},
		{"k8s", "agent", "--diagnose", "--precision", "-0.02"},
		{"k8s", "run", "--bind-timeout", "-5m"},
		{"k8s", "cleanup", "--run", "x", "--timeout", "-1s"},
		{"k8s", "watch", "--refresh", "-2s"},
	} {
		if _, errOut, code := execute(t, c...); code != 2 {
			t.Errorf("%v: exit %d, %q; want 2", c, code, errOut)
		}
	}
}

// Issue 27.10: label keys that would be one Prometheus label are refused
// (a-b, a_b and a.b all became label_a_b, and all but one value were
// lost), at --label and at export.
func TestPrometheusLabelsDoNotClash(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := execute(t, "run", "--label", "a-b=1", "--label", "a.b=2", "--fio", "/nonexistent/fio", dir); code != 2 || !strings.Contains(errOut, "label_a_b") {
		t.Errorf("run --label a-b --label a.b: exit %d, %q", code, errOut)
	}
	db := filepath.Join(dir, "h.db")
	for i, l := range []map[string]string{{"a-b": "1"}, {"a.b": "2"}, {"a_b": "3"}} {
		p := writeRun(t, dir, fmt.Sprintf("2024050%d-120000-aaaaaa", i+1), []float64{1000}, l)
		if _, e, code := execute(t, "history", "import", "--db", db, p); code != 0 {
			t.Fatal(e)
		}
	}
	out, errOut, code := execute(t, "export", "prometheus", "--db", db, "--last", "3")
	if code == 0 || !strings.Contains(errOut, "would both be the Prometheus label label_a_b") || strings.Contains(out, "label_a_b") {
		t.Errorf("export of clashing labels: exit %d, %q\n%s", code, errOut, out)
	}
	out, _, code = execute(t, "export", "prometheus", "--db", db, "20240503")
	if code != 0 || !strings.Contains(out, `label_a_b="3"`) {
		t.Errorf("export of one run: exit %d\n%s", code, out)
	}
	// Issue 26.11: a selector that matches nothing says so.
	if _, errOut, code := execute(t, "export", "prometheus", "--db", db, "nosuch=label"); code != 1 || !strings.Contains(errOut, "nothing matched nosuch=label") {
		t.Errorf("export nosuch=label: exit %d, %q", code, errOut)
	}
}
