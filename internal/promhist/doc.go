// Package promhist reads a node's disk history back from Prometheus (the
// node exporter's node_disk_*, CPU and memory series, through the HTTP
// API's query_range) and judges it with the detectors of a live watch:
// stalls, cliffs, saturation, writeback storms and the expected ceiling,
// plus flat ceilings and their level, each with its absolute time. It
// bounds what it asks for and what it accepts (points, series, bytes),
// retries at a coarser step when Prometheus refuses a query for its
// size, and writes the findings as Grafana annotations. A PVC is resolved
// to its node, device and node-exporter selector through the cluster API.
package promhist
