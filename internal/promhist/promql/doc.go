// Package promql reads and prints the label selectors of PromQL: what a
// user gives with --match, quoted again on the way out so that nothing
// typed reaches a query unquoted, and matched against label sets the way
// Prometheus matches them.
package promql
