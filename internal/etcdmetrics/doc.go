// Package etcdmetrics reads an etcd member's own view of its disk: the
// etcd_disk_wal_fsync_duration_seconds and
// etcd_disk_backend_commit_duration_seconds histograms from its Prometheus
// /metrics, over one scrape (since the member started) or between two
// scrapes. It estimates the 99th percentile from the histogram's buckets
// exactly as Prometheus's histogram_quantile does, names the bucket the
// percentile lies in, and judges it against etcd's guidance (WAL fsync
// p99 below 10 ms, backend commit p99 below 25 ms), saying "undecided"
// when the bucket straddles the limit. The watch package uses its sliding
// Window for live figures.
package etcdmetrics
