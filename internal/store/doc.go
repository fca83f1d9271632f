// Package store keeps benchmark results in a SQLite database (pure Go,
// modernc.org/sqlite), so runs from many machines and clusters can be
// listed, selected by label and compared later. Each result is stored whole
// as its NDJSON record, with a few indexed columns for listing and label
// selectors; nothing is recomputed from printed tables.
package store
