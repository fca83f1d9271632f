// Package metrics turns iolens results into Prometheus metrics: live
// per-test gauges and latency histograms served while a run is going, and
// the node-exporter textfile-collector form of saved runs. Names follow
// Prometheus conventions, with the unit in the name.
package metrics
