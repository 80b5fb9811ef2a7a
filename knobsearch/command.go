package knobsearch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/benchrun"
	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/history"
	"github.com/stacktune/stacktune/internal/dirsnap"
	"github.com/stacktune/stacktune/loadgen"
	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/tpcc"
)

// Request is `stacktune search` (and tune --workload, its deprecated
// alias): the server as its flags name it, the workload, the
// constraints as given, and the search's own options. Errors name the
// command's flags.
type Request struct {
	// DSN is the server, resolved ("": an error); TPCCDB the TPC-C
	// database of --workload tpcc (tpcc.Conn's DB).
	DSN    string
	TPCCDB string
	// Reach is how apply reaches the server; StateDir apply's journals
	// ("": apply.DefaultStateDir).
	Reach    apply.Reach
	StateDir string
	// History records the runs ("": history.OpenDefault's default);
	// NoHistory records nothing.
	History   string
	NoHistory bool

	// Workload is tpcc or http. Load shapes each run (connections and
	// duration; http's rate, keep-alive, timeout).
	Workload string
	Load     loadgen.Options
	// tpcc: each run's warm-up, stored procedures, and how each trial
	// gets the same data.
	WarmUp     time.Duration
	Procedures bool
	Reset      Reset
	// http: the scenario measured and its base URL.
	Scenario, BaseURL string

	// Fixed are the --fix settings (NAME=VALUE), MemoryBudget and
	// MemoryReserve sizes as given ("": the host's RAM, no reserve).
	Fixed                       []string
	MemoryBudget, MemoryReserve string
	// Search are Run's options; Search.Constraints' Fixed, memory and
	// CanRestart, and Workload, Server, DB and CollectInterval, are
	// filled in from the rest of the request.
	Search Options
	// Note receives what the server's option files could not show.
	Note func(string)
	// SnapshotTaken, when set, is told of the data dir snapshot of
	// --reset datadir once it is taken.
	SnapshotTaken func(dirsnap.Stats)
}

// Reset is how each tpcc trial gets the same data.
type Reset struct {
	// Mode is reload (empty and load the tables again), datadir (copy the
	// stopped server's data dir back) or none.
	Mode string
	// datadir: the server's data directory, where its copy goes
	// ("": DATADIR.stacktune-snapshot), and the commands stopping and
	// starting the server ("": systemctl stop|start mariadb or mysql).
	Datadir, SnapshotDir string
	Stop, Start          string
}

