// Package headroom judges every volume of a fleet against its own limits
// from the node exporter's history in Prometheus: its use over a range
// counted as the provider counts it, the time at the cap in force (base
// or burst, the credit followed through limits.Bucket), each node's sum
// against its VM's caps, and a recommendation with list prices. It reads
// all devices of a metric in one query (never one query per volume) and
// keeps a bounded summary per volume, so memory does not grow with the
// range.
package headroom
