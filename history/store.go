package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/stacktune/stacktune/input"
)

// Run is one remembered benchmark run.
type Run struct {
	ID       int64     `json:"id"`
	Label    string    `json:"label"`    // e.g. "add index on relations"; "" allowed
	Started  time.Time `json:"started"`  // when the run started; Add fills in now when zero
	Target   string    `json:"target"`   // URL or scenario base URL, stored without user:password@
	Scenario string    `json:"scenario"` // scenario name, "" for a plain URL run
	Score    float64   `json:"score"`
	Passed   bool      `json:"passed"`

	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	RPS      float64 `json:"rps"`

	P50 time.Duration `json:"p50_ns"`
	P90 time.Duration `json:"p90_ns"`
	P99 time.Duration `json:"p99_ns"`
	Max time.Duration `json:"max_ns"`

	// Details is the full result JSON, kept for later reports. Add removes
	// URL user information from every string in it, as it does for Target.
	Details json.RawMessage `json:"details,omitempty"`

	// The ledger (schema version 2): what ran and against what.

	// Command is what recorded the run: one of the Command* codes ("" in
	// runs recorded before the ledger).
	Command string `json:"command,omitempty"`
	// Failure is why a run that did not pass failed ("" when it passed).
	Failure string `json:"failure,omitempty"`
	// ScenarioHash identifies the load (ScenarioHash): two runs with
	// different hashes ran different loads.
	ScenarioHash string `json:"scenario_hash,omitempty"`
	// DataReset is how the data was reset before the run (a scenario's
	// pre_run, a TPC-C reload, a data dir restore), "" for none.
	DataReset string `json:"data_reset,omitempty"`
	// Versions are the stack's versions by component ("mysql": "MariaDB
	// 10.11.6", "nginx": "1.22.1"), as far as the command knew them.
	Versions map[string]string `json:"versions,omitempty"`
	// AppCommit is the app's git commit (GitCommit), "" when unknown.
	AppCommit string `json:"app_commit,omitempty"`
	// Duration is the measured run's length (warm-up excluded).
	Duration time.Duration `json:"duration_ns,omitempty"`
	// Session is the tune or ab session the run belongs to (0: none),
	// Arm its arm there ("a" or "b").
	Session int64  `json:"session,omitempty"`
	Arm     string `json:"arm,omitempty"`

	// Artefacts are stored with the run by Add (compressed, each bounded
	// by MaxArtefactBytes) and read back with Store.Artefact; Runs and
	// List leave them out.
	Artefacts []Artefact `json:"-"`
}

// Filter selects runs. Zero fields select everything.
type Filter struct {
	Target   string    // exact target (credentials are stripped before comparing); "" = any
	Scenario string    // exact scenario name; "" = any (plain URL runs and scenarios alike)
	Since    time.Time // runs started at or after Since; zero = any
	Labels   []string  // runs with one of these labels; empty = any
	Limit    int       // keep only the most recent Limit runs; 0 = all
	// Commands selects runs recorded by these commands (Command*
	// codes); empty = every command but diagnose, whose runs carry the
	// capture's overhead and stay out of the score transitions.
	Commands []string
}

// ErrNewerSchema is returned by Open for a database written by a newer
// stacktune (its schema version is above the ones this build knows).
var ErrNewerSchema = errors.New("history database was written by a newer stacktune")

// Store is an open history database. It is safe for concurrent use by
// goroutines, and several processes may open the same file and append at once.
type Store struct {
	db   *sql.DB
	path string
	// Retention bounds the artefacts kept (DefaultRetention from Open);
	// Add prunes to it after storing a run with artefacts.
	Retention Retention
}

// busyTimeout is how long a statement waits for another connection or
// process holding the write lock before it fails with SQLITE_BUSY.
const busyTimeout = 10 * time.Second

// Open opens the history database at path, creating it (and its directory)
// when missing, and brings its schema up to date.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("history: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("history: creating the database directory: %w", err)
	}
	// SQLite would open a FIFO or a device and fail later with a disk I/O
	// error: say what it is instead.
	if fi, err := os.Stat(abs); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("history: %w", &input.NotRegularError{Path: path, Mode: fi.Mode()})
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("history: opening %s: %w", abs, err)
	}
	s := &Store{db: db, path: abs, Retention: DefaultRetention}
	if err := retryBusy(func() error { return s.migrate(context.Background()) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("history: %s: %w", abs, err)
	}
	return s, nil
}

