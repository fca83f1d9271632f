// Package k8s benchmarks Kubernetes volumes. It expands a matrix of
// storage classes, sizes, nodes and volumes per node into targets, gives
// each target a PVC and a Job whose pod runs the iolens agent, streams the
// agent's framed results back from the pod log, explains failures from
// events and conditions, and deletes everything it created, in reverse
// order, whatever happens. It never prints: progress goes to a callback.
package k8s
