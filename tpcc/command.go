package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/history"
)

// The commands `stacktune tpcc prepare|run|check`, each one call: the CLI
// maps its flags to a request and renders what comes back. Errors name
// the commands' flags.

// Conn is the server and the TPC-C database a command works on.
type Conn struct {
	// DSN is the server, resolved (option files read); "" is an error.
	DSN string
	// DB is the TPC-C database ("": the DSN's, else "tpcc").
	DB string
}

// ErrNoServer is returned when no server was named.
var ErrNoServer = errors.New("no server: give --dsn, --dsn-env or --defaults-file (or a [client] section in ~/.my.cnf)")

// Open points the DSN at the TPC-C database (created first when create is
// set) and connects with room for n connections. It returns the pool and
// the DSN it connected with, for messages and the history (masked there).
func (c Conn) Open(ctx context.Context, create bool, n int) (*sql.DB, string, error) {
	if c.DSN == "" {
		return nil, "", ErrNoServer
	}
	cfg, err := mysql.ParseDSN(c.DSN)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %s", dbconn.ErrBadDSN, dbconn.Mask(c.DSN))
	}
	name := c.DB
	if name == "" {
		name = cfg.DBName
	}
	if name == "" {
		name = "tpcc"
	}
	if create {
		cfg.DBName = ""
		root, err := dbconn.Open(ctx, cfg.FormatDSN(), 0)
		if err != nil {
			return nil, "", err
		}
		_, err = root.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+changeset.QuoteIdent(name))
		root.Close()
		if err != nil {
			return nil, "", fmt.Errorf("creating database %s: %w", name, dbconn.Explain(err, c.DSN))
		}
	}
	cfg.DBName = name
	dsn := cfg.FormatDSN()
	db, err := dbconn.Open(ctx, dsn, 0)
	// dbconn.Explain keeps the server's words, not its error type.
	if err != nil && strings.Contains(err.Error(), "Error 1049") {
		return nil, "", fmt.Errorf("no database %s on %s: load it with stacktune tpcc prepare first", name, dbconn.Mask(dsn))
	}
	if err != nil {
		return nil, "", err
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	return db, dsn, nil
}

// PrepareOptions are `stacktune tpcc prepare`'s: the database (created
// when missing) and the load.
type PrepareOptions struct {
	Conn Conn
	// Warehouses is the scale (at least 1); Workers the connections
	// loading in parallel (0: the cores, at least 2); Seed the data's.
	Warehouses int
	Workers    int
	Seed       uint64
	// Tiny loads about 1/100 of each warehouse (TinySizes).
	Tiny bool
	// Progress, when set, is called as units finish.
	Progress func(LoadProgress)
}

// Prepare creates the database and its tables and loads them (Load),
// resuming an interrupted load.
func Prepare(ctx context.Context, o PrepareOptions) (*LoadResult, error) {
	if o.Warehouses < 1 {
		return nil, errors.New("-w/--warehouses is required: the number of warehouses to load (at least 1)")
	}
	workers := o.Workers
	if workers <= 0 {
		workers = 8
	}
	db, _, err := o.Conn.Open(ctx, true, workers+1)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	opt := LoadOptions{Warehouses: o.Warehouses, Workers: o.Workers, Seed: o.Seed, Progress: o.Progress}
	if o.Tiny {
		opt.Sizes = TinySizes
	}
	return Load(ctx, db, opt)
}

// BenchOptions are `stacktune tpcc run`'s: the database, the run, and
// the history it is recorded in.
type BenchOptions struct {
	Conn Conn
	Run  RunOptions
	// Label says what the run measures (the history's step).
	Label string
	// History is the run history the run is recorded in ("": the
	// default, history.OpenDefault); NoHistory records nothing.
	History   string
	NoHistory bool
}

// Bench is a run of the database as a command: the options checked, the
// history opened, the run (Run), recorded. The Result is returned when
// the run started, with an error when it failed, its recording failed,
// or a transaction failed (other than the New-Orders rolled back on
// purpose).
func Bench(ctx context.Context, o BenchOptions) (*Result, error) {
	if o.Run.Connections > MaxConnections {
		return nil, fmt.Errorf("-c %d: at most %d connections", o.Run.Connections, MaxConnections)
	}
	var store *history.Store
	if !o.NoHistory {
		var err error
		if store, err = history.OpenDefault(o.History); err != nil {
			return nil, err
		}
		defer store.Close()
	}
	n := o.Run.Connections
	if n <= 0 || o.Run.ThinkTimes {
		n = MaxConnections // the pool only opens what the run asks for
	}
	db, dsn, err := o.Conn.Open(ctx, false, n+2)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	res, err := Run(ctx, db, o.Run)
	if res == nil {
		return nil, err
	}
	if store != nil {
		h := res.HistoryRun(o.Label, dbconn.Mask(dsn))
		if _, herr := store.Add(context.WithoutCancel(ctx), &h); herr != nil {
			err = errors.Join(err, fmt.Errorf("recording the run: %w", herr))
		}
	}
	if err == nil && res.Failed > 0 {
		err = fmt.Errorf("%d transactions failed", res.Failed)
	}
	return res, err
}

// ErrBroken is returned by CheckDatabase, with its result, when a
// consistency condition is broken.
var ErrBroken = errors.New("a consistency condition is broken")

// CheckDatabase is `stacktune tpcc check`: the consistency conditions
// (Check) on the database. The result comes with ErrBroken when a
// condition is broken.
func CheckDatabase(ctx context.Context, c Conn) (*CheckResult, error) {
	db, _, err := c.Open(ctx, false, 2)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	res, err := Check(ctx, db)
	if err != nil {
		return nil, err
	}
	if !res.OK() {
		return res, ErrBroken
	}
	return res, nil
}