// retryBusy runs f until it does not fail with SQLITE_BUSY or
// SQLITE_LOCKED, for up to busyTimeout. The busy timeout covers ordinary
// lock waits, but SQLite returns SQLITE_BUSY at once where waiting could
// deadlock, which happens when two processes create the same database at
// the same moment (one switching the new file to WAL while the other
// starts its migration); trying again a little later then succeeds.
func retryBusy(f func() error) error {
	deadline := time.Now().Add(busyTimeout)
	wait := 5 * time.Millisecond
	for {
		err := f()
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, 200*time.Millisecond)
	}
}

func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff { // the primary result code
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// dsn builds the modernc.org/sqlite connection string. Every pooled
// connection gets the same settings: a busy timeout (applied first, so
// switching to WAL waits for other processes instead of failing), WAL so
// readers never block the writer, synchronous=NORMAL (durable across
// process crashes; WAL makes it safe), and BEGIN IMMEDIATE for transactions
// so a read-then-write migration takes the write lock up front instead of
// failing to upgrade a read lock when another process got there first.
func dsn(abs string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	return u.String() + "?" + q.Encode()
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// OpenDefault opens the history at path, or at DefaultPath when path is
// "" (a command's --history).
func OpenDefault(path string) (*Store, error) {
	if path == "" {
		var err error
		if path, err = DefaultPath(); err != nil {
			return nil, err
		}
	}
	return Open(path)
}

// DefaultPath returns where the history lives: $STACKTUNE_HISTORY when set,
// else $XDG_DATA_HOME/stacktune/history.db (when XDG_DATA_HOME is an
// absolute path, as the XDG spec requires), else
// ~/.local/share/stacktune/history.db. It creates the directory.
func DefaultPath() (string, error) {
	p, err := defaultPath(os.Getenv, os.UserHomeDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("history: creating the database directory: %w", err)
	}
	return p, nil
}

func defaultPath(getenv func(string) string, home func() (string, error)) (string, error) {
	if p := getenv("STACKTUNE_HISTORY"); p != "" {
		return p, nil
	}
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "stacktune", "history.db"), nil
	}
	h, err := home()
	if err != nil {
		return "", fmt.Errorf("history: no home directory for the default database (set STACKTUNE_HISTORY): %w", err)
	}
	return filepath.Join(h, ".local", "share", "stacktune", "history.db"), nil
}

