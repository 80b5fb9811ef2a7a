package apply

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Setting is one key = value line of a my.cnf [mysqld] section.
type Setting struct {
	Key   string // normalised: lower case, '_'
	Value string
	Line  int
}

// ParseMyCnf reads the [mysqld] (and [mariadb], [server]) settings of a
// my.cnf drop-in as Emit writes it. Lines outside those sections,
// comments and blank lines are ignored; a line that is not key, key =
// value or a section header is an error naming it.
func ParseMyCnf(b []byte) ([]Setting, error) {
	var out []Setting
	in := false
	err := scanSettings(b, func(n int, line string) error {
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return fmt.Errorf("line %d: unclosed section header %q", n, line)
			}
			switch strings.ToLower(strings.TrimSpace(line[1:end])) {
			case "mysqld", "mariadb", "server", "mariadbd":
				in = true
			default:
				in = false
			}
			return nil
		}
		if line[0] == '!' {
			return fmt.Errorf("line %d: %q: a drop-in must not include other files", n, line)
		}
		if !in {
			return nil
		}
		k, v, _ := strings.Cut(line, "=")
		k = normKey(k)
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		if k == "" || strings.ContainsAny(k, " \t") {
			return fmt.Errorf("line %d: %q is not key = value", n, line)
		}
		out = append(out, Setting{Key: k, Value: v, Line: n})
		return nil
	})
	return out, err
}

// scanSettings calls fn with each line of a settings file that is not
// blank or a comment ('#', ';'), trimmed, with its number.
func scanSettings(data []byte, fn func(n int, line string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	return sc.Err()
}

// wantedOf is the state settings ask for; the last of a repeated key wins.
func wantedOf(ss []Setting) State {
	w := State{}
	for _, s := range ss {
		w[s.Key] = s.Value
	}
	return w
}

func normKey(k string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), "-", "_")
}

// MySQL is a MySQL or MariaDB server whose my.cnf drop-in is replaced.
// Dynamic variables are set at once with SET GLOBAL; if any wanted
// variable is read-only, Restart runs. Verify reads SHOW GLOBAL VARIABLES.
type MySQL struct {
	// DB reaches the server (it must reconnect after a restart, as a
	// *sql.DB does).
	DB *sql.DB
	// Path is the drop-in to write (e.g.
	// /etc/mysql/mariadb.conf.d/99-stacktune.cnf) and Data its content.
	Path string
	Data []byte
	// Check validates the server's configuration files on disk (e.g.
	// mariadbd --help --verbose); nil skips that check.
	Check func(ctx context.Context) error
	// Restart restarts the server so it rereads its files; nil means a
	// change that needs a restart fails (and rolls back).
	Restart func(ctx context.Context) error
	// Label names the target; default "mysql".
	Label string

	settings []Setting
}

// NewMySQL parses data and returns the target.
func NewMySQL(db *sql.DB, path string, data []byte) (*MySQL, error) {
	s, err := ParseMyCnf(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &MySQL{DB: db, Path: path, Data: data, settings: s}, nil
}

func (m *MySQL) Name() string {
	if m.Label != "" {
		return m.Label
	}
	return "mysql"
}
func (m *MySQL) HostWide() bool { return false }
func (m *MySQL) Files() []File  { return []File{{Path: m.Path, Data: m.Data}} }

// Wanted is the drop-in's settings (the last of a repeated key wins).
func (m *MySQL) Wanted() State { return wantedOf(m.settings) }

// Snapshot reads the wanted variables; a key the server does not know as
// a variable (a startup-only option) is left out.
func (m *MySQL) Snapshot(ctx context.Context) (State, error) {
	return m.read(ctx, m.Wanted())
}

func (m *MySQL) read(ctx context.Context, keys State) (State, error) {
	out := State{}
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := m.DB.QueryContext(ctx, "SHOW GLOBAL VARIABLES")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		k = normKey(k)
		if _, ok := keys[k]; ok {
			out[k] = v
		}
	}
	return out, rows.Err()
}

// Validate checks the drop-in parses and runs Check.
func (m *MySQL) Validate(ctx context.Context) error {
	return call(ctx, m.Check)
}

// Activate sets each differing variable with SET GLOBAL and restarts the
// server when one of them is read-only (or not a variable at all).
func (m *MySQL) Activate(ctx context.Context, want State) error {
	running, err := m.read(ctx, want)
	if err != nil {
		return err
	}
	var restart []string
	for _, k := range want.Keys() {
		v := want[k]
		cur, known := running[k]
		if known && ValueEqual(v, cur) {
			continue
		}
		if !known {
			restart = append(restart, k)
			continue
		}
		_, err := m.DB.ExecContext(ctx, "SET GLOBAL "+k+" = "+sqlValue(v))
		var me *mysql.MySQLError
		if errors.As(err, &me) && (me.Number == 1238 || me.Number == 1193) {
			restart = append(restart, k) // read-only, or an option only
			continue
		}
		if err != nil {
			return fmt.Errorf("SET GLOBAL %s = %s: %w", k, v, err)
		}
	}
	if len(restart) == 0 {
		return nil
	}
	if m.Restart == nil {
		return fmt.Errorf("%s need a server restart, and no way to restart it was given", strings.Join(restart, ", "))
	}
	if err := m.Restart(ctx); err != nil {
		return fmt.Errorf("restarting for %s: %w", strings.Join(restart, ", "), err)
	}
	return nil
}

// Verify compares the running variables with want.
func (m *MySQL) Verify(ctx context.Context, want State) error {
	got, err := m.read(ctx, want)
	if err != nil {
		return err
	}
	readable := State{}
	for k, v := range want {
		if _, ok := got[k]; ok { // a startup option with no variable has nothing to read
			readable[k] = v
		}
	}
	return compare("the server", readable, got, ValueEqual)
}

// ValueEqual compares a my.cnf value with a running one: ON/OFF with 1/0
// and TRUE/FALSE, sizes with K/M/G/T suffixes with their bytes (within 1%,
// as servers round sizes to their block size), anything else without
// case.
func ValueEqual(want, got string) bool {
	if strings.EqualFold(strings.TrimSpace(want), strings.TrimSpace(got)) {
		return true
	}
	if bw, ok := boolValue(want); ok {
		bg, ok := boolValue(got)
		if !ok { // a boolean shown as a number
			switch strings.TrimSpace(got) {
			case "1":
				bg, ok = true, true
			case "0":
				bg, ok = false, true
			}
		}
		return ok && bw == bg
	}
	nw, ok1 := numValue(want)
	ng, ok2 := numValue(got)
	if !ok1 || !ok2 {
		return false
	}
	if nw == ng {
		return true
	}
	return math.Abs(nw-ng) <= 0.01*math.Max(math.Abs(nw), 1)
}

func boolValue(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "true", "yes":
		return true, true
	case "off", "false", "no":
		return false, true
	}
	return false, false
}

func numValue(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	mult := 1.0
	switch s[len(s)-1] {
	case 'k', 'K':
		mult = 1 << 10
	case 'm', 'M':
		mult = 1 << 20
	case 'g', 'G':
		mult = 1 << 30
	case 't', 'T':
		mult = 1 << 40
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f * mult, true
}

// sqlValue renders a my.cnf value for SET GLOBAL: numbers (sizes in
// bytes) and ON/OFF as they are, anything else as a string literal.
func sqlValue(v string) string {
	if _, ok := boolValue(v); ok {
		return strings.ToUpper(strings.TrimSpace(v))
	}
	if f, ok := numValue(v); ok && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
		return strconv.FormatInt(int64(f), 10)
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}
