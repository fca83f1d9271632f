// Package report reads saved results back (iolens NDJSON or plain fio
// JSON) and renders them as text, JSON, NDJSON, CSV or Markdown.
package report
