package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"
)

// The Grafana dashboard queries metrics by name: a renamed metric would
// leave an empty panel. Every iolens_* name it uses must be one this
// package exports, and it must show the node-exporter disk metrics the
// seeds' dashboards use.
func TestDashboardUsesExportedNames(t *testing.T) {
	b, err := os.ReadFile("../../deploy/grafana/iolens-benchmark.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard is not valid JSON: %v", err)
	}
	known := map[string]bool{}
	for _, n := range []string{NameIOPS, NameThroughput, NameQuantile, NameDuration, NameEnd, NameFailed, NameFindings, NameRunInfo,
		NameLiveIOPS, NameLiveBW, NameRunning, NameTestsPlaned, NameTestsDone, NameLatency + "_bucket", NameLatency + "_sum", NameLatency + "_count"} {
		known[n] = true
	}
	re := regexp.MustCompile(`\b(iolens|node)_[a-zA-Z0-9_]+`)
	used := map[string]bool{}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range re.FindAllString(tg.Expr, -1) {
				used[m] = true
				if m[:7] == "iolens_" && !known[m] {
					t.Errorf("dashboard queries %s, which iolens does not export", m)
				}
			}
		}
	}
	for _, m := range []string{"node_disk_reads_completed_total", "node_disk_writes_completed_total", "node_disk_read_bytes_total",
		"node_disk_written_bytes_total", "node_disk_read_time_seconds_total", "node_disk_write_time_seconds_total",
		"node_disk_io_time_seconds_total", "node_disk_io_time_weighted_seconds_total", "node_cpu_seconds_total",
		"node_memory_Dirty_bytes", "node_memory_Writeback_bytes", NameLiveIOPS, NameIOPS, NameLatency + "_bucket"} {
		if !used[m] {
			t.Errorf("dashboard does not show %s", m)
		}
	}
}
