package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/iolens/iolens/internal/result"
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
	// Version 3 keeps each result's headline figures beside its record,
	// and the distinct labels of each run, so that saving a result updates
	// its run's summary in SQL without reading the run's other records.
	{Version: 3, SQL: `
ALTER TABLE results ADD COLUMN started_at INTEGER NOT NULL DEFAULT 0; -- unix ms
ALTER TABLE results ADD COLUMN read_iops REAL;
ALTER TABLE results ADD COLUMN read_bw_bytes REAL;
ALTER TABLE results ADD COLUMN read_p99_ns REAL;
ALTER TABLE results ADD COLUMN write_iops REAL;
ALTER TABLE results ADD COLUMN write_bw_bytes REAL;
ALTER TABLE results ADD COLUMN write_p99_ns REAL;
ALTER TABLE results ADD COLUMN sync_iops REAL;
ALTER TABLE results ADD COLUMN sync_bw_bytes REAL;
ALTER TABLE results ADD COLUMN sync_p99_ns REAL;
CREATE TABLE run_labels (
	run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	key    TEXT NOT NULL,
	value  TEXT NOT NULL,
	PRIMARY KEY (run_id, key, value)
) WITHOUT ROWID;
`, Go: backfillV3},
	// Version 4 keeps which results carry the mark of a run stopped part
	// way, and their count per run, so that a listing says a run's status
	// without reading its records.
	{Version: 4, SQL: `
ALTER TABLE results ADD COLUMN interrupted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN n_interrupted INTEGER NOT NULL DEFAULT 0;
`, Go: backfillV4},
}

// minReadVersion is the oldest schema the read queries work on unchanged
// (version 2 added the labels and the runs' summary columns), so that a
// read-only open of such a database needs no migration.
const minReadVersion = 2

// CurrentVersion is the schema version this build writes.
var CurrentVersion = migrations[len(migrations)-1].Version

// backfillV2 indexes the labels of results stored under schema 1 and
// computes the headline columns of every run.
func backfillV2(ctx context.Context, tx *sql.Tx) error {
	type lab struct {
		id   int64
		k, v string
	}
	var ls []lab
	err := eachRecord(ctx, tx, func(id int64, r *result.Result) error {
		for k, v := range r.Target.Labels {
			ls = append(ls, lab{id, k, v})
		}
		return nil
	})
	if err != nil {
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
		if err := refreshRunV2(ctx, tx, id); err != nil {
			return err
		}
	}
	return nil
}

// refreshRunV2 computes a run's listing columns the way schema 2 did,
// from its decoded records. It is part of the version 2 step, frozen with
// it.
func refreshRunV2(ctx context.Context, tx *sql.Tx, id string) error {
	rows, err := tx.QueryContext(ctx, `SELECT record_gz FROM results WHERE run_id = ?`, id)
	if err != nil {
		return err
	}
	var (
		n, failed           int
		maxIOPS, maxBW, p99 float64
		start               int64 = math.MaxInt64
		labels                    = map[string]map[string]bool{}
	)
	for rows.Next() {
		var gz []byte
		if err := rows.Scan(&gz); err != nil {
			rows.Close()
			return err
		}
		left := int64(result.MaxReadBytes) // one record at a time
		r, err := decodeRecord(gz, &left)
		if err != nil {
			rows.Close()
			return err
		}
		n++
		if r.Status != "ok" {
			failed++
		}
		if ms := r.Start.UnixMilli(); ms < start {
			start = ms
		}
		for _, d := range []*result.DirResult{r.Read, r.Write, r.Sync} {
			if d == nil {
				continue
			}
			maxIOPS = math.Max(maxIOPS, d.IOPS)
			maxBW = math.Max(maxBW, d.BWBytes)
			p99 = math.Max(p99, d.Lat.P99Ns)
		}
		for k, v := range r.Target.Labels {
			if labels[k] == nil {
				labels[k] = map[string]bool{}
			}
			labels[k][v] = true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if n == 0 {
		_, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, id)
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE runs SET started_at=?, labels=?, n_tests=?, n_failed=?, max_iops=?, max_bw_bytes=?, max_p99_ns=? WHERE id=?`,
		start, formatLabelSet(labels), n, failed, maxIOPS, maxBW, p99, id)
	return err
}

func formatLabelSet(m map[string]map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		vs := make([]string, 0, len(m[k]))
		for v := range m[k] {
			vs = append(vs, v)
		}
		sort.Strings(vs)
		parts = append(parts, k+"="+strings.Join(vs, "|"))
	}
	return strings.Join(parts, ",")
}

// backfillV3 fills the headline columns of results stored before version
// 3 (each record is decoded once, here), the distinct labels of every run,
// and recomputes every run's summary from the new columns.
func backfillV3(ctx context.Context, tx *sql.Tx) error {
	type row struct {
		id int64
		h  headline
	}
	var hs []row
	err := eachRecord(ctx, tx, func(id int64, r *result.Result) error {
		hs = append(hs, row{id, headlineOf(r)})
		return nil
	})
	if err != nil {
		return err
	}
	for _, h := range hs {
		if _, err := tx.ExecContext(ctx, `UPDATE results SET (`+headlineCols+`) = (?,?,?,?,?,?,?,?,?,?) WHERE id = ?`,
			append(h.h.args(), h.id)...); err != nil {
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

// backfillV4 marks the stored results of interrupted runs (each record is
// decoded once, here) and counts them per run.
func backfillV4(ctx context.Context, tx *sql.Tx) error {
	var marked []int64
	err := eachRecord(ctx, tx, func(id int64, r *result.Result) error {
		if r.Interrupted() {
			marked = append(marked, id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range marked {
		if _, err := tx.ExecContext(ctx, `UPDATE results SET interrupted = 1 WHERE id = ?`, id); err != nil {
			return err
		}
	}
	// Every run's summary is computed again too (one pass over its rows in
	// SQL), so that the counts a status is read from agree.
	ids, err := queryStrings(ctx, tx, `SELECT id FROM runs`)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := refreshRun(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, recountInterrupted, id); err != nil {
			return err
		}
	}
	return nil
}

// eachRecord decodes every stored record once, in id order of the
// table's scan, and hands it to fn: the backfills' one walk.
func eachRecord(ctx context.Context, tx *sql.Tx, fn func(id int64, r *result.Result) error) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, record_gz FROM results`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var gz []byte
		if err := rows.Scan(&id, &gz); err != nil {
			return err
		}
		left := int64(result.MaxReadBytes) // one record at a time
		r, err := decodeRecord(gz, &left)
		if err != nil {
			return fmt.Errorf("result %d: %w", id, err)
		}
		if err := fn(id, &r); err != nil {
			return err
		}
	}
	return rows.Err()
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
