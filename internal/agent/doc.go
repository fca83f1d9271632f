// Package agent is what runs in a Kubernetes benchmark pod ('iolens k8s
// agent'): it runs a suite, a job file or diagnose's plan on the mounted
// volume, waits for its start gate, and writes each result framed onto
// the pod's log, where internal/k8s reads them back. It never prints
// outside those frames.
package agent
