// Package clusterwatch is what 'iolens watch' learns from the Kubernetes
// API: what the node's volumes are expected to deliver (their claims,
// volumes and classes mapped to catalog disks), which pod and container
// an IO belongs to, and the logs of the watch pods of a cluster followed
// into one view ('iolens k8s watch': View). It sits above internal/k8s and internal/watch, so that
// the cluster driver never depends on the watcher.
package clusterwatch
