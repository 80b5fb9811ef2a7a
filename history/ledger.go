package history

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Command codes: what recorded a run (Run.Command, Session.Command).
const (
	CommandBench      = "bench"
	CommandDiagnose   = "diagnose"
	CommandTune       = "tune"
	CommandAB         = "ab"
	CommandTPCC       = "tpcc"
	CommandKnobSearch = "knob_search"
)

// Artefact kinds: what a run saw, each the JSON of the type named (the
// profile is folded stacks, "frame;frame;frame count" lines).
const (
	ArtefactDigest   = "digest"   // digest.Report: the query classes of the run's window
	ArtefactHTTP     = "http"     // httpprof.Report: the access log of the run's window
	ArtefactRequests = "requests" // reqtrace.Report: the SQL of each request
	ArtefactProfile  = "profile"  // folded stacks of the app's CPU profile
	ArtefactSnapshot = "snapshot" // collect.Snapshot
	ArtefactChanges  = "changes"  // changeset.Set: the changes in force
	ArtefactFindings = "findings" // advise.Result: the audit
	ArtefactFleet    = "fleet"    // fleet.Snapshot: every host of --hosts collected over the run
)

// MaxArtefactBytes bounds one artefact before compression: a larger one
// is recorded as too large, without its data.
const MaxArtefactBytes = 32 << 20

// Artefact is one thing a run saw, stored gzipped with the run.
type Artefact struct {
	Kind string `json:"kind"`
	// Data is the artefact (nil when read back with TooLarge).
	Data []byte `json:"-"`
	// Size is Data's length before compression.
	Size int64 `json:"size"`
	// TooLarge says the artefact was over MaxArtefactBytes and not kept.
	TooLarge bool `json:"too_large,omitempty"`
}

// JSONArtefact is v's JSON as an artefact of kind; nil v gives none.
func JSONArtefact(kind string, v any) (Artefact, bool) {
	if v == nil {
		return Artefact{}, false
	}
	data, err := json.Marshal(v)
	if err != nil || string(data) == "null" {
		return Artefact{}, false
	}
	return Artefact{Kind: kind, Data: data}, true
}

type packed struct {
	kind     string
	size     int64
	tooLarge bool
	data     []byte
}

const insertArtefact = `INSERT OR REPLACE INTO artefacts (run_id, kind, size, too_large, data) VALUES (?, ?, ?, ?, ?)`

// packArtefacts compresses the artefacts, dropping the data of those over
// the cap. URL user information is removed from JSON artefacts as from
// Details.
func packArtefacts(arts []Artefact) ([]packed, error) {
	var out []packed
	for _, a := range arts {
		if a.Kind == "" {
			return nil, errors.New("history: an artefact without a kind")
		}
		p := packed{kind: a.Kind, size: int64(len(a.Data))}
		if len(a.Data) > MaxArtefactBytes {
			p.tooLarge = true
			p.data = []byte{}
			out = append(out, p)
			continue
		}
		data := a.Data
		if json.Valid(data) {
			if d, err := scrubJSON(data); err == nil {
				data = d
			}
		}
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed) // a valid level: cannot fail
		zw.Write(data)
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("history: compressing the %s artefact: %w", a.Kind, err)
		}
		p.size, p.data = int64(len(data)), b.Bytes()
		out = append(out, p)
	}
	return out, nil
}

