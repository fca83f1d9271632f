// Package report reads saved results back (iolens NDJSON or plain fio
// JSON) and renders them as text, JSON, NDJSON, CSV, Markdown or one
// self-contained HTML page. Every human report opens with the disk model
// and its verdict (Diagnose), then the findings worst first, then the
// tables and charts; figures over several results come from
// analysis.Summarize, so every report agrees with the others.
package report
