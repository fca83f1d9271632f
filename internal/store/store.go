package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/iolens/iolens/internal/hint"
	"github.com/iolens/iolens/internal/result"
	"github.com/iolens/iolens/internal/units"
	"github.com/iolens/iolens/internal/userfile"
	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// EnvDB names the environment variable that overrides the database path.
const EnvDB = "IOLENS_DB"

// DefaultBusyTimeout is how long a statement waits for another process's
// write lock before it fails with "database is locked".
const DefaultBusyTimeout = 10 * time.Second

// ErrNotFound is a run id that matches no stored run.
var ErrNotFound = errors.New("no such run")

// ErrNewerSchema means the database was written by a newer iolens.
var ErrNewerSchema = errors.New("database schema is newer than this iolens")

// ErrEmptyID is an empty (or blank) run id: it would match every run, so
// it names none.
var ErrEmptyID = errors.New("empty run id")

// ErrNoDatabase is a database that does not exist, opened read-only.
var ErrNoDatabase = errors.New("no history database")

// ErrReadOnly is a write to a database opened read-only.
var ErrReadOnly = errors.New("history database opened read-only")

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

// NoDatabaseError is a read of a database file that does not exist. It
// matches ErrNoDatabase.
type NoDatabaseError struct{ Path string }

func (e *NoDatabaseError) Error() string {
	return fmt.Sprintf("no history database at %s", e.Path)
}

func (e *NoDatabaseError) Is(target error) bool { return target == ErrNoDatabase }

// Hint says what to do.
func (e *NoDatabaseError) Hint() string {
	return "nothing has been saved there yet: 'iolens run' and 'iolens history import' save to it; or give another database with --db PATH or " + EnvDB
}

// DefaultPath is where the history lives when neither --db nor IOLENS_DB
// say otherwise: $XDG_DATA_HOME/iolens/history.db, or
// ~/.local/share/iolens/history.db.
func DefaultPath() (string, error) {
	if p := os.Getenv(EnvDB); p != "" {
		return p, nil
	}
	return homePath()
}

// Paths are every path this user's history database may be at: $IOLENS_DB
// when set, and the default under $XDG_DATA_HOME or the home directory,
// so that no output of any command lands on one of them.
func Paths() []string {
	var ps []string
	if p := os.Getenv(EnvDB); p != "" {
		ps = append(ps, p)
	}
	if p, err := homePath(); err == nil {
		ps = append(ps, p)
	}
	return ps
}

func homePath() (string, error) {
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

// Options say how to open a database.
type Options struct {
	// ReadOnly opens an existing database for reading only: a missing file
	// is ErrNoDatabase (never an empty new database), and a database of
	// an older schema this build still reads is read as it is.
	ReadOnly bool
	// MustExist opens for writing a database that exists already (a
	// missing one is ErrNoDatabase), for commands that only change what is
	// there, such as removing runs.
	MustExist bool
	// BusyTimeout is how long a statement waits for another writer's lock
	// (DefaultBusyTimeout when 0).
	BusyTimeout time.Duration
	// immutable reads a database nobody can write: on a read-only mount,
	// SQLite can make none of the files a WAL reader needs.
	immutable bool
}

// Store is an open history database. It is safe for concurrent use, and
// several processes may write to the same file at once.
type Store struct {
	db      *sql.DB
	path    string
	ro      bool
	version int
	// read is what is left of the reads' budget (query), and results
	// how many results have been read of result.MaxResults.
	read    atomic.Int64
	results atomic.Int64
}

// Open opens (creating it and its directory if needed) the database at
// path for reading and writing, bringing its schema to the current
// version.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenReadOnly opens the existing database at path for the commands that
// only read it.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{ReadOnly: true})
}

// OpenWith opens the database at path as o says.
func OpenWith(ctx context.Context, path string, o Options) (*Store, error) {
	if o.ReadOnly {
		return openReadOnly(ctx, path, o)
	}
	return openAt(ctx, path, o, 0)
}

