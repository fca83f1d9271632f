// Package result is the record every part of iolens reads and writes: one
// benchmark result (the test's spec, the target, the host, per-direction
// figures with their latency histogram, the time series, findings and
// fio's raw JSON). It is a leaf: it imports no other iolens package, so
// anything can depend on it without carrying the runner, procfs or system
// calls along.
package result
