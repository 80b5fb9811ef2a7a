package apply

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files of an emit directory (advise.Emit), relative to it. They repeat
// advise's constants: apply does not import the advisor.
const (
	emitMySQL     = "mysql/99-stacktune.cnf"
	emitNginx     = "nginx/stacktune.conf"
	emitSysctl    = "sysctl/99-stacktune.conf"
	emitMemcached = "memcached/options"
	emitRedis     = "redis/stacktune.conf"
	emitSystemd   = "systemd"
	emitDropIn    = "stacktune.conf"
)

// EmitTargets says where the files of an emit directory go and how each
// service is checked and reloaded (FromEmitDir), or how the targets of a
// journal are reached again (RollbackTargets).
type EmitTargets struct {
	// DB reaches the MySQL/MariaDB server; nil leaves the mysql target out
	// of a rollback and makes FromEmitDir refuse a my.cnf drop-in.
	DB *sql.DB
	// MySQLConf is where the my.cnf drop-in is written.
	MySQLConf    string
	MySQLCheck   func(ctx context.Context) error
	MySQLRestart func(ctx context.Context) error

	// Nginx is set when the nginx target can be reached: NginxConf is
	// nginx.conf; Test, Reload and Probe as in Nginx.
	Nginx       bool
	NginxConf   string
	NginxTest   func(ctx context.Context) error
	NginxReload func(ctx context.Context) error
	NginxProbe  func(ctx context.Context) error

	// SysctlConf is the sysctl.d file (default
	// /etc/sysctl.d/99-stacktune.conf); ProcRoot is /proc/sys unless set.
	SysctlConf string
	ProcRoot   string
	// SystemdDir holds the units' drop-in directories (default
	// /etc/systemd/system); SystemdRun runs systemctl (nil: exec).
	SystemdDir string
	SystemdRun func(ctx context.Context, argv ...string) ([]byte, error)
	// HostWide lets RollbackTargets rebuild the sysctl and systemd
	// targets (FromEmitDir always builds them: Run skips them).
	HostWide bool
}

func (o EmitTargets) sysctlConf() string {
	if o.SysctlConf != "" {
		return o.SysctlConf
	}
	return "/etc/sysctl.d/99-stacktune.conf"
}

func (o EmitTargets) systemdDir() string {
	if o.SystemdDir != "" {
		return o.SystemdDir
	}
	return "/etc/systemd/system"
}

// EmitHasMySQL reports whether the emit directory holds a my.cnf drop-in
// (so the caller knows to connect before FromEmitDir).
func EmitHasMySQL(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, emitMySQL))
	return err == nil
}

