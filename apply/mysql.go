package apply

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/mysqlvar"
)

// DB is what the MySQL and index targets need of a connection; *sql.DB
// has it. It must reconnect after a server restart, as *sql.DB does.
type DB interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// MySQL is a MySQL or MariaDB server whose stacktune drop-in (a my.cnf
// file in conf.d) takes the MySQL changes of a change set. Dynamic
// variables are set at once with SET GLOBAL (the statement the audit
// shows), read-only ones and startup options by a restart that reads the
// drop-in; Verify reads SHOW GLOBAL VARIABLES. Plan asks the server about
// every variable first (mysqlvar.ReadMeta): one it lacks, a value it
// would clamp, a restart nobody can do, or a value that moved since the
// advice refuses the transaction before anything is set.
type MySQL struct {
	DB DB
	// Path is the drop-in (e.g. /etc/mysql/mariadb.conf.d/99-stacktune.cnf).
	Path string
	// Check validates the server's configuration files on disk (e.g.
	// mariadbd --help --verbose); nil skips that check.
	Check func(ctx context.Context) error
	// Restart restarts the server so it rereads its files; nil means a
	// change that needs a restart is refused.
	Restart func(ctx context.Context) error
	// RestartHint is how a person restarts it ("systemctl restart
	// mariadb"), for the commands a failed rollback lists.
	RestartHint string
	// Label names the target; default "mysql".
	Label string
	// Why says why the drop-in is at Path (Where reports it).
	Why string
	// Override names a setting the server reads after the drop-in that
	// wins over key's ("" when none; nil: not known); Plan refuses such
	// a change: it would hold until the next start only.
	Override func(key string) string

	changes []changeset.Change
	file    File
	server  *mysqlvar.Server
	meta    map[string]mysqlvar.Meta
	expect  State // what the read-back shows for the wanted values
}

