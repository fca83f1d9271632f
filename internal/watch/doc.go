// Package watch samples block devices while a real workload runs and says
// what each one is doing: ok, busy, saturated, stalled, or at the ceiling
// of the disk it is expected to be. It keeps a log of findings (stalls,
// cliffs, writeback storms), attributes IO to cgroups, processes and
// Kubernetes pods, and exports the same figures as Prometheus metrics
// (rates as counters). Each device can be compared with its own expected
// disk, and the devices and expectations can change while watching, as
// volumes come and go on a node. The proc and sys roots are values, so
// tests and the DaemonSet can point it at fixture trees or host mounts.
package watch