// openAt opens for writing and migrates to version (CurrentVersion when 0).
func openAt(ctx context.Context, path string, o Options, version int) (*Store, error) {
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("empty database path")
	}
	if o.MustExist {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, &NoDatabaseError{Path: path}
		}
	}
	fi, serr := os.Stat(path)
	if strings.HasSuffix(path, string(filepath.Separator)) || serr == nil && fi.IsDir() {
		return nil, fmt.Errorf("database path %s is a directory: give a file, such as %s", path, filepath.Join(path, "history.db"))
	}
	if serr == nil && !fi.Mode().IsRegular() {
		// SQLite would write its journal beside it: /dev/null-journal.
		return nil, fmt.Errorf("database path %s is a %s, not a regular file: give a file, such as ~/iolens-history.db", path, userfile.Kind(fi.Mode()))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the history directory: %w", err)
	}
	// Switching a new file to WAL takes an exclusive lock, and SQLite
	// answers a writer that races another for it with "locked" at once,
	// without waiting out the busy timeout: wait here instead.
	busy := o.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	deadline := time.Now().Add(busy)
	var s *Store
	var err error
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		s, err = connect(ctx, path, o)
		if err == nil || !isBusy(err) || time.Now().Add(wait).After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	if err != nil {
		return nil, err
	}
	if version == 0 {
		version = CurrentVersion
	}
	if s.version < version {
		if err := migrate(ctx, s.db, version); err != nil {
			s.db.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if s.version, err = s.Version(ctx); err != nil {
			s.db.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return s, nil
}

func openReadOnly(ctx context.Context, path string, o Options) (*Store, error) {
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("empty database path")
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &NoDatabaseError{Path: path}
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is a %s, not a database file", path, userfile.Kind(fi.Mode()))
	}
	s, err := connect(ctx, path, o)
	if err != nil && (unwritable(path) || fullNoWAL(path, err)) {
		// A read-only mount (a backup, a volume mounted ro in a pod):
		// nobody writes there, so the file is read as it is. On a full
		// file system SQLite cannot make its shared-memory file; with no
		// WAL beside it, every committed run is in the file itself.
		o.immutable = true
		s, err = connect(ctx, path, o)
	}
	if err != nil {
		return nil, err
	}
	if s.version >= minReadVersion {
		return s, nil
	}
	s.db.Close()
	if s.version == 0 {
		// Every iolens that wrote a database left it at version 1 or more.
		return nil, fmt.Errorf("%s is not an iolens history database (schema version 0)", path)
	}
	// Too old to read as it is: migrate it once, then read.
	w, err := openAt(ctx, path, Options{BusyTimeout: o.BusyTimeout}, 0)
	if err != nil {
		return nil, fmt.Errorf("%s must be upgraded from schema version %d before it can be read: %w", path, s.version, err)
	}
	w.Close()
	return connect(ctx, path, o)
}

// DiskFullError is a history database on a file system with no room
// left, which SQLite reports as a bare I/O error.
type DiskFullError struct {
	Path string
	Err  error
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("opening %s: the file system is full (%v)", e.Path, e.Err)
}
func (e *DiskFullError) Unwrap() error { return e.Err }

// Hint says what to do.
func (e *DiskFullError) Hint() string {
	return fmt.Sprintf("free some space on the file system that holds %s (df -h %s), or copy the database to a disk with room and give it with --db or $%s",
		filepath.Dir(e.Path), filepath.Dir(e.Path), EnvDB)
}

// fullRoom is the free space below which a file system counts as full
// for SQLite: less than it needs for its shared-memory file and a page of
// journal.
const fullRoom = 256 << 10

// isFull reports whether the file system holding path has no room left
// for this user.
func isFull(path string) bool {
	var st unix.Statfs_t
	if unix.Statfs(filepath.Dir(path), &st) != nil {
		return false
	}
	free := st.Bavail
	if os.Geteuid() == 0 {
		free = st.Bfree
	}
	return free*uint64(st.Bsize) < fullRoom
}

// sqliteIOError is an error SQLite gives when it cannot write: an I/O
// error (a shared-memory file it cannot size) or a full database.
func sqliteIOError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "disk I/O error") || strings.Contains(s, "disk is full")
}

// fullNoWAL reports whether err came from a full file system and no WAL
// file holds commits the database file lacks (an empty one holds none).
func fullNoWAL(path string, err error) bool {
	var full *DiskFullError
	if !errors.As(err, &full) {
		return false
	}
	// The failed open itself may leave an empty WAL.
	fi, serr := os.Stat(path + "-wal")
	return errors.Is(serr, fs.ErrNotExist) || serr == nil && fi.Size() == 0
}

// unwritable reports whether the database at path sits where nothing can
// write: on a read-only file system, or in a directory this user cannot
// write with no WAL file beside it (so no writer has it open in WAL mode).
func unwritable(path string) bool {
	dir := filepath.Dir(path)
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) == nil && st.Flags&unix.ST_RDONLY != 0 {
		return true
	}
	if unix.Access(dir, unix.W_OK) == nil {
		return false
	}
	_, err := os.Stat(path + "-wal")
	return errors.Is(err, fs.ErrNotExist)
}

