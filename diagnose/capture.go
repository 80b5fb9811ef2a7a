package diagnose

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/input"
	"github.com/stacktune/stacktune/mysqlvar"
)

// SQL run by the capture.
const (
	qGlobalVariables = "SHOW GLOBAL VARIABLES"
	qConnectionID    = "SELECT CONNECTION_ID()"
)

// ownLongQueryTime is the session long_query_time of stacktune's own
// connections (the largest the servers accept, a year): none of their
// queries is ever in the capture.
const ownLongQueryTime = "31536000"

// restoreTimeout bounds the restore, which runs on a context of its own
// (the run's may be cancelled: Ctrl-C).
const restoreTimeout = 30 * time.Second

// queryer is what reads the server: a *sql.DB or a *sql.Conn.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// openOwn opens a connection pool whose sessions the capture leaves out:
// long_query_time at its maximum, plus extra session settings (name →
// value, set by the driver on every new connection).
func openOwn(ctx context.Context, dsn string, extra map[string]string) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return dbconn.Open(ctx, dsn, 0) // its error names the problem, masked
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["long_query_time"] = ownLongQueryTime
	for k, v := range extra {
		cfg.Params[k] = v
	}
	return dbconn.Open(ctx, cfg.FormatDSN(), 0)
}

// readGlobals is SHOW GLOBAL VARIABLES, names in lower case.
func readGlobals(ctx context.Context, q queryer) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, qGlobalVariables)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", qGlobalVariables, err)
	}
	defer rows.Close()
	vars := map[string]string{}
	for rows.Next() {
		var name string
		var value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		vars[strings.ToLower(name)] = value.String
	}
	return vars, rows.Err()
}

// setting is a variable the capture wants and the value it wants.
type setting struct{ name, value string }

// slowLogFilterDefault are MariaDB's default log_slow_filter types: a
// filter without one of them leaves queries of that kind out.
var slowLogFilterDefault = []string{"admin", "filesort", "filesort_on_disk", "filesort_priority_queue", "full_join", "full_scan",
	"query_cache", "query_cache_miss", "tmp_table", "tmp_table_on_disk"}

// capturePlan is what the capture sets, given the server's variables:
// only what differs from what it needs, and only variables the server has
// (log_slow_verbosity is MariaDB's and Percona Server's, log_slow_extra
// MySQL 8.0.14's). slow_query_log comes last, so logging starts with
// everything else in place.
func capturePlan(vars map[string]string) []setting {
	var plan []setting
	has := func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
	if v, ok := has("log_output"); ok && !listHas(v, "FILE") {
		want := "FILE"
		if v != "" && !strings.EqualFold(v, "NONE") {
			want = v + ",FILE"
		}
		plan = append(plan, setting{"log_output", want})
	}
	if v, ok := has("long_query_time"); !ok || !mysqlvar.Equal(v, "0") {
		plan = append(plan, setting{"long_query_time", "0.000000"})
	}
	if v, ok := has("log_slow_verbosity"); ok && !listHas(v, "query_plan") && !listHas(v, "full") {
		want := "query_plan"
		if v != "" {
			want = v + ",query_plan"
		}
		plan = append(plan, setting{"log_slow_verbosity", want})
	}
	if v, ok := has("log_slow_extra"); ok {
		if on, isBool := mysqlvar.ParseBool(v); isBool && !on {
			plan = append(plan, setting{"log_slow_extra", "ON"})
		}
	}
	if v, ok := has("log_slow_rate_limit"); ok {
		if n, isInt := mysqlvar.ParseInt(v); isInt && n > 1 {
			plan = append(plan, setting{"log_slow_rate_limit", "1"})
		}
	}
	if v, ok := has("min_examined_row_limit"); ok {
		if n, isInt := mysqlvar.ParseInt(v); isInt && n > 0 {
			plan = append(plan, setting{"min_examined_row_limit", "0"})
		}
	}
	if v, ok := has("log_slow_filter"); ok && v != "" {
		for _, f := range slowLogFilterDefault {
			if !listHas(v, f) {
				plan = append(plan, setting{"log_slow_filter", "DEFAULT"})
				break
			}
		}
	}
	if v, ok := has("slow_query_log"); !ok || !mysqlvar.Equal(v, "ON") {
		plan = append(plan, setting{"slow_query_log", "ON"})
	}
	return plan
}

// listHas reports whether a comma-separated list holds word (any case).
func listHas(list, word string) bool {
	for _, w := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(w), word) {
			return true
		}
	}
	return false
}

// captureVariable reports whether a variable is one the capture may have
// changed, directly or through an alias (MariaDB's log_slow_query is
// slow_query_log, log_slow_query_time long_query_time...).
func captureVariable(name string) bool {
	return strings.Contains(name, "slow") || strings.Contains(name, "long_query") || name == "log_output" || name == "min_examined_row_limit"
}

