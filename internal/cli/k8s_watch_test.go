package cli

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/watch"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"
)

// TestClusterTable reads two nodes' pod logs (with a line that is not a
// record) and prints the table with the pod doing the IO.
func TestClusterTable(t *testing.T) {
	logs := map[string]string{
		"node-a": `{"schema":"iolens.watch/v1","type":"start","time":"2026-01-01T00:00:00Z","t_s":0,"start":{"interval_s":1,"devices":[{"name":"vdb","maj_min":"253:16","parallel":true}]}}
not json: a warning printed by something
{"schema":"iolens.watch/v1","type":"sample","time":"2026-01-01T00:00:01Z","t_s":1,"devices":[{"device":"vdb","state":"stalled","t_s":1,"r_s":0,"w_s":0,"r_bytes_s":0,"w_bytes_s":0,"r_await_ms":0,"w_await_ms":0,"aqu_sz":9,"rareq_bytes":0,"wareq_bytes":0,"util_pct":100,"in_flight":9}],"top":[{"device":"vdb","cgroup":"/kubepods/besteffort/podx/y","r_s":0,"w_s":120,"r_bytes_s":0,"w_bytes_s":491520,"namespace":"db","pod":"postgres-0"}]}
{"schema":"iolens.watch/v1","type":"finding","time":"2026-01-01T00:00:01Z","t_s":1,"finding":{"device":"vdb","phase":"start","kind":"stall","severity":"fail","summary":"stall started: 0 completions/s with aqu-sz 9.0"}}
`,
		"node-b": `{"schema":"iolens.watch/v1","type":"sample","time":"2026-01-01T00:00:01Z","t_s":1,"devices":[{"device":"sda","state":"ok","t_s":1,"r_s":10,"w_s":0,"r_bytes_s":40960,"w_bytes_s":0,"r_await_ms":1,"w_await_ms":0,"aqu_sz":0,"rareq_bytes":4096,"wareq_bytes":0,"util_pct":1,"in_flight":0}]}
`,
	}
	st := &clusterState{samples: map[string]result.WatchRecord{}, errs: map[string]string{"node-c": "pod not ready"}}
	for node, l := range logs {
		readWatchStream(strings.NewReader(l), func(r result.WatchRecord) { st.add(node, r) })
	}
	var out bytes.Buffer
	renderCluster(&out, st, false)
	got := out.String()
	for _, want := range []string{
		"node-a  vdb     stalled",
		"db/postgres-0",
		"node-b  sda     ok",
		"node-c  -       no data",
		"node-a  ",
		"stall started",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

// TestPrometheusRules: every iolens metric that deploy/watch-prometheusrule.yaml
// queries is one 'iolens watch --metrics-addr' exports, and every label the
// rules match on or print is one that metric carries.
func TestPrometheusRules(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := watch.NewMetrics(reg, "node-a")
	pct, left := 50.0, 600.0
	m.Observe(result.WatchRecord{Type: result.WatchTypeSample, System: &result.SystemSample{}, IOPressurePct: &pct,
		Devices: []result.WatchDevice{{Device: "vdb", State: watch.StateStalled, CeilingPct: &pct, BurstCreditPct: &pct, BurstLeftS: &left}},
		Top:     []result.WatchCgroup{{Device: "vdb", Cgroup: "/kubepods/besteffort/podx/y", WriteBWBytes: 1, Namespace: "db", Pod: "postgres-0"}}}, "azure:P10", 1)
	m.Observe(result.WatchRecord{Type: result.WatchTypeFinding, Finding: &result.WatchFinding{Device: "vdb"}}, "", 1)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]map[string]bool{}
	for _, f := range fams {
		ls := map[string]bool{}
		for _, l := range f.GetMetric()[0].GetLabel() {
			ls[l.GetName()] = true
		}
		labels[f.GetName()] = ls
	}

	b, err := os.ReadFile("../../deploy/watch-prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	metricRe := regexp.MustCompile(`\b(iolens_watch_[a-z_]+)(\{([^}]*)\})?`)
	matcherRe := regexp.MustCompile(`(\w+)\s*(=|!=|=~|!~)`)
	printedRe := regexp.MustCompile(`\$labels\.(\w+)`)
	rules := 0
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var obj struct {
			Kind string
			Spec struct {
				Groups []struct {
					Rules []struct {
						Alert       string
						Expr        string
						Annotations map[string]string
					}
				}
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Kind != "PrometheusRule" {
			continue
		}
		for _, g := range obj.Spec.Groups {
			for _, r := range g.Rules {
				rules++
				ms := metricRe.FindAllStringSubmatch(r.Expr, -1)
				for _, mm := range ms {
					ls, ok := labels[mm[1]]
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
					continue // e.g. up{}: Prometheus' own
				}
				first := labels[ms[0][1]]
				for _, text := range r.Annotations {
					for _, l := range printedRe.FindAllStringSubmatch(text, -1) {
						if !first[l[1]] {
							t.Errorf("%s prints $labels.%s, which %s does not carry", r.Alert, l[1], ms[0][1])
						}
					}
				}
			}
		}
	}
	if rules == 0 {
		t.Fatal("no rules read")
	}
}