// FromEmitDir builds the targets of the files `stacktune audit --emit`
// wrote in dir: the my.cnf drop-in, the nginx snippet, the sysctl.d file
// and the systemd drop-ins. The notes say which files are not applied and
// why (memcached options, Redis settings, anything unknown). A directory
// with none of the files is an error.
func FromEmitDir(dir string, opt EmitTargets) ([]Target, []string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("emit directory: %w", err)
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("emit directory: %s is not a directory", dir)
	}
	read := func(rel string) ([]byte, bool, error) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return b, err == nil, err
	}
	var ts []Target
	var notes []string
	known := map[string]bool{}

	if b, ok, err := read(emitMySQL); err != nil {
		return nil, nil, err
	} else if ok {
		known[emitMySQL] = true
		if opt.DB == nil {
			return nil, nil, fmt.Errorf("%s: a my.cnf drop-in needs the server (a DSN) to apply and read back", emitMySQL)
		}
		if opt.MySQLConf == "" {
			return nil, nil, fmt.Errorf("%s: no destination for the my.cnf drop-in", emitMySQL)
		}
		m, err := NewMySQL(opt.DB, opt.MySQLConf, b)
		if err != nil {
			return nil, nil, err
		}
		m.Check, m.Restart = opt.MySQLCheck, opt.MySQLRestart
		ts = append(ts, m)
	}
	if b, ok, err := read(emitNginx); err != nil {
		return nil, nil, err
	} else if ok {
		known[emitNginx] = true
		if opt.NginxConf == "" {
			return nil, nil, fmt.Errorf("%s: no nginx.conf to edit", emitNginx)
		}
		n, err := NewNginx(opt.NginxConf, b)
		if err != nil {
			return nil, nil, fmt.Errorf("%s into %s: %w", emitNginx, opt.NginxConf, err)
		}
		n.Test, n.Reload, n.Probe = opt.NginxTest, opt.NginxReload, opt.NginxProbe
		ts = append(ts, n)
	}
	if b, ok, err := read(emitSysctl); err != nil {
		return nil, nil, err
	} else if ok {
		known[emitSysctl] = true
		s, err := NewSysctl(opt.sysctlConf(), b)
		if err != nil {
			return nil, nil, err
		}
		if opt.ProcRoot != "" {
			s.ProcRoot = opt.ProcRoot
		}
		ts = append(ts, s)
	}
	units, _ := os.ReadDir(filepath.Join(dir, emitSystemd))
	for _, u := range units {
		if !u.IsDir() || !strings.HasSuffix(u.Name(), ".d") {
			continue
		}
		rel := emitSystemd + "/" + u.Name() + "/" + emitDropIn
		b, ok, err := read(rel)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		known[rel] = true
		unit := strings.TrimSuffix(u.Name(), ".d")
		d, err := NewSystemdDropIn(unit, filepath.Join(opt.systemdDir(), u.Name(), emitDropIn), b)
		if err != nil {
			return nil, nil, err
		}
		d.Run = opt.SystemdRun
		ts = append(ts, d)
	}
	if _, ok, _ := read(emitMemcached); ok {
		known[emitMemcached] = true
		notes = append(notes, emitMemcached+": not applied: memcached's options live in the distribution's own file (/etc/memcached.conf, /etc/default/memcached or /etc/sysconfig/memcached); copy them there and restart memcached")
	}
	if _, ok, _ := read(emitRedis); ok {
		known[emitRedis] = true
		notes = append(notes, emitRedis+": not applied: set them with redis-cli CONFIG SET, then CONFIG REWRITE to keep them (or add them to redis.conf)")
	}
	// Anything else in the directory is named, so nothing is silently
	// left out.
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		rel, rerr := filepath.Rel(dir, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if !known[rel] {
			notes = append(notes, rel+": not applied: not a file stacktune audit --emit writes")
		}
		return nil
	})
	if len(ts) == 0 && len(known) == 0 {
		return nil, notes, fmt.Errorf("%s holds none of the files stacktune audit --emit writes", dir)
	}
	return ts, notes, nil
}

// Applied describes the newest applied transaction of a state directory:
// what Rollback would undo.
type Applied struct {
	ID      string
	Label   string
	Targets []string // names
	Files   []string
}

// LastApplied returns the transaction Rollback would undo (nil when
// none).
func LastApplied(stateDir string) (*Applied, error) {
	_, j, err := last(stateDir, stateApplied)
	if err != nil || j == nil {
		return nil, err
	}
	a := &Applied{ID: j.ID, Label: j.Label}
	for _, t := range j.Targets {
		a.Targets = append(a.Targets, t.Name)
	}
	for _, f := range j.Files {
		a.Files = append(a.Files, f.Path)
	}
	return a, nil
}

