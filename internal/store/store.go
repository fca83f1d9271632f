package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/iolens/iolens/internal/result"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// EnvDB names the environment variable that overrides the database path.
const EnvDB = "IOLENS_DB"

// ErrNotFound is a run id that matches no stored run.
var ErrNotFound = errors.New("no such run")

// ErrNewerSchema means the database was written by a newer iolens.
var ErrNewerSchema = errors.New("database schema is newer than this iolens")

// AmbiguousError is a run id prefix that matches several runs.
type AmbiguousError struct {
	Prefix  string
	Matches []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("run id %q matches %d runs (%s)", e.Prefix, len(e.Matches), strings.Join(e.Matches, ", "))
}

// Hint says what to do.
func (e *AmbiguousError) Hint() string { return "give more characters of the run id" }

// DefaultPath is where the history lives when neither --db nor IOLENS_DB
// say otherwise: $XDG_DATA_HOME/iolens/history.db, or
// ~/.local/share/iolens/history.db.
func DefaultPath() (string, error) {
	if p := os.Getenv(EnvDB); p != "" {
		return p, nil
	}
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the history database: %w (set %s or use --db)", err, EnvDB)
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "iolens", "history.db"), nil
}

// Store is an open history database. It is safe for concurrent use, and
// several processes may write to the same file at once.
type Store struct {
	db   *sql.DB
	path string
}

// Open opens (creating it and its directory if needed) the database at
// path and brings its schema to the current version.
func Open(ctx context.Context, path string) (*Store, error) {
	return openAt(ctx, path, 0)
}

func openAt(ctx context.Context, path string, version int) (*Store, error) {
	if path == "" {
		return nil, errors.New("empty database path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the history directory: %w", err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path}
	var v int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if v > CurrentVersion {
		db.Close()
		return nil, fmt.Errorf("%s is at schema version %d, this iolens knows up to %d: %w", path, v, CurrentVersion, ErrNewerSchema)
	}
	if err := migrate(ctx, db, version); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// dsn asks for WAL (readers never block the writer, and a process killed
// mid-transaction leaves the last committed state), a busy timeout so
// concurrent runs queue rather than fail, and write transactions that take
// the lock up front (BEGIN IMMEDIATE) so they never deadlock on upgrade.
func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Version is the schema version of the open database.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
	return v, err
}

func encodeRecord(r *result.Result) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err := json.NewEncoder(zw).Encode(r); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeRecord(gz []byte) (result.Result, error) {
	var r result.Result
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return r, err
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return r, err
	}
	err = json.Unmarshal(b, &r)
	return r, err
}

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
// already stored (same run, target, position and start) is replaced: a run
// saves each result as it completes, then again with the findings of the
// whole run.
func (s *Store) Save(ctx context.Context, rs []result.Result) (SaveStats, error) {
	return s.save(ctx, rs, true)
}

// Import stores results in one transaction, keeping any result already
// stored as it is, so importing the same file twice changes nothing.
func (s *Store) Import(ctx context.Context, rs []result.Result) (SaveStats, error) {
	return s.save(ctx, rs, false)
}

