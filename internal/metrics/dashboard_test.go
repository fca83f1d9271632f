package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/runner"
	"github.com/iolens/iolens/internal/watch"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/yaml"
)

const (
	watchDashboard = "../../deploy/grafana-dashboard.json"
	benchDashboard = "../../deploy/grafana/iolens-benchmark.json"
)

type dashboard struct {
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		Targets []struct {
			Expr         string `json:"expr"`
			LegendFormat string `json:"legendFormat"`
		} `json:"targets"`
	} `json:"panels"`
}

func readDashboard(t *testing.T, path string) dashboard {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s is not valid JSON: %v", path, err)
	}
	return d
}

// exported gathers every metric family iolens exports, from every
// exporter fed with one of everything: the name and its type.
func exported(t *testing.T) map[string]dto.MetricType {
	t.Helper()
	out := map[string]dto.MetricType{}
	add := func(g prometheus.Gatherer) {
		mfs, err := g.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range mfs {
			out[f.GetName()] = f.GetType()
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM:
				out[f.GetName()+"_bucket"] = dto.MetricType_COUNTER
				fallthrough
			case dto.MetricType_SUMMARY:
				out[f.GetName()+"_sum"] = dto.MetricType_COUNTER
				out[f.GetName()+"_count"] = dto.MetricType_COUNTER
			}
		}
	}
	// watch
	reg := NewRegistry(testBuild)
	m := watch.NewMetrics(reg, "n1")
	left := 600.0
	m.Expect("vdb", &watch.Ceiling{Name: "azure:P10", IOPS: 500, BWBytes: 100e6, BurstIOPS: 3500, BurstBWBytes: 170e6, BurstSeconds: 1800, VMIOPS: 6400, VMBWBytes: 96e6})
	for _, r := range watchRecords() {
		if r.Type == result.WatchTypeSample {
			r.Devices[0].BurstLeftS = &left
		}
		m.Observe(r)
	}
	add(reg)
	// live
	l := NewLive("quick", map[string]string{"a": "b"}, time.Now())
	l.Event(runner.Event{Kind: runner.EventTestStart, Total: 2, Test: result.TestSpec{Name: "t"}})
	l.Add(sample())
	reg = prometheus.NewRegistry()
	reg.MustRegister(l)
	add(reg)
	// history
	reg = prometheus.NewRegistry()
	reg.MustRegister(newHistory([]result.Result{sample()}))
	add(reg)
	// push
	reg = prometheus.NewRegistry()
	reg.MustRegister(newPushCollector(PushGroup{Key: map[string]string{"node": "k8s.node"}, Results: []result.Result{sample()}}))
	add(reg)
	return out
}

// watchRecords is a short watch log: start, a stalled sample with a
// cgroup, a finding.
func watchRecords() []result.WatchRecord {
	pct := 50.0
	return []result.WatchRecord{
		{Type: result.WatchTypeStart, T: 0},
		{Type: result.WatchTypeSample, T: 1, System: &result.SystemSample{IowaitPct: 20, DirtyBytes: 1 << 20}, IOPressurePct: &pct,
			Devices: []result.WatchDevice{{Device: "vdb", State: watch.StateStalled, BurstCreditPct: &pct,
				DeviceSample: result.DeviceSample{WriteIOPS: 10, WriteBWBytes: 40960, WriteAwaitMs: 3, QueueSize: 2, UtilPct: 100, InFlight: 4}}},
			Top: []result.WatchCgroup{{Device: "vdb", Cgroup: "/kubepods/besteffort/podx/y", WriteBWBytes: 1, Namespace: "db", Pod: "postgres-0"}}},
		{Type: result.WatchTypeFinding, T: 1, Finding: &result.WatchFinding{Device: "vdb", Phase: "start", Finding: result.Finding{Kind: "stall"}}},
	}
}

var metricRe = regexp.MustCompile(`\b((?:iolens|node)_[a-zA-Z0-9_]+)`)

// enclosing returns the function whose call encloses position i of expr
// ("rate" in rate(x[5m])), "" at the top level.
func enclosing(expr string, i int) string {
	depth := 0
	for j := i - 1; j >= 0; j-- {
		switch expr[j] {
		case ')':
			depth++
		case '(':
			if depth > 0 {
				depth--
				continue
			}
			k := j
			for k > 0 && (expr[k-1] == '_' || expr[k-1] >= 'a' && expr[k-1] <= 'z') {
				k--
			}
			return expr[k:j]
		}
	}
	return ""
}

// titleItems counts the series a title names: "Write and read IOPS" is
// two, "iowait, IO pressure, Dirty and Writeback" four; text in
// parentheses explains, and is not counted.
func titleItems(title string) int {
	t := regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(title, "")
	return len(regexp.MustCompile(`, | and `).Split(t, -1))
}

func TestTitleItems(t *testing.T) {
	for title, want := range map[string]int{"Write and read IOPS": 2, "iowait, IO pressure, Dirty and Writeback": 4,
		"Await (time per request, queueing included)": 1, "Queue size (aqu-sz) and utilization": 2, "Burst credit left": 1} {
		if got := titleItems(title); got != want {
			t.Errorf("%q: %d items, want %d", title, got, want)
		}
	}
}