// connect opens the database and reads its version, refusing a newer one.
func connect(ctx context.Context, path string, o Options) (*Store, error) {
	name, err := dsn(path, o)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path, ro: o.ReadOnly}
	s.read.Store(result.MaxReadBytes)
	if s.version, err = s.Version(ctx); err != nil {
		db.Close()
		if sqliteIOError(err) && isFull(path) {
			return nil, &DiskFullError{Path: path, Err: err}
		}
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if s.version > CurrentVersion {
		db.Close()
		return nil, fmt.Errorf("%s is at schema version %d, this iolens knows up to %d: %w", path, s.version, CurrentVersion, ErrNewerSchema)
	}
	return s, nil
}

// dsn names the file as an SQLite URI, its path percent-escaped so that no
// character of a file name ('?', '#', '%', spaces) is read as URI syntax.
// Writers ask for WAL (readers never block the writer, and a process
// killed mid-transaction leaves the last committed state), a busy timeout
// so concurrent runs queue rather than fail, and write transactions that
// take the lock up front (BEGIN IMMEDIATE) so they never deadlock on
// upgrade. Readers open with mode=ro: SQLite then neither creates the
// file nor writes to it.
func dsn(path string, o Options) (string, error) {
	if strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("database path %q contains a NUL byte", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("database path %s: %w", path, err)
	}
	busy := o.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "foreign_keys(1)")
	if o.ReadOnly {
		q.Set("mode", "ro")
		if o.immutable {
			q.Set("immutable", "1")
		}
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode(), nil
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
	Labels string `json:"labels"`
	Tests  int    `json:"tests"`
	Failed int    `json:"failed"`
	// Interrupted counts the results marked as those of a run stopped
	// part way (0 in a database older than schema 4, which kept no mark).
	Interrupted int `json:"interrupted"`
	// Status is what became of the run, from the counts above.
	Status     result.RunStatus `json:"status"`
	MaxIOPS    float64          `json:"max_iops"`
	MaxBWBytes float64          `json:"max_bw_bytes"`
	MaxP99Ns   float64          `json:"max_p99_ns"`
}

// MarshalJSON writes a figure that is unknown (NaN: the database held
// one no run gives) as null.
func (r Run) MarshalJSON() ([]byte, error) {
	type plain Run
	known := func(v float64) *float64 {
		if math.IsNaN(v) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		plain
		MaxIOPS    *float64 `json:"max_iops"`
		MaxBWBytes *float64 `json:"max_bw_bytes"`
		MaxP99Ns   *float64 `json:"max_p99_ns"`
	}{plain(r), known(r.MaxIOPS), known(r.MaxBWBytes), known(r.MaxP99Ns)})
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
	// A read-only open of a database older than schema 4 has no count of
	// interrupted results.
	interrupted := "0"
	if s.version >= 4 {
		interrupted = "n_interrupted"
	}
	q := `SELECT id, started_at, suite, target_kind, target_path, device, hostname, labels, n_tests, n_failed, ` + interrupted + `, max_iops, max_bw_bytes, max_p99_ns FROM runs`
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
			&r.Tests, &r.Failed, &r.Interrupted, &r.MaxIOPS, &r.MaxBWBytes, &r.MaxP99Ns); err != nil {
			return nil, err
		}
		r.Status = result.StatusOf(r.Tests, r.Failed, r.Interrupted)
		r.Start = time.UnixMilli(ms).UTC()
		// A figure no run gives (a database changed by hand, or by an
		// iolens that did not check) is unknown, never printed as read.
		r.MaxIOPS = units.IOPSFigure.Or(r.MaxIOPS)
		r.MaxBWBytes = units.BandwidthFigure.Or(r.MaxBWBytes)
		r.MaxP99Ns = units.LatencyNsFigure.Or(r.MaxP99Ns)
		out = append(out, r)
	}
	return out, rows.Err()
}

