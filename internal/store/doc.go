// Package store keeps benchmark results in a SQLite database (pure Go,
// modernc.org/sqlite), so runs from many machines and clusters can be
// listed, selected by label and compared later. Each result is stored once,
// whole, as its NDJSON record, beside its headline figures (IOPS, bandwidth
// and p99 per direction, status); a run's summary is kept from those in SQL,
// so saving a result costs the same in a run of one test or of thousands.
// A Keeper saves a run's results as they complete, retrying while another
// process holds the lock, and says which results were lost. Commands that
// only read open the database read-only.
package store