// Search is the command: the request checked, the server opened and
// reached as apply does, the workload built (the TPC-C database opened
// and its reset prepared: a data dir snapshot taken), then Run. The
// result comes back whenever the search ran, with its error.
func Search(ctx context.Context, r Request) (*Result, error) {
	if r.Workload != "tpcc" && r.Workload != "http" {
		return nil, fmt.Errorf("--workload %q: tpcc or http", r.Workload)
	}
	fixed, err := advise.ParseFixed(r.Fixed)
	if err != nil {
		return nil, err
	}
	opt := r.Search
	opt.Constraints.Fixed = fixed
	if r.MemoryBudget != "" {
		if opt.Constraints.MemoryLimit, err = mysqlvar.ParseSize(r.MemoryBudget); err != nil || opt.Constraints.MemoryLimit <= 0 {
			return nil, fmt.Errorf("--memory-budget %q: a size, as 8G or 8192M", r.MemoryBudget)
		}
	}
	if r.MemoryReserve != "" {
		if opt.Constraints.MemoryReserve, err = mysqlvar.ParseSize(r.MemoryReserve); err != nil {
			return nil, fmt.Errorf("--memory-reserve %q: a size, as 2G", r.MemoryReserve)
		}
	}
	if r.DSN == "" {
		return nil, tpcc.ErrNoServer
	}
	db, srv, err := dbconn.OpenServer(ctx, r.DSN)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(4)
	sv, err := r.Reach.Services(ctx, r.DSN, db, srv, false, r.Note)
	if err != nil {
		return nil, err
	}
	opt.Constraints.CanRestart = sv.MySQLRestart != nil
	state := r.StateDir
	if state == "" {
		if state, err = apply.DefaultStateDir(); err != nil {
			return nil, err
		}
	}
	var hist *history.Store
	if !r.NoHistory {
		if hist, err = history.OpenDefault(r.History); err != nil {
			return nil, err
		}
		defer hist.Close()
	}
	progress := opt.Progress
	if progress == nil {
		progress = func(string) {}
	}
	switch r.Workload {
	case "tpcc":
		conns := r.Load.Connections
		tdb, tdsn, err := tpcc.Conn{DSN: r.DSN, DB: r.TPCCDB}.Open(ctx, false, conns+2)
		if err != nil {
			return nil, err
		}
		defer tdb.Close()
		reset, err := r.Reset.prepare(ctx, srv, tdb, db, progress, r.SnapshotTaken)
		if err != nil {
			return nil, err
		}
		tw, err := NewTPCC(ctx, TPCC{DB: tdb, ResetData: reset, History: hist, Target: dbconn.Mask(tdsn),
			Run: tpcc.RunOptions{Duration: r.Load.Duration, WarmUp: r.WarmUp, Connections: conns, Procedures: r.Procedures}})
		if err != nil {
			return nil, err
		}
		opt.Workload = tw
		opt.CollectInterval = min(10*time.Second, (r.WarmUp+r.Load.Duration)*3/4)
	case "http":
		if r.Scenario == "" {
			return nil, errors.New("--workload http: give the --scenario to measure")
		}
		opt.Workload = &HTTP{History: hist, Bench: benchrun.Options{Scenario: r.Scenario, BaseURL: r.BaseURL, Load: r.Load, Seed: opt.Seed}}
		opt.CollectInterval = min(10*time.Second, r.Load.Duration*3/4)
	}
	opt.Server = &MySQL{Services: sv, StateDir: state}
	opt.DB = db
	return Run(ctx, opt)
}

// prepare is the reset the mode asks for: tdb reaches the TPC-C
// database, admin the server; a data dir snapshot is taken here.
func (r Reset) prepare(ctx context.Context, srv mysqlvar.Server, tdb, admin *sql.DB, progress func(string), taken func(dirsnap.Stats)) (func(context.Context) error, error) {
	switch r.Mode {
	case "none":
		progress("--reset none: every trial runs on the data the last one left; scores drift as the tables grow")
		return nil, nil
	case "reload":
		return func(ctx context.Context) error { _, err := tpcc.Reload(ctx, tdb, 0); return err }, nil
	case "datadir":
		if r.Datadir == "" {
			return nil, errors.New("--reset datadir needs --datadir, the server's data directory (SELECT @@datadir)")
		}
		unit := "mysql"
		if srv.IsMariaDB() {
			unit = "mariadb"
		}
		stop, err := apply.CommandFlag("mysql-stop", r.Stop, []string{"systemctl", "stop", unit}, false)
		if err != nil {
			return nil, err
		}
		start, err := apply.CommandFlag("mysql-start", r.Start, []string{"systemctl", "start", unit}, false)
		if err != nil {
			return nil, err
		}
		snap := r.SnapshotDir
		if snap == "" {
			snap = filepath.Clean(r.Datadir) + ".stacktune-snapshot"
		}
		d := &Datadir{Dir: r.Datadir, Snapshot: snap, Stop: stop, Start: start, Ping: admin.PingContext}
		progress("taking the data dir snapshot: " + r.Datadir + " → " + snap + " (the server stops for the copy)")
		st, err := d.Take(ctx)
		if err != nil {
			return nil, err
		}
		if taken != nil {
			taken(st)
		}
		return d.Restore, nil
	}
	return nil, fmt.Errorf("--reset %q: reload, datadir or none", r.Mode)
}
