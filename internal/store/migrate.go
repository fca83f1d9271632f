package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migration moves the schema from version Version-1 to Version. Steps run
// in one transaction together with the PRAGMA user_version bump, so a
// database is always at exactly one version.
type migration struct {
	Version int
	SQL     string
	// Go runs after SQL, inside the same transaction (backfills).
	Go func(ctx context.Context, tx *sql.Tx) error
}

// migrations lists every schema version. Never edit a released step: add a
// new one.
var migrations = []migration{
	{Version: 1, SQL: `
CREATE TABLE runs (
	id           TEXT PRIMARY KEY,
	started_at   INTEGER NOT NULL, -- unix ms of the earliest result start
	suite        TEXT NOT NULL,
	target_kind  TEXT NOT NULL,
	target_path  TEXT NOT NULL,
	device       TEXT NOT NULL,
	hostname     TEXT NOT NULL,
	imported     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_started ON runs(started_at);
CREATE TABLE results (
	id         INTEGER PRIMARY KEY,
	run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	-- rkey identifies a record across imports: run, target, position, start.
	rkey       TEXT NOT NULL UNIQUE,
	idx        INTEGER NOT NULL,
	repeat     INTEGER NOT NULL,
	test       TEXT NOT NULL,
	status     TEXT NOT NULL,
	record_gz  BLOB NOT NULL -- gzip of the result's NDJSON line
);
CREATE INDEX results_run ON results(run_id, idx, repeat);
`},
	{Version: 2, SQL: `
CREATE TABLE result_labels (
	result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
	key       TEXT NOT NULL,
	value     TEXT NOT NULL,
	PRIMARY KEY (result_id, key)
);
CREATE INDEX result_labels_kv ON result_labels(key, value);
ALTER TABLE runs ADD COLUMN labels TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN n_tests INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN n_failed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN max_iops REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN max_bw_bytes REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN max_p99_ns REAL NOT NULL DEFAULT 0;
`, Go: backfillV2},
}

// CurrentVersion is the schema version this build writes.
var CurrentVersion = migrations[len(migrations)-1].Version

// backfillV2 indexes the labels of results stored under schema 1 and
// computes the headline columns of every run.
func backfillV2(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, record_gz FROM results`)
	if err != nil {
		return err
	}
	type lab struct {
		id   int64
		k, v string
	}
	var ls []lab
	for rows.Next() {
		var id int64
		var gz []byte
		if err := rows.Scan(&id, &gz); err != nil {
			rows.Close()
			return err
		}
		r, err := decodeRecord(gz)
		if err != nil {
			rows.Close()
			return fmt.Errorf("result %d: %w", id, err)
		}
		for k, v := range r.Target.Labels {
			ls = append(ls, lab{id, k, v})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, l := range ls {
		if _, err := tx.ExecContext(ctx, `INSERT INTO result_labels(result_id, key, value) VALUES (?,?,?)`, l.id, l.k, l.v); err != nil {
			return err
		}
	}
	ids, err := queryStrings(ctx, tx, `SELECT id FROM runs`)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := refreshRun(ctx, tx, id); err != nil {
			return err
		}
	}
	return nil
}

func queryStrings(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// migrate brings db to version upTo (CurrentVersion when 0).
func migrate(ctx context.Context, db *sql.DB, upTo int) error {
	if upTo == 0 {
		upTo = CurrentVersion
	}
	for _, m := range migrations {
		if m.Version > upTo {
			break
		}
		if err := step(ctx, db, m); err != nil {
			return fmt.Errorf("schema migration to version %d: %w", m.Version, err)
		}
	}
	return nil
}

func step(ctx context.Context, db *sql.DB, m migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Read the version inside the (immediate) transaction so two processes
	// opening a fresh database do not both apply the step.
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if v >= m.Version {
		return nil
	}
	if v != m.Version-1 {
		return fmt.Errorf("database is at version %d, expected %d", v, m.Version-1)
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if m.Go != nil {
		if err := m.Go(ctx, tx); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, m.Version)); err != nil {
		return err
	}
	return tx.Commit()
}
