// Package report reads saved results back (iolens NDJSON or plain fio
// JSON) and holds every output format iolens writes, in registries of
// Format{Name, Write(io.Writer, Input)}: a set of results (text, JSON,
// NDJSON, CSV, Markdown, one self-contained HTML page), diagnose's report,
// compare's comparison, a Kubernetes diagnose's nodes and a disk history
// from Prometheus. Every human report opens with the disk model and its
// verdict (Diagnose), then the findings worst first, then the tables and
// charts; figures over several results come from analysis.Summarize, so
// every report agrees with the others.
package report