// ResolveID turns a run id or a unique prefix of one into the full id. An
// empty id is ErrEmptyID and a prefix of several runs an *AmbiguousError:
// neither ever stands for "every run".
func (s *Store) ResolveID(ctx context.Context, id string) (string, error) {
	if strings.TrimSpace(id) == "" {
		return "", fmt.Errorf("run %q: %w", id, ErrEmptyID)
	}
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

// RunIDs lists the runs args name: a run id (or a prefix of one) as it
// is, a selector as its newest last runs; no args are the newest last
// runs. A selector that does not parse is a *SelectorError.
func (s *Store) RunIDs(ctx context.Context, args []string, last int) ([]string, error) {
	var ids []string
	add := func(o ListOptions) error {
		runs, err := s.List(ctx, o)
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		return err
	}
	if len(args) == 0 {
		if err := add(ListOptions{Limit: last}); err != nil {
			return nil, err
		}
	}
	for _, a := range args {
		if !LooksLikeSelector(a) {
			ids = append(ids, a)
			continue
		}
		sel, err := ParseSelector(a)
		if err != nil {
			return nil, &SelectorError{Err: err}
		}
		if err := add(ListOptions{Selector: sel, Limit: last}); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// Selected returns the stored results of the runs args name (RunIDs),
// run after run. A selector that does not parse is a *hint.UsageError,
// a run that is not there as LookupError says.
func (s *Store) Selected(ctx context.Context, args []string, last int) ([]result.Result, error) {
	ids, err := s.RunIDs(ctx, args, last)
	var se *SelectorError
	if errors.As(err, &se) {
		return nil, hint.Usage(err, hint.Of(err))
	}
	if err != nil {
		return nil, err
	}
	rs, err := s.ResultsOf(ctx, ids)
	return rs, LookupError(err)
}

// RecentRunIDs lists the newest n runs of the history at path (""
// for DefaultPath), opened read-only.
func RecentRunIDs(ctx context.Context, path string, n int) ([]string, error) {
	if path == "" {
		var err error
		if path, err = DefaultPath(); err != nil {
			return nil, err
		}
	}
	s, err := OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.RunIDs(ctx, nil, n)
}

// ResultsOf returns the stored results of each run (id or unique
// prefix), run after run in the order given.
func (s *Store) ResultsOf(ctx context.Context, ids []string) ([]result.Result, error) {
	var rs []result.Result
	for _, id := range ids {
		r, err := s.Results(ctx, id)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r...)
	}
	return rs, nil
}

// ResolveIDs resolves each run id or unique prefix (ResolveID), a run
// named twice once: all are checked before anything is done with any.
func (s *Store) ResolveIDs(ctx context.Context, ids []string) ([]string, error) {
	var full []string
	seen := map[string]bool{}
	for _, id := range ids {
		f, err := s.ResolveID(ctx, id)
		if err != nil {
			return nil, err
		}
		if !seen[f] {
			seen[f] = true
			full = append(full, f)
		}
	}
	return full, nil
}

// Select returns every stored result matching sel, oldest run first.
func (s *Store) Select(ctx context.Context, sel Selector) ([]result.Result, error) {
	where, args := sel.sql()
	return s.query(ctx, `SELECT r.record_gz FROM results r JOIN runs ON runs.id = r.run_id WHERE `+where+
		` ORDER BY runs.started_at, r.run_id, r.idx, r.repeat, r.id`, args...)
}

// query reads the records q selects. Every record a Store reads counts
// against its budget: what one command takes from the history is bounded
// by result.MaxReadBytes in total, however many queries it makes (a
// *result.TooMuchError past it), and by result.MaxResults in number (a
// *result.TooManyError).
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
		if s.results.Add(1) > result.MaxResults {
			return nil, &result.TooManyError{Max: result.MaxResults}
		}
		left := s.read.Load()
		r, err := decodeRecord(gz, &left)
		s.read.Store(left)
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
	if s.ro {
		return "", fmt.Errorf("%s: %w", s.path, ErrReadOnly)
	}
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

// OpenDefault is OpenWith for a command line: path "" is DefaultPath, and
// every error says what to do in its hint (a *hint.Error).
func OpenDefault(ctx context.Context, path string, o Options) (*Store, error) {
	if path == "" {
		var err error
		if path, err = DefaultPath(); err != nil {
			return nil, hint.Wrap(err, "give the database with --db PATH or "+EnvDB)
		}
	}
	s, err := OpenWith(ctx, path, o)
	if err != nil {
		advice := "check the path and its permissions, or give another with --db PATH or " + EnvDB
		var nd *NoDatabaseError
		switch {
		case !o.ReadOnly && unwritable(path):
			advice = "the database is where iolens cannot write (a read-only mount?): 'history', 'history show' and 'history export' read it there; to change it, work on a copy with --db COPY"
		case errors.As(err, &nd):
			advice = nd.Hint()
		case errors.Is(err, ErrNewerSchema):
			advice = "upgrade iolens, or use another database with --db"
		}
		return nil, hint.Wrap(fmt.Errorf("history database: %w", err), advice)
	}
	return s, nil
}
