package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/promhist"
	"github.com/iolens/iolens/internal/promhist/promtest"
	"github.com/iolens/iolens/internal/report"
)

func TestAnalyzePrometheusUsage(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "r.ndjson")
	os.WriteFile(f, []byte("{}\n"), 0o644)
	p := "http://127.0.0.1:1"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze", "--device", "sda", f}, "--device needs --prometheus"},
		{[]string{"analyze", "--since", "1h", f}, "--since needs --prometheus"},
		{[]string{"analyze", "--prometheus", p, f}, "reads no FILE"},
		{[]string{"analyze", "--prometheus", p, "--since", "1h", "--from", "2026-03-01T14:00:00Z"}, "--since with --from"},
		{[]string{"analyze", "--prometheus", p, "--from", "yesterday"}, "RFC 3339"},
		{[]string{"analyze", "--prometheus", p, "--to", "2026-03-01T14:00:00Z"}, "--to without --from"},
		{[]string{"analyze", "--prometheus", p, "--from", "2026-03-01T15:00:00Z", "--to", "2026-03-01T14:00:00Z"}, "is empty"},
		{[]string{"analyze", "--prometheus", p, "--match", `{node="a"`}, "no closing"},
		{[]string{"analyze", "--prometheus", p, "--match", `{__name__="up"}`}, "__name__"},
		{[]string{"analyze", "--prometheus", p, "-o", "csv"}, "valid formats: text, json, md, html"},
		{[]string{"analyze", "--prometheus", p, "--attached", "azure:P10"}, "--attached applies to saved results"},
		{[]string{"analyze", "--prometheus", p, "--grafana-token-file", f}, "needs --grafana"},
		{[]string{"analyze", "--prometheus", p, "--vm", "Standard_DS2_v2"}, "--vm needs --expect"},
		{[]string{"analyze", "--prometheus", p, "--expect", "azure:P99"}, "P99"},
		{[]string{"analyze", "--prometheus", p, "--device", "a/b"}, "--device"},
		{[]string{"analyze", "--prometheus", p, "--pvc", "nonamespace"}, "NAMESPACE/NAME"},
		{[]string{"analyze", "--prometheus", p, "--step", "-1s"}, "negative"},
	} {
		_, errOut, code := execute(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "hint:") && !strings.Contains(errOut, "unknown") && !strings.Contains(errOut, "negative") {
			t.Errorf("%v: exit %d, %q; want 2 and %q with a hint", tc.args, code, errOut, tc.want)
		}
	}
	// Not a usage mistake: nobody answers there.
	if _, errOut, code := execute(t, "analyze", "--prometheus", p); code != 1 || !strings.Contains(errOut, "hint: check the URL") {
		t.Errorf("no Prometheus: exit %d, %q", code, errOut)
	}
}

// TestAnalyzePrometheus: the command on a synthetic history, in every
// format and with every file it writes.
func TestAnalyzePrometheus(t *testing.T) {
	start := time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)
	sc := promtest.DefaultScenario
	s := sc.Synth(start, 600)
	_, srv := promtest.NewFake(t, s.Build())
	dir := t.TempDir()
	ann, page, out := filepath.Join(dir, "ann.json"), filepath.Join(dir, "page.html"), filepath.Join(dir, "out.ndjson")
	base := []string{"analyze", "--prometheus", srv.URL, "--instance", "node-1:9100", "--from", "2026-03-01T14:00:00Z", "--to", "1772374199"}
	clock := func(i int) string { return s.At(i).UTC().Format("15:04:05") }

	txt, errOut, code := execute(t, append(base, "--annotations-out", ann, "--html", page, "--out", out)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"node-1:9100: sdb", "[fail] sdb stalled " + clock(sc.StallFrom) + "–" + clock(sc.StallTo) + " (15 s)",
		"flat write ceiling 50.0 MB/s", "no samples " + clock(sc.GapFrom-1)} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	var as []promhist.Annotation
	if b, err := os.ReadFile(ann); err != nil || json.Unmarshal(b, &as) != nil || len(as) < 4 {
		t.Errorf("annotations: %d, %v", len(as), err)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "Verdict") || !strings.Contains(string(b), "stalled") {
		t.Errorf("the page: %v", err)
	}
	rs, err := report.ReadFiles([]string{out}, nil)
	if err != nil || len(rs) != 1 || rs[0].Target.Device != "sdb" || len(rs[0].Devices[0].Samples) < 500 {
		t.Fatalf("--out: %d results, %v", len(rs), err)
	}

	js, _, code := execute(t, append(base, "-o", "json")...)
	var a promhist.Analysis
	if code != 0 || json.Unmarshal([]byte(js), &a) != nil || a.Schema != promhist.Schema || len(a.Nodes) != 1 || a.Notes == nil {
		t.Fatalf("-o json: exit %d: %s", code, js)
	}
	md, _, _ := execute(t, append(base, "-o", "md")...)
	if !strings.Contains(md, "## Disk history from Prometheus") || !strings.Contains(md, "- **fail** sdb stalled") {
		t.Errorf("-o md:\n%s", md)
	}
	if _, errOut, code := execute(t, append(base, "--fail-on", "fail")...); code != 4 || !strings.Contains(errOut, "1 finding at severity fail") {
		t.Errorf("--fail-on fail: exit %d, %s", code, errOut)
	}
	// --expect: the disk's own ceiling, as watch has it: the workload
	// runs at or above 50 MB/s from the start.
	txt, _, code = execute(t, append(base, "--expect", "bw=50MB,iops=1000")...)
	if code != 0 || !strings.Contains(txt, "at the expected ceiling "+clock(0)+"–"+clock(sc.StallFrom)) || !strings.Contains(txt, "compared with the disk") {
		t.Errorf("--expect:\n%s", txt)
	}
}

// Issue 39.6: times print in UTC, with the zone and its offset, whatever
// the zone of the machine reading; --local asks for its zone.
func TestAnalyzePrometheusTimesInUTC(t *testing.T) {
	start := time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)
	sc := promtest.DefaultScenario
	s := sc.Synth(start, 600)
	_, srv := promtest.NewFake(t, s.Build())
	base := []string{"analyze", "--prometheus", srv.URL, "--instance", "node-1:9100", "--from", "2026-03-01T14:00:00Z", "--to", "1772374199"}
	saved := time.Local
	time.Local = time.FixedZone("XST", 5*3600)
	defer func() { time.Local = saved }()
	at := func(loc *time.Location, i int) string { return s.At(i).In(loc).Format("15:04:05") }
	txt, errOut, code := execute(t, base...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(txt, "2026-03-01 14:00:00 UTC+00:00") || !strings.Contains(txt, "stalled "+at(time.UTC, sc.StallFrom)) {
		t.Errorf("default, on a machine 5 h east of UTC:\n%s", txt)
	}
	txt, _, _ = execute(t, append(base, "--local")...)
	if !strings.Contains(txt, "2026-03-01 19:00:00 XST+05:00") || !strings.Contains(txt, "stalled "+at(time.Local, sc.StallFrom)) {
		t.Errorf("--local:\n%s", txt)
	}
}
