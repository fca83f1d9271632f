package headroom_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/headroom"
	"github.com/iolens/iolens/internal/promhist/promql"
	"go.yaml.in/yaml/v3"
)

// rulesReport is a report of four nodes whose caps the rules carry:
// n1 sdb capped at 500 IOPS, sdc and sdd too; n2 sdb 100 IOPS with a
// burst to 1,000 for 600 s; n3 and n5 sdb the same; n4 sdb and sdc capped at
// 500 IOPS on a VM capped at 600.
func rulesReport() *headroom.Report {
	c500 := &headroom.Cap{Name: "iops=500", IOPS: 500}
	burst := &headroom.Cap{Name: "iops=100,burst-iops=1000,burst-s=600", IOPS: 100, BurstIOPS: 1000, BurstSeconds: 600}
	vol := func(inst, dev string, c *headroom.Cap) *headroom.Volume {
		return &headroom.Volume{Instance: inst, Device: dev, Cap: c}
	}
	return &headroom.Report{ScrapeIntervalS: 15,
		Volumes: []*headroom.Volume{vol("n1:9100", "sdb", c500), vol("n1:9100", "sdc", c500), vol("n1:9100", "sdd", c500),
			vol("n2:9100", "sdb", burst), vol("n3:9100", "sdb", burst), vol("n5:9100", "sdb", burst), vol("n4:9100", "sdb", c500), vol("n4:9100", "sdc", c500),
			{Instance: "n1:9100", Device: "sda"}},
		Nodes: []*headroom.Node{{Instance: "n4:9100", VM: "test", VMIOPS: 600}}}
}

// The history the rules are tested on, at a 15 s scrape interval, 40
// minutes: n1 sdb at 500 IOPS (its cap), sdc at 400 (busy, under it),
// sdd idle; n2 sdb at 1,000 IOPS (its burst, which lasts 600 s); n3 sdb
// at 50 (under its base); n5 sdb, the same disk, at 110 (above its
// base, its credit lasting hours); n4 sdb and sdc at 300 each (60% of their
// caps, 100% of the VM's together). Reads and writes split evenly.
const rulesTestSeries = `
      - {series: 'node_disk_reads_completed_total{instance="n1:9100",device="sdb",job="node"}', values: '0+3750x160'}
      - {series: 'node_disk_writes_completed_total{instance="n1:9100",device="sdb",job="node"}', values: '0+3750x160'}
      - {series: 'node_disk_reads_completed_total{instance="n1:9100",device="sdc",job="node"}', values: '0+3000x160'}
      - {series: 'node_disk_writes_completed_total{instance="n1:9100",device="sdc",job="node"}', values: '0+3000x160'}
      - {series: 'node_disk_reads_completed_total{instance="n1:9100",device="sdd",job="node"}', values: '0+0x160'}
      - {series: 'node_disk_writes_completed_total{instance="n1:9100",device="sdd",job="node"}', values: '0+0x160'}
      - {series: 'node_disk_reads_completed_total{instance="n2:9100",device="sdb",job="node"}', values: '0+7500x160'}
      - {series: 'node_disk_writes_completed_total{instance="n2:9100",device="sdb",job="node"}', values: '0+7500x160'}
      - {series: 'node_disk_reads_completed_total{instance="n3:9100",device="sdb",job="node"}', values: '0+375x160'}
      - {series: 'node_disk_writes_completed_total{instance="n3:9100",device="sdb",job="node"}', values: '0+375x160'}
      - {series: 'node_disk_reads_completed_total{instance="n5:9100",device="sdb",job="node"}', values: '0+825x160'}
      - {series: 'node_disk_writes_completed_total{instance="n5:9100",device="sdb",job="node"}', values: '0+825x160'}
      - {series: 'node_disk_reads_completed_total{instance="n4:9100",device="sdb",job="node"}', values: '0+2250x160'}
      - {series: 'node_disk_writes_completed_total{instance="n4:9100",device="sdb",job="node"}', values: '0+2250x160'}
      - {series: 'node_disk_reads_completed_total{instance="n4:9100",device="sdc",job="node"}', values: '0+2250x160'}
      - {series: 'node_disk_writes_completed_total{instance="n4:9100",device="sdc",job="node"}', values: '0+2250x160'}
`

