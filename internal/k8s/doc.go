// Package k8s drives Kubernetes volume benchmarks. It expands a matrix of
// storage classes, sizes, nodes and volumes per node into targets, gives
// each target a PVC and a Job whose pod runs the iolens agent
// (internal/agent), starts the targets that must run together at one time
// through a ConfigMap the run owns, streams the agent's framed results
// back from the pod log, explains failures from events, conditions and
// volume topology, and deletes everything it created, in reverse order,
// whatever happens. It also finds the default class and the schedulable
// nodes, and checks what a command asks for (Request, NodeRequest,
// CleanupRequest, PodOptions, AgentOptions) before the first call to the
// API, every mistake a *RequestError. It imports only the record, hints,
// units and the catalog, so that nothing it does depends on how results
// are analysed or shown; it never prints: progress goes to a callback,
// and its text (progress lines, tables) to what the caller gives it.
package k8s
