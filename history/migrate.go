package history

import (
	"context"
	"fmt"
	"time"
)

// migrations[i] brings the schema from version i to version i+1. Append
// only: a released migration never changes, because databases out there
// already recorded that they ran it.
var migrations = [][]string{
	// 1: runs.
	{
		`CREATE TABLE runs (
			id         INTEGER PRIMARY KEY AUTOINCREMENT,
			label      TEXT    NOT NULL DEFAULT '',
			started_ns INTEGER NOT NULL,           -- Unix nanoseconds
			target     TEXT    NOT NULL DEFAULT '', -- never with user:password@
			scenario   TEXT    NOT NULL DEFAULT '',
			score      REAL    NOT NULL,
			passed     INTEGER NOT NULL,           -- 0 or 1
			requests   INTEGER NOT NULL,
			errors     INTEGER NOT NULL,
			rps        REAL    NOT NULL,
			p50_ns     INTEGER NOT NULL,
			p90_ns     INTEGER NOT NULL,
			p99_ns     INTEGER NOT NULL,
			max_ns     INTEGER NOT NULL,
			details    TEXT                        -- the full result JSON, or NULL
		)`,
		`CREATE INDEX runs_by_target ON runs (target, scenario, started_ns)`,
		`CREATE INDEX runs_by_started ON runs (started_ns)`,
	},
	// 2: the run ledger. Every command that measures records what it ran
	// (command, failure, the scenario's hash, the data reset, versions,
	// the app's commit, its duration, the tune or ab session and arm it
	// belonged to); artefacts hold what it saw, gzipped; sessions group
	// the runs of one tune or ab with their decisions.
	{
		`ALTER TABLE runs ADD COLUMN command TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE runs ADD COLUMN failure TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE runs ADD COLUMN scenario_hash TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE runs ADD COLUMN data_reset TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE runs ADD COLUMN versions TEXT NOT NULL DEFAULT ''`, // JSON object, or ''
		`ALTER TABLE runs ADD COLUMN app_commit TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE runs ADD COLUMN duration_ns INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE runs ADD COLUMN session_id INTEGER NOT NULL DEFAULT 0`, // 0: none
		`ALTER TABLE runs ADD COLUMN arm TEXT NOT NULL DEFAULT ''`,          // "a", "b" or ''
		`CREATE INDEX runs_by_session ON runs (session_id, id)`,
		`CREATE INDEX runs_by_commit ON runs (app_commit, started_ns)`,
		`CREATE INDEX runs_by_label ON runs (label, started_ns)`,
		`CREATE INDEX runs_by_scenario ON runs (scenario_hash, started_ns)`,
		`CREATE TABLE artefacts (
			run_id    INTEGER NOT NULL,
			kind      TEXT    NOT NULL,
			size      INTEGER NOT NULL,           -- bytes before compression
			too_large INTEGER NOT NULL DEFAULT 0, -- 1: over the cap, not kept (data empty)
			data      BLOB    NOT NULL,           -- gzip
			PRIMARY KEY (run_id, kind)
		)`,
		`CREATE TABLE sessions (
			id         INTEGER PRIMARY KEY AUTOINCREMENT,
			command    TEXT    NOT NULL,
			label      TEXT    NOT NULL DEFAULT '',
			started_ns INTEGER NOT NULL,
			ended_ns   INTEGER NOT NULL DEFAULT 0,     -- 0 while it runs
			status     TEXT    NOT NULL DEFAULT 'running',
			noise      REAL    NOT NULL DEFAULT 0,     -- the noise floor's relative half-width, 0 unknown
			decisions  TEXT    NOT NULL DEFAULT '[]'   -- JSON array of Decision
		)`,
	},
}

const (
	createSchemaVersion = `CREATE TABLE IF NOT EXISTS schema_version (
		version    INTEGER PRIMARY KEY,
		applied_ns INTEGER NOT NULL
	)`
	selectSchemaVersion = `SELECT COALESCE(MAX(version), 0) FROM schema_version`
	insertSchemaVersion = `INSERT INTO schema_version (version, applied_ns) VALUES (?, ?)`
)

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return len(migrations) }

// migrate applies the migrations the database has not seen, all in one
// transaction. The transaction begins IMMEDIATE (see dsn), so when two
// processes open a new database at once, one migrates and the other waits
// for it and then finds nothing left to do.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting the schema migration: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, createSchemaVersion); err != nil {
		return fmt.Errorf("creating schema_version: %w", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, selectSchemaVersion).Scan(&current); err != nil {
		return fmt.Errorf("reading schema_version: %w", err)
	}
	if current > len(migrations) {
		return fmt.Errorf("%w: schema version %d, this build knows up to %d", ErrNewerSchema, current, len(migrations))
	}
	for v := current + 1; v <= len(migrations); v++ {
		for _, stmt := range migrations[v-1] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrating to schema version %d: %w", v, err)
			}
		}
		if _, err := tx.ExecContext(ctx, insertSchemaVersion, v, time.Now().UnixNano()); err != nil {
			return fmt.Errorf("recording schema version %d: %w", v, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing the schema migration: %w", err)
	}
	return nil
}
