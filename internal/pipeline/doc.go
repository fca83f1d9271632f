// Package pipeline owns a run from its first result to its outcome,
// whoever made the results (a local run, diagnose's plan, a Kubernetes
// run, the agent in a pod). Every finished result goes through one Sink,
// in one order: the expectation's ceiling findings, the run's analysis,
// the history, the NDJSON copies and the collection; at the end the
// analysis is read again over the whole run, what changed is saved again,
// and the diagnosis of each run and target is built once for every
// report to use: the outcome is data, and nothing here renders. Suite and Plan
// run a suite or diagnose's plan through it; Feed takes results another
// driver makes. Nothing here prints.
package pipeline