// RollbackTargets rebuilds the targets of the transaction Rollback would
// undo (the newest half-done one, else the newest applied one) from its
// journal and opt, so that each can be activated with its old state and
// verified. A target opt cannot reach (no DB for mysql and ddl, Nginx
// unset, host-wide ones without HostWide) is left out: Rollback restores
// its files and says it must be reloaded by hand.
func RollbackTargets(stateDir string, opt EmitTargets) ([]Target, error) {
	_, j, err := last(stateDir, stateWriting, stateActivating)
	if err == nil && j == nil {
		_, j, err = last(stateDir, stateApplied)
	}
	if err != nil || j == nil {
		return nil, err
	}
	var ts []Target
	for _, jt := range j.Targets {
		path := ""
		if len(jt.Files) > 0 {
			path = jt.Files[0]
		}
		switch {
		case jt.Name == "mysql":
			if opt.DB != nil {
				m := &MySQL{DB: opt.DB, Path: path, Check: opt.MySQLCheck, Restart: opt.MySQLRestart}
				for _, k := range jt.Wanted.Keys() {
					m.settings = append(m.settings, Setting{Key: k, Value: jt.Wanted[k]})
				}
				ts = append(ts, m)
			}
		case jt.Name == "ddl":
			if opt.DB == nil {
				continue
			}
			d := &DDL{DB: opt.DB}
			for _, k := range jt.Wanted.Keys() {
				ix, ok := indexFromKey(k)
				if !ok {
					return nil, fmt.Errorf("rollback: transaction %s: index %q is not schema.table.name", j.ID, k)
				}
				d.Indexes = append(d.Indexes, ix)
			}
			ts = append(ts, d)
		case jt.Name == "nginx":
			if opt.Nginx {
				ts = append(ts, &Nginx{Main: opt.NginxConf, Test: opt.NginxTest, Reload: opt.NginxReload, Probe: opt.NginxProbe})
			}
		case jt.Name == "sysctl":
			if opt.HostWide {
				s := &Sysctl{Path: path, ProcRoot: "/proc/sys"}
				if opt.ProcRoot != "" {
					s.ProcRoot = opt.ProcRoot
				}
				for _, k := range jt.Wanted.Keys() {
					s.settings = append(s.settings, Setting{Key: k, Value: jt.Wanted[k]})
				}
				ts = append(ts, s)
			}
		case strings.HasPrefix(jt.Name, "systemd "):
			if opt.HostWide {
				d := &SystemdDropIn{Unit: strings.TrimPrefix(jt.Name, "systemd "), Path: path, Run: opt.SystemdRun}
				for _, k := range jt.Wanted.Keys() {
					d.settings = append(d.settings, Setting{Key: k, Value: jt.Wanted[k]})
				}
				ts = append(ts, d)
			}
		}
	}
	return ts, nil
}

// indexFromKey splits an index's State key, schema.table.name (schema
// may be empty). Names holding dots are not told apart.
func indexFromKey(k string) (Index, bool) {
	parts := strings.Split(k, ".")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return Index{}, false
	}
	return Index{Schema: parts[0], Table: parts[1], Name: parts[2]}, true
}

// Preview is one file a transaction would write, for a dry run.
type Preview struct {
	Target  string `json:"target"`
	Path    string `json:"path"`
	Exists  bool   `json:"exists"`
	Old     []byte `json:"-"`
	New     []byte `json:"-"`
	Diff    string `json:"diff"`
	Skipped bool   `json:"skipped,omitempty"` // host-wide, not run
}

// DryRun returns the files targets would write, with a unified diff of
// each against the file on disk; it changes nothing.
func DryRun(targets []Target, hostWide bool) ([]Preview, error) {
	if err := checkFiles(targets); err != nil {
		return nil, err
	}
	var out []Preview
	for _, t := range targets {
		for _, f := range t.Files() {
			p := Preview{Target: t.Name(), Path: f.Path, New: f.Data, Skipped: t.HostWide() && !hostWide}
			old, err := os.ReadFile(f.Path)
			switch {
			case err == nil:
				p.Exists, p.Old = true, old
			case !errors.Is(err, fs.ErrNotExist):
				return nil, err
			}
			p.Diff = UnifiedDiff(f.Path, p.Old, p.New, p.Exists)
			out = append(out, p)
		}
	}
	return out, nil
}

// UnifiedDiff renders the changes from old to new as a unified diff with
// three lines of context ("" when equal). A file that does not exist is
// diffed from /dev/null.
func UnifiedDiff(path string, old, new []byte, exists bool) string {
	if exists && bytes.Equal(old, new) {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)
	from := path
	if !exists {
		from = "/dev/null"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, path)
	const ctx = 3
	// Group the ops into hunks.
	i := 0
	for i < len(ops) {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		aStart, bStart := ops[start].a, ops[start].b
		var na, nb int
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(aStart, na), hunkRange(bStart, nb))
		for _, o := range ops[start:end] {
			sb.WriteByte(o.kind)
			sb.WriteString(o.line)
			sb.WriteByte('\n')
		}
		i = end
	}
	return sb.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
	a, b int // line index (0-based) in old and new where the op sits
}

// diffLines is a longest-common-subsequence diff; files too large for it
// are shown as all removed then all added.
func diffLines(a, b []string) []diffOp {
	var ops []diffOp
	if len(a)*len(b) > 4_000_000 {
		for i, l := range a {
			ops = append(ops, diffOp{'-', l, i, 0})
		}
		for j, l := range b {
			ops = append(ops, diffOp{'+', l, len(a), j})
		}
		return ops
	}
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], i, j})
			j++
		}
	}
	return ops
}
