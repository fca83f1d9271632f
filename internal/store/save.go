package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/iolens/iolens/internal/result"
)

// RecordError is a result that cannot be stored however often it is
// tried (no run id, a value JSON cannot hold): retrying will not help.
type RecordError struct {
	// Position is the result's 1-based place in the Save call.
	Position int
	Test     string
	Err      error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("result %d (%s): %v", e.Position, e.Test, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// recordKey identifies a result across imports.
func recordKey(r *result.Result) string {
	return strings.Join([]string{r.RunID, r.Target.Kind, r.Target.Path, strconv.Itoa(r.Index), strconv.Itoa(r.Repeat),
		r.Test.Name, strconv.FormatInt(r.Start.UnixNano(), 10)}, "\x1f")
}

// SaveStats counts what a Save did.
type SaveStats struct {
	// Updated counts results that were stored already (same run, target,
	// position and start) and were replaced by the given record; Skipped
	// those an import left as they were.
	Added, Updated, Skipped int
	Runs                    []string
}

// Save stores results in one transaction: all of them or none. A result
// already stored (same run, target, position and start) is replaced.
func (s *Store) Save(ctx context.Context, rs []result.Result) (SaveStats, error) {
	var enc recordEncoder
	return s.save(ctx, rs, true, &enc)
}

// Import stores results in one transaction, keeping any result already
// stored as it is, so importing the same file twice changes nothing.
func (s *Store) Import(ctx context.Context, rs []result.Result) (SaveStats, error) {
	var enc recordEncoder
	return s.save(ctx, rs, false, &enc)
}

// headline is what the results table keeps of a record beside the record
// itself: the figures a listing and a run's summary are made of.
type headline struct {
	startMs int64
	// iops, bw, p99 of read, write and sync; nil where the result has no
	// such direction (or a figure that is not a finite number).
	figs [9]any
}

func headlineOf(r *result.Result) headline {
	h := headline{startMs: r.Start.UnixMilli()}
	for i, d := range []*result.DirResult{r.Read, r.Write, r.Sync} {
		if d == nil {
			continue
		}
		h.figs[3*i], h.figs[3*i+1], h.figs[3*i+2] = finite(d.IOPS), finite(d.BWBytes), finite(d.Lat.P99Ns)
	}
	return h
}

// finite keeps NaN and infinities (which no listing can show, and which
// SQLite would store as NULL or as a value JSON cannot hold) out of the
// figures.
func finite(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

const headlineCols = `started_at, read_iops, read_bw_bytes, read_p99_ns, write_iops, write_bw_bytes, write_p99_ns, sync_iops, sync_bw_bytes, sync_p99_ns`

func (h headline) args() []any { return append([]any{h.startMs}, h.figs[:]...) }

// The SQL of one result's part in its run's summary: the highest IOPS,
// bandwidth and p99 over its directions (a result r of the results table).
const (
	resultIOPS = `max(coalesce(r.read_iops,0), coalesce(r.write_iops,0), coalesce(r.sync_iops,0))`
	resultBW   = `max(coalesce(r.read_bw_bytes,0), coalesce(r.write_bw_bytes,0), coalesce(r.sync_bw_bytes,0))`
	resultP99  = `max(coalesce(r.read_p99_ns,0), coalesce(r.write_p99_ns,0), coalesce(r.sync_p99_ns,0))`
)

// addToRun folds one newly stored result into its run's summary, so a
// save costs the same whether the run holds one result or thousands.
const addToRun = `UPDATE runs SET n_tests = n_tests + 1, n_failed = n_failed + (r.status <> 'ok'),
	n_interrupted = n_interrupted + r.interrupted,
	started_at = min(runs.started_at, r.started_at),
	max_iops = max(runs.max_iops, ` + resultIOPS + `),
	max_bw_bytes = max(runs.max_bw_bytes, ` + resultBW + `),
	max_p99_ns = max(runs.max_p99_ns, ` + resultP99 + `)
	FROM results AS r WHERE r.id = ? AND runs.id = r.run_id`

// recomputeRun computes a run's summary from its results' columns, for
// when a result was replaced (a maximum cannot be taken back): one pass
// over the run's rows, no record decoded.
const recomputeRun = `UPDATE runs SET (started_at, n_tests, n_failed, max_iops, max_bw_bytes, max_p99_ns) =
	(SELECT min(r.started_at), count(*), count(*) FILTER (WHERE r.status <> 'ok'),
		coalesce(max(` + resultIOPS + `),0), coalesce(max(` + resultBW + `),0), coalesce(max(` + resultP99 + `),0)
	 FROM results AS r WHERE r.run_id = ?1)
	WHERE id = ?1`

// recountInterrupted counts a run's results marked interrupted (schema 4).
const recountInterrupted = `UPDATE runs SET n_interrupted = (SELECT count(*) FROM results r WHERE r.run_id = ?1 AND r.interrupted)
	WHERE id = ?1`

// runLabels writes the union of a run's labels as "k=a|b,k2=c", from the
// run's distinct labels (not from its results, so it does not grow with
// them).
const runLabels = `UPDATE runs SET labels = coalesce((
	SELECT group_concat(kv, ',' ORDER BY key) FROM (
		SELECT key, key || '=' || group_concat(value, '|' ORDER BY value) AS kv
		FROM run_labels WHERE run_id = ?1 GROUP BY key)), '')
	WHERE id = ?1`

// save stores rs, encoding each record with enc.
func (s *Store) save(ctx context.Context, rs []result.Result, replace bool, enc *recordEncoder) (SaveStats, error) {
	var st SaveStats
	if len(rs) == 0 {
		return st, nil
	}
	if s.ro {
		return st, fmt.Errorf("%s: %w", s.path, ErrReadOnly)
	}
	// Encode before taking the lock, and refuse a bad record before
	// writing anything.
	gzs := make([][]byte, len(rs))
	for i := range rs {
		r := &rs[i]
		if r.RunID == "" {
			return st, &RecordError{Position: i + 1, Test: r.Test.Name, Err: errors.New("no run id")}
		}
		gz, err := enc.encode(r)
		if err != nil {
			return st, &RecordError{Position: i + 1, Test: r.Test.Name, Err: err}
		}
		gzs[i] = gz
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return st, fmt.Errorf("saving to %s: %w", s.path, err)
	}
	defer tx.Rollback()
	touched := map[string]bool{}
	relabel := map[string]bool{}
	recompute := map[string]bool{}
	for i := range rs {
		r := &rs[i]
		if !touched[r.RunID] {
			touched[r.RunID] = true
			st.Runs = append(st.Runs, r.RunID)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO runs(id, started_at, suite, target_kind, target_path, device, hostname)
			VALUES (?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING`,
			r.RunID, r.Start.UnixMilli(), r.Suite, r.Target.Kind, r.Target.Path, r.Target.Device, r.Host.Hostname)
		if err != nil {
			return st, err
		}
		h := headlineOf(r)
		key := recordKey(r)
		var id int64
		err = tx.QueryRowContext(ctx, `SELECT id FROM results WHERE rkey = ?`, key).Scan(&id)
		switch {
		case err == nil && !replace:
			st.Skipped++
			continue
		case err == nil:
			args := append([]any{r.Status, r.Test.Name, gzs[i], r.Interrupted()}, h.args()...)
			if _, err := tx.ExecContext(ctx, `UPDATE results SET (status, test, record_gz, interrupted, `+headlineCols+`) =
				(?,?,?,?,?,?,?,?,?,?,?,?,?,?) WHERE id = ?`, append(args, id)...); err != nil {
				return st, err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM result_labels WHERE result_id = ?`, id); err != nil {
				return st, err
			}
			recompute[r.RunID] = true
			st.Updated++
		case errors.Is(err, sql.ErrNoRows):
			args := append([]any{r.RunID, key, r.Index, r.Repeat, r.Test.Name, r.Status, gzs[i], r.Interrupted()}, h.args()...)
			res, err := tx.ExecContext(ctx, `INSERT INTO results(run_id, rkey, idx, repeat, test, status, record_gz, interrupted, `+headlineCols+`)
				VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...)
			if err != nil {
				return st, err
			}
			if id, err = res.LastInsertId(); err != nil {
				return st, err
			}
			if _, err := tx.ExecContext(ctx, addToRun, id); err != nil {
				return st, err
			}
			st.Added++
		default:
			return st, err
		}
		for k, v := range r.Target.Labels {
			if _, err := tx.ExecContext(ctx, `INSERT INTO result_labels(result_id, key, value) VALUES (?,?,?)`, id, k, v); err != nil {
				return st, err
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO run_labels(run_id, key, value) VALUES (?,?,?) ON CONFLICT DO NOTHING`, r.RunID, k, v)
			if err != nil {
				return st, err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				relabel[r.RunID] = true
			}
		}
	}
	for _, id := range st.Runs {
		switch {
		case recompute[id]:
			if err := refreshRun(ctx, tx, id); err != nil {
				return st, err
			}
			if _, err := tx.ExecContext(ctx, recountInterrupted, id); err != nil {
				return st, err
			}
		case relabel[id]:
			if _, err := tx.ExecContext(ctx, runLabels, id); err != nil {
				return st, err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return st, fmt.Errorf("saving to %s: %w", s.path, err)
	}
	return st, nil
}

// refreshRun recomputes everything a run keeps about its results: the
// summary, the set of labels and their listing. A run left with no result
// is removed.
func refreshRun(ctx context.Context, tx *sql.Tx, id string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM results WHERE run_id = ?`, id).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		_, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, id)
		return err
	}
	for _, q := range []string{
		recomputeRun,
		`DELETE FROM run_labels WHERE run_id = ?1`,
		`INSERT INTO run_labels(run_id, key, value) SELECT DISTINCT r.run_id, l.key, l.value
			FROM results r JOIN result_labels l ON l.result_id = r.id WHERE r.run_id = ?1`,
		runLabels,
	} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}