const rulesTests = `
    alert_rule_test:
      # n1 sdb has been at its cap 10 minutes by 12m (the first minute
      # fills the rate window); sdc, busy at 80%, and sdd never fire.
      - eval_time: 9m
        alertname: IolensVolumeAtCap
        exp_alerts: []
      - eval_time: 13m
        alertname: IolensVolumeAtCap
        exp_alerts:
          - EXP IolensVolumeAtCap n1:9100 sdb
          - EXP IolensVolumeAtCap n2:9100 sdb
      - eval_time: 39m
        alertname: IolensVolumeAtCap
        exp_alerts:
          - EXP IolensVolumeAtCap n1:9100 sdb
          - EXP IolensVolumeAtCap n2:9100 sdb
      # n2 runs at its burst: its credit (600 s from full) runs out within
      # 15 minutes; n3, under its base, and n5, whose credit lasts hours
      # at 110 IOPS, never.
      - eval_time: 5m
        alertname: IolensVolumeBurstCreditLow
        exp_alerts:
          - EXP IolensVolumeBurstCreditLow n2:9100 sdb
      - eval_time: 39m
        alertname: IolensVolumeBurstCreditLow
        exp_alerts:
          - EXP IolensVolumeBurstCreditLow n2:9100 sdb
      # n4's two volumes together meet the VM's 600 IOPS.
      - eval_time: 8m
        alertname: IolensVMCapBinds
        exp_alerts:
          - EXP IolensVMCapBinds n4:9100 -
`

func promtool(t *testing.T, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Skip("promtool is not installed: 'apt-get install prometheus' (make deps) to run this test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "promtool", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// expected writes each "- EXP ALERT INSTANCE DEVICE" of tests as the
// alert's labels and its summary, rendered from the rules.
func expected(t *testing.T, rules []byte, tests string) string {
	t.Helper()
	var doc struct {
		Groups []struct {
			Rules []struct {
				Alert       string
				Annotations map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(rules, &doc); err != nil {
		t.Fatal(err)
	}
	summary := map[string]string{}
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			summary[r.Alert] = r.Annotations["summary"]
		}
	}
	var out []string
	for _, l := range strings.Split(tests, "\n") {
		f := strings.Fields(l)
		if len(f) != 5 || f[1] != "EXP" {
			out = append(out, l)
			continue
		}
		s := strings.ReplaceAll(summary[f[2]], "{{ $labels.instance }}", f[3])
		lbl := fmt.Sprintf("{severity: warning, instance: %q", f[3])
		if f[4] != "-" {
			s = strings.ReplaceAll(s, "{{ $labels.device }}", f[4])
			lbl += ", device: " + f[4]
		}
		indent := l[:strings.Index(l, "-")]
		out = append(out, indent+"- exp_labels: "+lbl+"}", indent+"  exp_annotations: {summary: "+strconv.Quote(s)+"}")
	}
	return strings.Join(out, "\n")
}

func TestRules(t *testing.T) {
	dir := t.TempDir()
	b, err := headroom.Rules(rulesReport(), promql.Selector{}, headroom.RulesPlain)
	if err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(rules, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"sda"`) {
		t.Error("a rule for a volume whose cap is unknown")
	}
	promtool(t, "check", "rules", rules)
	test := "rule_files: [rules.yml]\nevaluation_interval: 15s\ntests:\n  - interval: 15s\n    input_series:" + rulesTestSeries + expected(t, b, rulesTests)
	tf := filepath.Join(dir, "test.yml")
	if err := os.WriteFile(tf, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, "test", "rules", tf)

	op, err := headroom.Rules(rulesReport(), promql.Selector{}, headroom.RulesOperator)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(op), "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\n") || !strings.Contains(string(op), "  groups:\n") {
		t.Errorf("operator format:\n%s", op)
	}
	if _, err := headroom.Rules(rulesReport(), nil, "thanos"); err == nil {
		t.Error("an unknown rules format accepted")
	}
}