// capture owns the variables it changes: set applies a plan one variable
// at a time, recording each change before the next; restore puts every
// recorded change back, in reverse order, whatever happened.
type capture struct {
	db       *sql.DB
	before   map[string]string
	changed  []VarChange
	restored bool
	// touched are the variables whose value the capture changed, aliases
	// included (read back after set), with their values before.
	touched map[string]string
}

// set applies plan. A variable it could not set stops it: what was set
// stays recorded for restore.
func (c *capture) set(ctx context.Context, plan []setting) error {
	for _, s := range plan {
		before := c.before[s.name]
		stmt, err := mysqlvar.SetGlobal(s.name, s.value)
		if err != nil {
			return err
		}
		undo, err := mysqlvar.SetGlobal(s.name, before)
		if err != nil {
			return fmt.Errorf("%s is %q, which stacktune cannot put back by itself: %w", s.name, before, err)
		}
		if _, err := c.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w%s", stmt, err, privilegeHint(err))
		}
		c.changed = append(c.changed, VarChange{Name: s.name, Before: before, Set: stmt, Restore: undo})
	}
	during, err := readGlobals(ctx, c.db)
	if err != nil {
		return err
	}
	c.touched = map[string]string{}
	for name, v := range during {
		if b, ok := c.before[name]; ok && captureVariable(name) && b != v {
			c.touched[name] = b
		}
	}
	for i := range c.changed {
		c.changed[i].During = during[c.changed[i].Name]
	}
	return nil
}

// privilegeHint adds what a refused SET GLOBAL needs.
func privilegeHint(err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) && (me.Number == 1227 || me.Number == 1044 || me.Number == 1142) {
		return " (SET GLOBAL needs the SUPER privilege, SYSTEM_VARIABLES_ADMIN on MySQL 8; or read performance_schema instead: --source pfs)"
	}
	return ""
}

// restore puts back every changed variable, last changed first, on a
// context of its own (the run's may be cancelled), then reads them back.
// It goes on past a failure; what it could not put back is in leftovers,
// with the statements to run by hand. It runs once.
func (c *capture) restore(ctx context.Context) (leftovers []string, err error) {
	if c == nil || c.restored || len(c.changed) == 0 {
		return nil, nil
	}
	c.restored = true
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	var errs []error
	for i := len(c.changed) - 1; i >= 0; i-- {
		if _, err := c.db.ExecContext(ctx, c.changed[i].Restore); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.changed[i].Restore, err))
		}
	}
	after, rerr := readGlobals(ctx, c.db)
	if rerr != nil {
		errs = append(errs, fmt.Errorf("reading the variables back: %w", rerr))
	}
	for i := len(c.changed) - 1; i >= 0; i-- {
		ch := &c.changed[i]
		v, ok := after[ch.Name]
		ch.After = v
		if !ok || !mysqlvar.Equal(v, ch.Before) {
			leftovers = append(leftovers, ch.Restore+";")
		}
	}
	for name, b := range c.touched {
		if v, ok := after[name]; ok && v != b && !mysqlvar.Equal(v, b) {
			errs = append(errs, fmt.Errorf("%s reads %q after the restore, %q before the capture", name, v, b))
		}
	}
	if len(leftovers) > 0 {
		errs = append(errs, fmt.Errorf("could not put back every variable the capture changed; run by hand: %s", strings.Join(leftovers, " ")))
	}
	return leftovers, errors.Join(errs...)
}

// statements lists the restore statements, for a process killed before it
// could run them.
func restoreStatements(plan []setting, before map[string]string) []string {
	var out []string
	for i := len(plan) - 1; i >= 0; i-- {
		if s, err := mysqlvar.SetGlobal(plan[i].name, before[plan[i].name]); err == nil {
			out = append(out, s+";")
		}
	}
	return out
}

// slowLogPath is the server's slow log file as this host sees it: given,
// or slow_query_log_file (relative to the datadir).
func slowLogPath(given string, vars map[string]string) (string, error) {
	if given != "" {
		return given, nil
	}
	p := vars["slow_query_log_file"]
	if p == "" {
		return "", errors.New("the server names no slow_query_log_file: give the slow log's path (--slow-log)")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(vars["datadir"], p)
	}
	return p, nil
}

// notHere is the error for a slow log this host cannot read.
func notHere(path string, err error) error {
	return fmt.Errorf("the server's slow log %s cannot be read here (%v): run stacktune diagnose on the database host, give the path this host reads it at (--slow-log), or read performance_schema instead (--source pfs)", path, err)
}

// checkSlowLogDir fails, before anything changes, when the slow log's
// directory is not on this host.
func checkSlowLogDir(path string) error {
	if _, err := os.Stat(path); err == nil {
		f, _, err := input.OpenFile(path)
		if err != nil {
			return notHere(path, err)
		}
		return f.Close()
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return notHere(path, err)
	}
	return nil
}

// fileSize is a file's size, 0 when it does not exist.
func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