// ArtefactKinds lists the artefacts stored with run id (without data).
func (s *Store) ArtefactKinds(ctx context.Context, id int64) ([]Artefact, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT kind, size, too_large FROM artefacts WHERE run_id = ? ORDER BY kind`, id)
	if err != nil {
		return nil, fmt.Errorf("history: reading artefacts: %w", err)
	}
	defer rows.Close()
	var out []Artefact
	for rows.Next() {
		var a Artefact
		if err := rows.Scan(&a.Kind, &a.Size, &a.TooLarge); err != nil {
			return nil, fmt.Errorf("history: reading artefacts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// ErrNoArtefact is returned by Artefact when the run has none of the kind
// (never recorded, or pruned).
var ErrNoArtefact = errors.New("history: no such artefact")

// Artefact reads back the artefact kind of run id, decompressed (at most
// MaxArtefactBytes, whatever the stored stream says).
func (s *Store) Artefact(ctx context.Context, id int64, kind string) (Artefact, error) {
	a := Artefact{Kind: kind}
	var data []byte
	err := s.db.QueryRowContext(ctx, `SELECT size, too_large, data FROM artefacts WHERE run_id = ? AND kind = ?`, id, kind).
		Scan(&a.Size, &a.TooLarge, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return a, ErrNoArtefact
	}
	if err != nil {
		return a, fmt.Errorf("history: reading the %s artefact of run %d: %w", kind, id, err)
	}
	if a.TooLarge {
		return a, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return a, fmt.Errorf("history: the %s artefact of run %d: %w", kind, id, err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, MaxArtefactBytes+1))
	if err == nil && len(out) > MaxArtefactBytes {
		err = fmt.Errorf("over %d bytes", MaxArtefactBytes)
	}
	if err != nil {
		return a, fmt.Errorf("history: the %s artefact of run %d: %w", kind, id, err)
	}
	a.Data = out
	return a, nil
}

// Retention is how long artefacts are kept: those of runs older than
// MaxAge, or beyond the MaxRuns most recent runs with artefacts, are
// deleted (the runs themselves stay: they are small, and the score
// transitions are made of them). Zero fields keep everything.
type Retention struct {
	MaxAge  time.Duration
	MaxRuns int
}

// DefaultRetention keeps the artefacts of the last 1,000 runs, for 180 days.
var DefaultRetention = Retention{MaxAge: 180 * 24 * time.Hour, MaxRuns: 1000}

// Prune deletes the artefacts r does not keep.
func (s *Store) Prune(ctx context.Context, r Retention) error {
	return retryBusy(func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if r.MaxAge > 0 {
			cut := time.Now().Add(-r.MaxAge).UnixNano()
			if _, err := tx.ExecContext(ctx, `DELETE FROM artefacts WHERE run_id IN (SELECT id FROM runs WHERE started_ns < ?)`, cut); err != nil {
				return err
			}
		}
		if r.MaxRuns > 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM artefacts WHERE run_id < (
				SELECT MIN(run_id) FROM (SELECT DISTINCT run_id FROM artefacts ORDER BY run_id DESC LIMIT ?))`, r.MaxRuns); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
}

// Session is one tune or ab: its runs (Run.Session), whether it still
// runs, its noise floor and its decisions.
type Session struct {
	ID      int64     `json:"id"`
	Command string    `json:"command"`
	Label   string    `json:"label,omitempty"`
	Started time.Time `json:"started"`
	// Ended is zero while the session runs.
	Ended time.Time `json:"ended,omitzero"`
	// Status is SessionRunning, SessionDone or SessionFailed.
	Status string `json:"status"`
	// Noise is the noise floor's relative half-width (0.03: scores of
	// one stack differ by up to 3%); 0 when not measured.
	Noise     float64    `json:"noise,omitempty"`
	Decisions []Decision `json:"decisions"`
}

// Session statuses.
const (
	SessionRunning = "running"
	SessionDone    = "done"
	SessionFailed  = "failed"
)

