package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/headroom"
	"github.com/iolens/iolens/internal/promhist/promtest"
)

// TestHeadroom: the command on a generated history of one node with a
// volume held at its 500 IOPS cap for 10 minutes, its figures and every
// output.
func TestHeadroom(t *testing.T) {
	start := time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)
	s := &promtest.Synth{Instance: "node-1:9100", Start: start, Step: 15 * time.Second, N: 240, Devices: []string{"sdb"}, CPUs: 1,
		Host: func(int) promtest.HostRates { return promtest.HostRates{} },
		Dev: func(_ string, i int) promtest.Rates {
			iops := 50.0
			if i > 100 && i <= 140 {
				iops = 500
			}
			return promtest.Rates{ReadIOPS: iops, ReadBytes: iops * 4096, Util: 0.5, Queue: 1, ReadAwaitMs: 1}
		}}
	_, srv := promtest.NewFake(t, s.Build())
	dir := t.TempDir()
	mapping, page, rules := filepath.Join(dir, "volumes.yaml"), filepath.Join(dir, "page.html"), filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(mapping, []byte("volumes:\n  - {instance: \"node-1:9100\", device: sdb, expect: \"iops=500,bw=100MB\", claim: db/data-0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"headroom", "--prometheus", srv.URL, "--from", "2026-03-01T14:00:00Z", "--to", "2026-03-01T14:59:45Z"}
	txt, errOut, code := execute(t, append(base, "--mapping", mapping, "--html", page, "--rules", rules)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(txt, "verdict: 1 of 1 volumes met their cap") || !strings.Contains(txt, "db/data-0 (sdb)") || !strings.Contains(txt, "at cap 10 min") {
		t.Errorf("text:\n%s", txt)
	}
	if !strings.Contains(errOut, "iolens: read ") {
		t.Errorf("no progress on stderr: %q", errOut)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("--html: %v", err)
	}
	if b, err := os.ReadFile(rules); err != nil || !strings.Contains(string(b), "record: iolens:volume_cap_iops") || !strings.Contains(string(b), `"node-1:9100"`) {
		t.Errorf("--rules: %v\n%s", err, b)
	}
	js, _, code := execute(t, append(base, "--expect", "sdb=iops=500", "-o", "json")...)
	var r headroom.Report
	if code != 0 || json.Unmarshal([]byte(js), &r) != nil || len(r.Volumes) != 1 {
		t.Fatalf("-o json: exit %d: %s", code, js)
	}
	if v := r.Volumes[0]; math.Abs(v.AtCapS-600) > 15 || v.Cap.Source != headroom.SourceExpect {
		t.Errorf("at cap %v s from %s, want 600 ± 15 from --expect", v.AtCapS, v.Cap.Source)
	}
	for _, f := range []string{"csv", "md", "html"} {
		if out, errOut, code := execute(t, append(base, "--expect", "sdb=iops=500", "-o", f)...); code != 0 || len(out) == 0 {
			t.Errorf("-o %s: exit %d %s", f, code, errOut)
		}
	}
}

func TestHeadroomBadInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "volumes.yaml")
	if err := os.WriteFile(in, []byte("volumes: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := "http://127.0.0.1:1"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"headroom"}, "needs --prometheus"},
		{[]string{"headroom", "--prometheus", p, "--expect", "sdb=azure:P99"}, "P99"},
		{[]string{"headroom", "--prometheus", p, "--expect", "sdb=iops=x"}, "iops"},
		{[]string{"headroom", "--prometheus", p, "--vm", "nope"}, "--vm"},
		{[]string{"headroom", "--prometheus", p, "--margin", "-5"}, "--margin"},
		{[]string{"headroom", "--prometheus", p, "-o", "pdf"}, "pdf"},
		{[]string{"headroom", "--prometheus", p, "--mapping", filepath.Join(dir, "none.yaml")}, "--mapping"},
		{[]string{"headroom", "--prometheus", p, "--mapping", in, "--html", in}, "input"},
		{[]string{"headroom", "--prometheus", p, "--since", "1d", "--from", "2026-03-01T00:00:00Z"}, "--since"},
		{[]string{"headroom", "--prometheus", p, "--rules", filepath.Join(dir, "r.yaml"), "--rules-format", "thanos"}, "--rules-format"},
		{[]string{"headroom", "--prometheus", p, "--rules-format", "operator"}, "needs --rules"},
		{[]string{"headroom", "--prometheus", p, "--selector", "app=pg"}, "needs --cluster"},
		{[]string{"headroom", "--prometheus", p, "--pvc", "db/data-0"}, "needs --cluster"},
		{[]string{"headroom", "--prometheus", p, "--rules", in, "--mapping", in}, "input"},
	} {
		_, errOut, code := execute(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if _, errOut, code := execute(t, "headroom", "--prometheus", p); code != 1 || !strings.Contains(errOut, "hint: check the URL") {
		t.Errorf("no Prometheus: exit %d, %q", code, errOut)
	}
}