// TestDashboards: both dashboards have node and device variables; every
// query names metrics iolens (or node-exporter) exports, reads counters
// only through rate() or increase(), filters on the variables; every
// panel plots at least the series its title names.
func TestDashboards(t *testing.T) {
	have := exported(t)
	node := map[string]bool{"node_disk_reads_completed_total": true, "node_disk_writes_completed_total": true, "node_disk_read_bytes_total": true,
		"node_disk_written_bytes_total": true, "node_disk_read_time_seconds_total": true, "node_disk_write_time_seconds_total": true,
		"node_disk_io_time_seconds_total": true, "node_disk_io_time_weighted_seconds_total": true, "node_cpu_seconds_total": true,
		"node_memory_Dirty_bytes": true, "node_memory_Writeback_bytes": true}
	for _, path := range []string{watchDashboard, benchDashboard} {
		d := readDashboard(t, path)
		name := filepath.Base(path)
		vars := map[string]bool{}
		for _, v := range d.Templating.List {
			vars[v.Name] = true
		}
		if !vars["node"] || !vars["device"] {
			t.Errorf("%s: no node and device variables (has %v)", name, vars)
		}
		used := map[string]bool{}
		for _, p := range d.Panels {
			if p.Type == "row" {
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: panel %q has no query", name, p.Title)
			}
			if n := titleItems(p.Title); len(p.Targets) < n {
				t.Errorf("%s: panel %q names %d series but plots %d queries", name, p.Title, n, len(p.Targets))
			}
			legends := map[string]bool{}
			for _, tg := range p.Targets {
				if tg.LegendFormat == "" || legends[tg.LegendFormat] {
					t.Errorf("%s: panel %q: empty or repeated legend %q", name, p.Title, tg.LegendFormat)
				}
				legends[tg.LegendFormat] = true
				for _, loc := range metricRe.FindAllStringSubmatchIndex(tg.Expr, -1) {
					m := tg.Expr[loc[2]:loc[3]]
					used[m] = true
					typ, ok := have[m]
					if !ok && !node[m] {
						t.Errorf("%s: panel %q queries %s, which neither iolens nor node-exporter exports", name, p.Title, m)
						continue
					}
					// A test's histogram is a finished result, constant in
					// time: its buckets are read as they are.
					counter := (ok && typ == dto.MetricType_COUNTER || strings.HasSuffix(m, "_total")) && !strings.HasPrefix(m, "iolens_test_")
					if f := enclosing(tg.Expr, loc[2]); counter && f != "rate" && f != "increase" && f != "irate" {
						t.Errorf("%s: panel %q reads counter %s without rate(): %s", name, p.Title, m, tg.Expr)
					}
					if strings.HasPrefix(m, "iolens_watch_") && !strings.Contains(tg.Expr, `node=~"$node"`) {
						t.Errorf("%s: panel %q: %s not filtered by $node", name, p.Title, m)
					}
					if strings.HasPrefix(m, "node_disk_") && !strings.Contains(tg.Expr, `device=~"$device"`) {
						t.Errorf("%s: panel %q: %s not filtered by $device", name, p.Title, m)
					}
				}
				if strings.Contains(tg.Expr, "iolens_watch_device_") && !strings.Contains(tg.Expr, `device=~"$device"`) {
					t.Errorf("%s: panel %q not filtered by $device: %s", name, p.Title, tg.Expr)
				}
			}
		}
		if path == watchDashboard {
			for _, m := range []string{"iolens_watch_device_state_code", "iolens_watch_device_state_seconds_total", "iolens_watch_device_io_operations_total",
				"iolens_watch_device_bytes_total", "iolens_watch_device_io_wait_seconds_total", "iolens_watch_device_busy_seconds_total",
				"iolens_watch_device_queue_seconds_total", "iolens_watch_host_iowait_seconds_total", "iolens_watch_host_io_pressure_seconds_total",
				"iolens_watch_host_memory_bytes", "iolens_watch_cgroup_bytes_per_second", "iolens_watch_device_expected_iops"} {
				if !used[m] {
					t.Errorf("%s does not show %s", name, m)
				}
			}
		} else {
			for m := range node {
				if !used[m] {
					t.Errorf("%s does not show %s", name, m)
				}
			}
			for _, m := range []string{nameRunIOs, nameIOPS, nameLatency + "_bucket", nameLatencySummary, nameFindings} {
				if !used[m] {
					t.Errorf("%s does not show %s", name, m)
				}
			}
		}
	}
}

// TestDashboardQueriesParse: every query, with Grafana's variables
// filled in, is PromQL that promtool accepts (as recording rules in a
// rules file).
func TestDashboardQueriesParse(t *testing.T) {
	p := promtool(t)
	vars := regexp.MustCompile(`\$\{?(\w+)\}?`)
	var rules []map[string]string
	for _, path := range []string{watchDashboard, benchDashboard} {
		d := readDashboard(t, path)
		for _, v := range d.Templating.List {
			if q, ok := v.Query.(map[string]any); ok {
				// label_values(SELECTOR, label): the selector must parse.
				s, _ := q["query"].(string)
				if m := regexp.MustCompile(`^label_values\((.*), *\w+\)$`).FindStringSubmatch(s); m != nil {
					rules = append(rules, map[string]string{"record": fmt.Sprintf("iolens:dashboard:q%d", len(rules)), "expr": m[1]})
				} else {
					t.Errorf("%s: variable %s: query %q", filepath.Base(path), v.Name, s)
				}
			}
		}
		for _, pn := range d.Panels {
			for _, tg := range pn.Targets {
				rules = append(rules, map[string]string{"record": fmt.Sprintf("iolens:dashboard:q%d", len(rules)), "expr": tg.Expr})
			}
		}
	}
	for i, r := range rules {
		r["expr"] = vars.ReplaceAllStringFunc(r["expr"], func(v string) string {
			if strings.Contains(v, "__rate_interval") {
				return "1m"
			}
			return "x"
		})
		rules[i] = r
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboards", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "check", "rules", f).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules on the dashboards' %d queries: %v\n%s", len(rules), err, out)
	}
	if !bytes.Contains(out, []byte(fmt.Sprintf("SUCCESS: %d rules found", len(rules)))) {
		t.Errorf("promtool: %s", out)
	}
}