// Decision is one interleaved comparison of a session: the runs labelled
// LabelA against those labelled LabelB, and what the test decided.
type Decision struct {
	LabelA string `json:"label_a"`
	LabelB string `json:"label_b"`
	// Outcome is abtest's decision code (better, worse, no_difference, ...).
	Outcome string `json:"outcome"`
	// Ratio is B's median over A's, Low and High its interval.
	Ratio float64 `json:"ratio"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	Runs  int     `json:"runs"`
	// Kept says the step was kept (tune).
	Kept bool `json:"kept"`
}

// StartSession records a new running session and returns its ID.
func (s *Store) StartSession(ctx context.Context, command, label string) (int64, error) {
	var id int64
	err := retryBusy(func() error {
		res, err := s.db.ExecContext(ctx, `INSERT INTO sessions (command, label, started_ns) VALUES (?, ?, ?)`,
			command, label, time.Now().UnixNano())
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("history: starting a session: %w", err)
	}
	return id, nil
}

// SetNoise records the session's noise floor.
func (s *Store) SetNoise(ctx context.Context, id int64, noise float64) error {
	return s.execSession(ctx, `UPDATE sessions SET noise = ? WHERE id = ?`, noise, id)
}

// AddDecision appends d to the session's decisions.
func (s *Store) AddDecision(ctx context.Context, id int64, d Decision) error {
	data, _ := json.Marshal(d) // plain data: cannot fail
	return s.execSession(ctx, `UPDATE sessions SET decisions = json_insert(decisions, '$[#]', json(?)) WHERE id = ?`, string(data), id)
}

// EndSession marks the session ended with status.
func (s *Store) EndSession(ctx context.Context, id int64, status string) error {
	return s.execSession(ctx, `UPDATE sessions SET status = ?, ended_ns = ? WHERE id = ?`, status, time.Now().UnixNano(), id)
}

func (s *Store) execSession(ctx context.Context, q string, args ...any) error {
	err := retryBusy(func() error {
		_, err := s.db.ExecContext(ctx, q, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("history: updating a session: %w", err)
	}
	return nil
}

// ErrNotFound is returned for a run or session that is not in the history.
var ErrNotFound = errors.New("history: not found")

// GetSession reads session id.
func (s *Store) GetSession(ctx context.Context, id int64) (*Session, error) {
	var ss Session
	var started, ended int64
	var decisions string
	err := s.db.QueryRowContext(ctx, `SELECT id, command, label, started_ns, ended_ns, status, noise, decisions FROM sessions WHERE id = ?`, id).
		Scan(&ss.ID, &ss.Command, &ss.Label, &started, &ended, &ss.Status, &ss.Noise, &decisions)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("history: reading session %d: %w", id, err)
	}
	ss.Started = time.Unix(0, started).UTC()
	if ended != 0 {
		ss.Ended = time.Unix(0, ended).UTC()
	}
	if err := json.Unmarshal([]byte(decisions), &ss.Decisions); err != nil {
		return nil, fmt.Errorf("history: session %d's decisions: %w", id, err)
	}
	return &ss, nil
}

// Sessions returns the most recent limit sessions, newest first.
func (s *Store) Sessions(ctx context.Context, limit int) ([]Session, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM sessions ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("history: reading sessions: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	var out []Session
	for _, id := range ids {
		ss, err := s.GetSession(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, *ss)
	}
	return out, nil
}

// ListFilter selects runs for List. Zero fields select everything.
type ListFilter struct {
	Label     string // exact label
	AppCommit string // a commit or its prefix
	Scenario  string // a scenario name or a scenario hash (or its prefix)
	Command   string
	Session   int64
	AfterID   int64 // runs with a greater ID (a live page's next poll)
	BeforeID  int64 // runs with a smaller ID (the next page)
	Limit     int   // default 100, at most 1000
}

const selectRunsLight = `SELECT id, label, started_ns, target, scenario, score, passed, requests, errors, rps,
	p50_ns, p90_ns, p99_ns, max_ns,
	command, failure, scenario_hash, data_reset, versions, app_commit, duration_ns, session_id, arm FROM runs`

// List returns the runs f selects without their details, newest first
// (by ID), at most f.Limit; with AfterID, oldest first (the runs a live
// page has not seen, in order).
func (s *Store) List(ctx context.Context, f ListFilter) ([]Run, error) {
	var where []string
	var args []any
	add := func(cond string, v any) { where = append(where, cond); args = append(args, v) }
	if f.Label != "" {
		add("label = ?", f.Label)
	}
	// A prefix is a range of the index (strings compare byte by byte).
	if f.AppCommit != "" {
		where = append(where, "app_commit >= ? AND app_commit < ?")
		args = append(args, f.AppCommit, f.AppCommit+"\U0010FFFF")
	}
	if f.Scenario != "" {
		where = append(where, "(scenario = ? OR (scenario_hash >= ? AND scenario_hash < ?))")
		args = append(args, f.Scenario, f.Scenario, f.Scenario+"\U0010FFFF")
	}
	if f.Command != "" {
		add("command = ?", f.Command)
	}
	if f.Session != 0 {
		add("session_id = ?", f.Session)
	}
	if f.AfterID != 0 {
		add("id > ?", f.AfterID)
	}
	if f.BeforeID != 0 {
		add("id < ?", f.BeforeID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	q := selectRunsLight
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.AfterID != 0 {
		q += " ORDER BY id LIMIT ?"
	} else {
		q += " ORDER BY id DESC LIMIT ?"
	}
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("history: listing runs: %w", err)
	}
	defer rows.Close()
	runs, err := scanRuns(rows, false)
	if err != nil {
		return nil, fmt.Errorf("history: listing runs: %w", err)
	}
	return runs, nil
}

// Get reads run id with its details (not its artefacts: ArtefactKinds,
// Artefact).
func (s *Store) Get(ctx context.Context, id int64) (*Run, error) {
	rows, err := s.db.QueryContext(ctx, selectRuns+" WHERE id = ?", id)
	if err != nil {
		return nil, fmt.Errorf("history: reading run %d: %w", id, err)
	}
	defer rows.Close()
	runs, err := scanRuns(rows, true)
	if err != nil {
		return nil, fmt.Errorf("history: reading run %d: %w", id, err)
	}
	if len(runs) == 0 {
		return nil, ErrNotFound
	}
	return &runs[0], nil
}

// ScenarioHash identifies a load: the scenario file's bytes (or the URL,
// for a plain URL run) and the load's shape (a string such as "c=10
// d=30s"), as the first 16 hex digits of their SHA-256.
func ScenarioHash(scenario []byte, shape string) string {
	h := sha256.New()
	h.Write(scenario)
	h.Write([]byte{0})
	h.Write([]byte(shape))
	return hex.EncodeToString(h.Sum(nil))[:16]
}