// NewMySQL builds the target of the MySQL changes (variables and startup
// options) of cs: the drop-in at path as it is now, with each change's
// setting replaced in place or added (changeset.MyCnf.Edit).
func NewMySQL(db DB, path string, cs []changeset.Change) (*MySQL, error) {
	cs, err := only(changeset.MySQLVariable, "mysql", cs, changeset.MySQLOption)
	if err != nil {
		return nil, err
	}
	m := &MySQL{DB: db, Path: path, changes: cs}
	old, err := readTarget(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	if err != nil {
		old = nil
	}
	data, err := changeset.MyCnf.Edit(old, dropInHeader, changeset.Lines(m.changes))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m.file = File{Path: path, Data: data, FromBase: true, Base: old}
	return m, nil
}

// dropInHeader starts a drop-in stacktune creates.
var dropInHeader = []string{
	"# Written by stacktune apply. Each setting's comment names the finding it comes from;",
	"# stacktune rollback puts the previous version of this file back.",
}

func (m *MySQL) Name() string {
	if m.Label != "" {
		return m.Label
	}
	return "mysql"
}
func (m *MySQL) Files() []File { return []File{m.file} }

// Where says where the drop-in is and why (Why), or only where.
func (m *MySQL) Where() string {
	if m.Why != "" {
		return m.Why
	}
	return "my.cnf drop-in: " + m.Path
}

// Wanted is each change's variable (as SHOW GLOBAL VARIABLES names it)
// and value.
func (m *MySQL) Wanted() State {
	w := State{}
	for _, c := range m.changes {
		w[mysqlvar.Norm(c.Name)] = c.To
	}
	return w
}

// Snapshot reads the wanted variables; a startup option that is no
// variable is left out.
func (m *MySQL) Snapshot(ctx context.Context) (State, error) {
	return m.read(ctx, m.Wanted())
}

const showVariablesSQL = "SHOW GLOBAL VARIABLES"

func (m *MySQL) read(ctx context.Context, keys State) (State, error) {
	out := State{}
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := m.DB.QueryContext(ctx, showVariablesSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		k = mysqlvar.Norm(k)
		if _, ok := keys[k]; ok {
			out[k] = v
		}
	}
	return out, rows.Err()
}

// load reads what the server is and what it says about keys, once.
func (m *MySQL) load(ctx context.Context, keys []string) error {
	if m.server == nil {
		s, err := mysqlvar.Detect(ctx, m.DB)
		if err != nil {
			return err
		}
		m.server = &s
	}
	var missing []string
	for _, k := range keys {
		if _, ok := m.meta[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	meta, err := mysqlvar.ReadMeta(ctx, m.DB, *m.server, missing)
	if err != nil {
		return err
	}
	if m.meta == nil {
		m.meta = map[string]mysqlvar.Meta{}
	}
	for k, v := range meta {
		m.meta[k] = v
	}
	return nil
}

// Validate runs Check on the files on disk.
func (m *MySQL) Validate(ctx context.Context) error { return call(ctx, m.Check) }

// Plan checks every change against the running server: the variable
// exists, the value is one the server keeps as it is (or rounds, said in
// the step), SET GLOBAL can change it or a restart can be done, the
// running value is still the one the advice was made from, and no rule
// between variables is broken.
func (m *MySQL) Plan(ctx context.Context, running State) ([]Step, error) {
	keys := m.Wanted().Keys()
	if err := m.load(ctx, keys); err != nil {
		return nil, err
	}
	m.expect = State{}
	values := State{}
	for k, v := range running {
		values[k] = v
	}
	var steps []Step
	setAtOnce := map[string]bool{}
	seen := map[string]bool{}
	for _, c := range m.changes {
		k := mysqlvar.Norm(c.Name)
		if seen[k] {
			continue
		}
		seen[k] = true
		meta := m.meta[k]
		s := Step{Key: k, From: c.From, Running: running[k], To: c.To}
		if m.Override != nil {
			if o := m.Override(k); o != "" {
				s.Problem = fmt.Sprintf("%s: %s: the server's next start takes that value, not the drop-in's; remove it there, or give --mysql-conf a file read after it", k, o)
				steps = append(steps, s)
				continue
			}
		}
		switch {
		case c.Kind == changeset.MySQLOption || !meta.Exists:
			if c.Kind == changeset.MySQLVariable {
				s.Problem = fmt.Sprintf("%s: %s has no such variable", k, m.server)
				break
			}
			s.How, s.Note = HowRestart, "a startup option: read when the server starts"
			if m.Restart == nil {
				s.Problem = k + ": a startup option, read only when the server starts, and no way to restart it was given (--mysql-restart)"
			}
		default:
			expect, note, err := meta.Expect(c.To)
			if err != nil {
				s.Problem = err.Error()
				break
			}
			s.Note = note
			if !mysqlvar.Equal(expect, c.To) {
				s.Expect = expect
			}
			m.expect[k] = expect
			values[k] = expect
			if meta.Matches(expect, s.Running) {
				s.How = HowNone
				break
			}
			s.drift(mysqlvar.Equal)
			if meta.ReadOnly {
				s.How = HowRestart
				if m.Restart == nil {
					s.Problem = joinProblem(s.Problem, k+": SET GLOBAL cannot change it, only a restart, and no way to restart the server was given (--mysql-restart)")
				}
				break
			}
			stmt, err := mysqlvar.SetGlobal(k, c.To)
			if err != nil {
				s.Problem = joinProblem(s.Problem, err.Error())
				break
			}
			s.How, s.Command = HowSet, stmt
			setAtOnce[k] = true
			if !meta.ReadOnlyKnown {
				s.Note = joinProblem(s.Note, "whether SET GLOBAL can change it is not known: a restart follows if it refuses")
				if m.Restart == nil {
					s.Note += " (and fails without --mysql-restart)"
				}
			}
		}
		steps = append(steps, s)
	}
	// Rules between variables bind what is set at run time.
	for _, msg := range mysqlvar.Conflicts(*m.server, values) {
		for i := range steps {
			if setAtOnce[steps[i].Key] && strings.HasPrefix(msg, steps[i].Key+" ") {
				steps[i].Problem = joinProblem(steps[i].Problem, msg)
			}
		}
	}
	return steps, nil
}

func joinProblem(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "; " + b
}

// Activate sets each differing variable with SET GLOBAL and restarts the
// server when one of them is read-only (or a startup option). It goes
// through every variable before it returns, so one failure does not
// leave the others unset.
func (m *MySQL) Activate(ctx context.Context, want State) error {
	return m.activate(ctx, want, false)
}

// Restore brings the server back to before: like Activate, but a
// variable the server refuses to take back at run time (MariaDB refuses
// innodb_log_file_size below innodb_log_buffer_size, a value it started
// with) is taken from the restored files by a restart, when one can be
// done.
func (m *MySQL) Restore(ctx context.Context, before State) error {
	return m.activate(ctx, before, true)
}

func (m *MySQL) activate(ctx context.Context, want State, restartOnRefusal bool) error {
	if err := m.load(ctx, want.Keys()); err != nil {
		return err
	}
	running, err := m.read(ctx, want)
	if err != nil {
		return err
	}
	var restart []string
	var errs []error
	for _, k := range want.Keys() {
		v := want[k]
		meta := m.meta[k]
		cur, known := running[k]
		if !known {
			restart = append(restart, k) // a startup option
			continue
		}
		if meta.Matches(m.expected(k, v), cur) {
			continue
		}
		if meta.ReadOnly {
			restart = append(restart, k)
			continue
		}
		stmt, err := mysqlvar.SetGlobal(k, v)
		if err == nil {
			_, err = m.DB.ExecContext(ctx, stmt)
		}
		var me *mysql.MySQLError
		if errors.As(err, &me) && (me.Number == 1238 || me.Number == 1193) {
			restart = append(restart, k) // read-only, or an option only
			continue
		}
		if err != nil {
			if restartOnRefusal && m.Restart != nil {
				restart = append(restart, k)
				continue
			}
			errs = append(errs, fmt.Errorf("%s: %w", stmt, err))
		}
	}
	if len(restart) > 0 {
		switch {
		case m.Restart == nil:
			errs = append(errs, fmt.Errorf("%s need a server restart, and no way to restart it was given", strings.Join(restart, ", ")))
		default:
			if err := m.Restart(ctx); err != nil {
				errs = append(errs, fmt.Errorf("restarting for %s: %w", strings.Join(restart, ", "), err))
			} else if restartOnRefusal {
				// The restart read the files; what was set at run time
				// before is set again.
				return m.activate(ctx, want, false)
			}
		}
	}
	return errors.Join(errs...)
}

// expected is what the server shows for v: the planned expectation
// for the wanted value, v itself otherwise (a value read from the
// server, as a rollback's, is already in the server's form).
func (m *MySQL) expected(k, v string) string {
	if e, ok := m.expect[k]; ok && m.Wanted()[k] == v {
		return e
	}
	return v
}

// Verify compares the running variables with want, after the server's
// own rounding; startup options, which have no variable, are not read.
func (m *MySQL) Verify(ctx context.Context, want State) error {
	if err := m.load(ctx, want.Keys()); err != nil {
		return err
	}
	got, err := m.read(ctx, want)
	if err != nil {
		return err
	}
	readable := State{}
	for k, v := range want {
		if _, ok := got[k]; ok {
			readable[k] = v
		}
	}
	return compare("the server", readable, got, func(k, w, g string) bool {
		return m.meta[k].Matches(m.expected(k, w), g)
	})
}

// HandFix is the statement that sets key back, or the restart that
// reads it from the restored drop-in.
func (m *MySQL) HandFix(key, want string) string {
	restart := "restart the server"
	if m.RestartHint != "" {
		restart = m.RestartHint
	}
	if key == "" {
		return restart + " (its drop-in " + m.Path + " is restored)"
	}
	if meta, ok := m.meta[key]; ok && meta.Exists && !meta.ReadOnly {
		if stmt, err := mysqlvar.SetGlobal(key, want); err == nil {
			return stmt + " (or " + restart + ")"
		}
	}
	return restart + " (it reads " + key + " from the restored " + m.Path + ")"
}

func call(ctx context.Context, f func(context.Context) error) error {
	if f == nil {
		return nil
	}
	return f(ctx)
}
