package metrics

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/watch"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite generated files (deploy/watch-rules.yaml)")

const (
	ruleManifest = "../../deploy/watch-prometheusrule.yaml"
	rulesFile    = "../../deploy/watch-rules.yaml"
	rulesTests   = "../../deploy/watch-prometheusrule-test.yaml"
)

const rulesHeader = `# Generated from deploy/watch-prometheusrule.yaml (its spec.groups), the one source of
# these rules, for Prometheus without the Operator (rule_files:) and for promtool.
# Do not edit; regenerate: go test ./internal/metrics -run TestRulesFile -update
`

// manifestDocs splits a multi-document YAML file.
func manifestDocs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n---\n")
}

// rulesFromManifest is the PrometheusRule's spec.groups as a plain rules
// file: the lines from "groups:" on, one level less indented, comments
// kept.
func rulesFromManifest(t *testing.T) []byte {
	t.Helper()
	for _, doc := range manifestDocs(t, ruleManifest) {
		if !regexp.MustCompile(`(?m)^kind: PrometheusRule$`).MatchString(doc) {
			continue
		}
		i := strings.Index(doc, "\n  groups:\n")
		if i < 0 {
			t.Fatal("the PrometheusRule has no spec.groups at two spaces")
		}
		var b bytes.Buffer
		b.WriteString(rulesHeader)
		for _, l := range strings.Split(strings.TrimRight(doc[i+1:], "\n"), "\n") {
			b.WriteString(strings.TrimPrefix(l, "  "))
			b.WriteByte('\n')
		}
		return b.Bytes()
	}
	t.Fatal("no PrometheusRule in " + ruleManifest)
	return nil
}

// TestRulesFile: deploy/watch-rules.yaml is generated from the
// PrometheusRule, the one source of the rules.
func TestRulesFile(t *testing.T) {
	want := rulesFromManifest(t)
	if *update {
		if err := os.WriteFile(rulesFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the PrometheusRule's groups; regenerate it: go test ./internal/metrics -run TestRulesFile -update", rulesFile)
	}
}

// TestRulesAgree compares the two as data, apart from the text: the
// PrometheusRule's spec.groups and the rules file's groups are equal.
func TestRulesAgree(t *testing.T) {
	var fromManifest []any
	for _, doc := range manifestDocs(t, ruleManifest) {
		var obj struct {
			Kind string
			Spec struct {
				Groups []any `json:"groups"`
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Kind == "PrometheusRule" {
			fromManifest = obj.Spec.Groups
		}
	}
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []any `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(b, &file); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	if len(fromManifest) == 0 || !reflect.DeepEqual(fromManifest, file.Groups) {
		t.Errorf("the PrometheusRule and %s disagree", rulesFile)
	}
}

// promtool returns promtool's path, or skips saying why.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found: install the Debian package prometheus ('make deps' does)")
	}
	return p
}

// TestPromtoolRules: the rules pass 'promtool check rules' and their unit
// tests, deploy/watch-prometheusrule-test.yaml: the stall text says how
// long, IolensWatchDown fires when no watch is left, every alert fires on
// the counters iolens watch exports and stays quiet below its threshold.
func TestPromtoolRules(t *testing.T) {
	p := promtool(t)
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", rulesTests}} {
		out, err := exec.Command(p, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
			continue
		}
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	}
	// The tests cover every alert.
	b, err := os.ReadFile(rulesTests)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*- alert: (\w+)`).FindAllStringSubmatch(string(rules), -1) {
		if !bytes.Contains(b, []byte("alertname: "+m[1]+"\n")) {
			t.Errorf("%s has no test for %s", filepath.Base(rulesTests), m[1])
		}
	}
}

// TestRulesUseExportedMetrics: every iolens metric the rules query is one
// iolens watch exports, with the labels the rules match on; every label
// an alert prints is on its result (the first metric's, or one a join
// adds).
func TestRulesUseExportedMetrics(t *testing.T) {
	reg := NewRegistry(testBuild)
	m := watch.NewMetrics(reg, "node-a")
	m.Expect("vdb", &watch.Ceiling{Name: "azure:P10", IOPS: 500, BurstIOPS: 3500, BurstSeconds: 1800})
	left := 600.0
	for _, r := range watchRecords() {
		if r.Type == result.WatchTypeSample {
			r.Devices[0].BurstLeftS = &left
		}
		m.Observe(r)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]map[string]bool{}
	for _, f := range fams {
		ls := map[string]bool{}
		for _, l := range f.GetMetric()[0].GetLabel() {
			ls[l.GetName()] = true
		}
		have[f.GetName()] = ls
	}
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert       string
				Expr        string
				Annotations map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	metricRe := regexp.MustCompile(`\b(iolens_[a-z_]+)(\{([^}]*)\})?`)
	matcherRe := regexp.MustCompile(`(\w+)\s*(=|!=|=~|!~)`)
	printedRe := regexp.MustCompile(`\$labels\.(\w+)`)
	joinRe := regexp.MustCompile(`group_left\s*\(([^)]*)\)`)
	n := 0
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			n++
			ms := metricRe.FindAllStringSubmatch(r.Expr, -1)
			for _, mm := range ms {
				ls, ok := have[mm[1]]
				if !ok {
					t.Errorf("%s: %s is not an iolens watch metric", r.Alert, mm[1])
					continue
				}
				for _, l := range matcherRe.FindAllStringSubmatch(mm[3], -1) {
					if !ls[l[1]] {
						t.Errorf("%s: %s has no label %s", r.Alert, mm[1], l[1])
					}
				}
			}
			if len(ms) == 0 {
				continue // up{}, kube-state-metrics: not iolens'
			}
			printable := map[string]bool{"instance": true, "job": true}
			for l := range have[ms[0][1]] {
				printable[l] = true
			}
			for _, j := range joinRe.FindAllStringSubmatch(r.Expr, -1) {
				for _, l := range strings.Split(j[1], ",") {
					printable[strings.TrimSpace(l)] = true
				}
			}
			for _, text := range r.Annotations {
				for _, l := range printedRe.FindAllStringSubmatch(text, -1) {
					if !printable[l[1]] {
						t.Errorf("%s prints $labels.%s, which its result does not carry", r.Alert, l[1])
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no rules read")
	}
}