const insertRun = `INSERT INTO runs
	(label, started_ns, target, scenario, score, passed, requests, errors, rps, p50_ns, p90_ns, p99_ns, max_ns, details,
	 command, failure, scenario_hash, data_reset, versions, app_commit, duration_ns, session_id, arm)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// Add appends r and returns its ID, which it also stores in r.ID. A zero
// r.Started is set to the current time. The stored target and details have
// URL user information (user:password@) removed; r itself keeps them.
func (s *Store) Add(ctx context.Context, r *Run) (int64, error) {
	for _, f := range []struct {
		name string
		v    float64
	}{{"score", r.Score}, {"rps", r.RPS}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return 0, fmt.Errorf("history: %s is %v, which cannot be stored", f.name, f.v)
		}
	}
	var details any // NULL when empty
	if len(r.Details) > 0 {
		d, err := scrubJSON(r.Details)
		if err != nil {
			return 0, fmt.Errorf("history: details are not valid JSON: %w", err)
		}
		details = string(d)
	}
	if r.Started.IsZero() {
		r.Started = time.Now()
	}
	versions := ""
	if len(r.Versions) > 0 {
		v, _ := json.Marshal(r.Versions) // strings: cannot fail
		versions = string(v)
	}
	arts, err := packArtefacts(r.Artefacts)
	if err != nil {
		return 0, err
	}
	// One IMMEDIATE transaction (see dsn): the write lock is taken up
	// front, waiting for other writers under the busy timeout.
	var id int64
	err = retryBusy(func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		res, err := tx.ExecContext(ctx, insertRun,
			r.Label, r.Started.UnixNano(), StripCredentials(r.Target), r.Scenario, r.Score, r.Passed,
			r.Requests, r.Errors, r.RPS, int64(r.P50), int64(r.P90), int64(r.P99), int64(r.Max), details,
			r.Command, StripCredentials(r.Failure), r.ScenarioHash, r.DataReset, versions, r.AppCommit,
			int64(r.Duration), r.Session, r.Arm)
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		for _, a := range arts {
			if _, err := tx.ExecContext(ctx, insertArtefact, id, a.kind, a.size, a.tooLarge, a.data); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
	if err != nil {
		return 0, fmt.Errorf("history: adding a run: %w", err)
	}
	r.ID = id
	if len(arts) > 0 {
		// Artefacts are the bulk of the file: keep them for the recent
		// runs only. A failed prune leaves more than wanted, never less.
		_ = s.Prune(ctx, s.Retention)
	}
	return id, nil
}

const selectRuns = `SELECT id, label, started_ns, target, scenario, score, passed, requests, errors, rps,
	p50_ns, p90_ns, p99_ns, max_ns, details,
	command, failure, scenario_hash, data_reset, versions, app_commit, duration_ns, session_id, arm FROM runs`

// Runs returns the runs f selects, oldest first (by start time, then ID).
// With f.Limit it returns the most recent f.Limit of them, still oldest first.
func (s *Store) Runs(ctx context.Context, f Filter) ([]Run, error) {
	var where []string
	var args []any
	if f.Target != "" {
		where = append(where, "target = ?")
		args = append(args, StripCredentials(f.Target))
	}
	if f.Scenario != "" {
		where = append(where, "scenario = ?")
		args = append(args, f.Scenario)
	}
	if !f.Since.IsZero() {
		where = append(where, "started_ns >= ?")
		args = append(args, f.Since.UnixNano())
	}
	if len(f.Labels) > 0 {
		where = append(where, "label IN (?"+strings.Repeat(", ?", len(f.Labels)-1)+")")
		for _, l := range f.Labels {
			args = append(args, l)
		}
	}
	if len(f.Commands) > 0 {
		where = append(where, "command IN (?"+strings.Repeat(", ?", len(f.Commands)-1)+")")
		for _, c := range f.Commands {
			args = append(args, c)
		}
	} else {
		where = append(where, "command <> ?")
		args = append(args, CommandDiagnose)
	}
	q := selectRuns
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.Limit > 0 {
		q = "SELECT * FROM (" + q + " ORDER BY started_ns DESC, id DESC LIMIT ?) ORDER BY started_ns, id"
		args = append(args, f.Limit)
	} else {
		q += " ORDER BY started_ns, id"
	}
	var rows *sql.Rows
	err := retryBusy(func() (err error) {
		rows, err = s.db.QueryContext(ctx, q, args...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("history: reading runs: %w", err)
	}
	defer rows.Close()
	runs, err := scanRuns(rows, true)
	if err != nil {
		return nil, fmt.Errorf("history: reading runs: %w", err)
	}
	return runs, nil
}

// scanRuns reads rows of selectRuns (withDetails) or selectRunsLight.
func scanRuns(rows *sql.Rows, withDetails bool) ([]Run, error) {
	var runs []Run
	for rows.Next() {
		var r Run
		var started, p50, p90, p99, max, dur int64
		var details sql.NullString
		var versions string
		dest := []any{&r.ID, &r.Label, &started, &r.Target, &r.Scenario, &r.Score, &r.Passed,
			&r.Requests, &r.Errors, &r.RPS, &p50, &p90, &p99, &max}
		if withDetails {
			dest = append(dest, &details)
		}
		dest = append(dest, &r.Command, &r.Failure, &r.ScenarioHash, &r.DataReset, &versions, &r.AppCommit, &dur, &r.Session, &r.Arm)
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		r.Started = time.Unix(0, started).UTC()
		r.P50, r.P90, r.P99, r.Max = time.Duration(p50), time.Duration(p90), time.Duration(p99), time.Duration(max)
		r.Duration = time.Duration(dur)
		if details.Valid {
			r.Details = json.RawMessage(details.String)
		}
		if versions != "" {
			_ = json.Unmarshal([]byte(versions), &r.Versions) // written by Add; a bad one reads as none
		}
		runs = append(runs, r)
	}
	return runs, rows.Err()
}
