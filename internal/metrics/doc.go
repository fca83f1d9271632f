// Package metrics turns iolens results into Prometheus metrics and serves
// them: the live endpoint of a run (no run id, so runs do not multiply
// series), the node-exporter textfile form of saved runs (with run_id, for
// history) and pushes to a Pushgateway, all with per-test figures from
// analysis.Summarize and iolens_build_info. Its Server is the one /metrics
// server of iolens; 'iolens watch' registers its own metrics on it.
package metrics