func (s *Store) save(ctx context.Context, rs []result.Result, replace bool) (SaveStats, error) {
	var st SaveStats
	if len(rs) == 0 {
		return st, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return st, fmt.Errorf("saving to %s: %w", s.path, err)
	}
	defer tx.Rollback()
	touched := map[string]bool{}
	for i := range rs {
		r := &rs[i]
		if r.RunID == "" {
			return st, fmt.Errorf("result %d (%s) has no run id", i+1, r.Test.Name)
		}
		if !touched[r.RunID] {
			touched[r.RunID] = true
			st.Runs = append(st.Runs, r.RunID)
		}
		gz, err := encodeRecord(r)
		if err != nil {
			return st, err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO runs(id, started_at, suite, target_kind, target_path, device, hostname)
			VALUES (?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING`,
			r.RunID, r.Start.UnixMilli(), r.Suite, r.Target.Kind, r.Target.Path, r.Target.Device, r.Host.Hostname)
		if err != nil {
			return st, err
		}
		key := recordKey(r)
		var id int64
		err = tx.QueryRowContext(ctx, `SELECT id FROM results WHERE rkey = ?`, key).Scan(&id)
		switch {
		case err == nil && !replace:
			st.Skipped++
			continue
		case err == nil:
			// Stored already: keep the newer record (a run re-saves its
			// results once the analysis of the whole run is known).
			if _, err := tx.ExecContext(ctx, `UPDATE results SET status=?, record_gz=? WHERE id=?`, r.Status, gz, id); err != nil {
				return st, err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM result_labels WHERE result_id=?`, id); err != nil {
				return st, err
			}
			st.Updated++
		case errors.Is(err, sql.ErrNoRows):
			res, err := tx.ExecContext(ctx, `INSERT INTO results(run_id, rkey, idx, repeat, test, status, record_gz) VALUES (?,?,?,?,?,?,?)`,
				r.RunID, key, r.Index, r.Repeat, r.Test.Name, r.Status, gz)
			if err != nil {
				return st, err
			}
			if id, err = res.LastInsertId(); err != nil {
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
		}
	}
	for _, id := range st.Runs {
		if err := refreshRun(ctx, tx, id); err != nil {
			return st, err
		}
	}
	if err := tx.Commit(); err != nil {
		return st, fmt.Errorf("saving to %s: %w", s.path, err)
	}
	return st, nil
}

// refreshRun recomputes a run's listing columns from its results' indexed
// values; the headline figures come from the stored records.
func refreshRun(ctx context.Context, tx *sql.Tx, id string) error {
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
		r, err := decodeRecord(gz)
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

// Run is one stored run as the history lists it.
type Run struct {
	ID         string    `json:"run_id"`
	Start      time.Time `json:"start"`
	Suite      string    `json:"suite"`
	TargetKind string    `json:"target_kind"`
	TargetPath string    `json:"target_path"`
	Device     string    `json:"device"`
	Hostname   string    `json:"hostname"`
	// Labels are the union of its results' labels, "k=v,k2=a|b".
	Labels     string  `json:"labels"`
	Tests      int     `json:"tests"`
	Failed     int     `json:"failed"`
	MaxIOPS    float64 `json:"max_iops"`
	MaxBWBytes float64 `json:"max_bw_bytes"`
	MaxP99Ns   float64 `json:"max_p99_ns"`
}

// ListOptions filter and limit a listing.
type ListOptions struct {
	// Selector keeps runs with at least one result matching it.
	Selector Selector
	// Limit keeps the newest N runs (0: all).
	Limit int
}

// List returns runs, newest first.
func (s *Store) List(ctx context.Context, o ListOptions) ([]Run, error) {
	q := `SELECT id, started_at, suite, target_kind, target_path, device, hostname, labels, n_tests, n_failed, max_iops, max_bw_bytes, max_p99_ns FROM runs`
	var args []any
	if len(o.Selector) > 0 {
		where, a := o.Selector.sql()
		q += ` WHERE id IN (SELECT run_id FROM results r JOIN runs ON runs.id = r.run_id WHERE ` + where + `)`
		args = a
	}
	q += ` ORDER BY started_at DESC, id DESC`
	if o.Limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(o.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var ms int64
		if err := rows.Scan(&r.ID, &ms, &r.Suite, &r.TargetKind, &r.TargetPath, &r.Device, &r.Hostname, &r.Labels,
			&r.Tests, &r.Failed, &r.MaxIOPS, &r.MaxBWBytes, &r.MaxP99Ns); err != nil {
			return nil, err
		}
		r.Start = time.UnixMilli(ms).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// ResolveID turns a run id or a unique prefix of one into the full id.
func (s *Store) ResolveID(ctx context.Context, id string) (string, error) {
	var exact string
	err := s.db.QueryRowContext(ctx, `SELECT id FROM runs WHERE id = ?`, id).Scan(&exact)
	if err == nil {
		return exact, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM runs WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 6`, len(id), id)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var ms []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return "", err
		}
		ms = append(ms, m)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	switch len(ms) {
	case 0:
		return "", fmt.Errorf("run %q: %w", id, ErrNotFound)
	case 1:
		return ms[0], nil
	}
	return "", &AmbiguousError{Prefix: id, Matches: ms}
}

// Results returns the stored results of a run (id or unique prefix), in
// test order.
func (s *Store) Results(ctx context.Context, id string) ([]result.Result, error) {
	full, err := s.ResolveID(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.query(ctx, `SELECT record_gz FROM results WHERE run_id = ? ORDER BY idx, repeat, id`, full)
}

// Select returns every stored result matching sel, oldest run first.
func (s *Store) Select(ctx context.Context, sel Selector) ([]result.Result, error) {
	where, args := sel.sql()
	return s.query(ctx, `SELECT r.record_gz FROM results r JOIN runs ON runs.id = r.run_id WHERE `+where+
		` ORDER BY runs.started_at, r.run_id, r.idx, r.repeat, r.id`, args...)
}

func (s *Store) query(ctx context.Context, q string, args ...any) ([]result.Result, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []result.Result
	for rows.Next() {
		var gz []byte
		if err := rows.Scan(&gz); err != nil {
			return nil, err
		}
		r, err := decodeRecord(gz)
		if err != nil {
			return nil, fmt.Errorf("reading a stored result: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Delete removes a run (id or unique prefix) and its results, returning
// the full id.
func (s *Store) Delete(ctx context.Context, id string) (string, error) {
	full, err := s.ResolveID(ctx, id)
	if err != nil {
		return "", err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, full); err != nil {
		return "", err
	}
	return full, tx.Commit()
}
