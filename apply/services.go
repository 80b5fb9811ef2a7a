package apply

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stacktune/stacktune/changeset"
)

// Services says where a change set's files go and how each service is
// reached, checked and reloaded: what FromChangeSet needs to turn changes
// into targets, and RollbackTargets to reach a journal's targets again.
type Services struct {
	// DB reaches the MySQL/MariaDB server; nil refuses MySQL and index
	// changes (and leaves their targets out of a rollback).
	DB DB
	// Schema is the database of index changes whose table names none.
	Schema string
	// MySQLConf is where the my.cnf drop-in is written; MySQLConfWhere
	// says why there, for people (package mysqlconf's Config.Why), and
	// why there is none when MySQLConf is "".
	MySQLConf      string
	MySQLConfWhere string
	// MySQLOverride names a setting the server reads after the drop-in
	// that would win over key's ("" when none; nil: not known): such a
	// change is refused (mysqlconf's Config.Override).
	MySQLOverride func(key string) string
	MySQLCheck    func(ctx context.Context) error
	MySQLRestart  func(ctx context.Context) error
	// MySQLRestartHint is how a person restarts the server.
	MySQLRestartHint string

	// Nginx is set when the nginx target can be reached: NginxConf is
	// nginx.conf; Test, Reload and Probe as in Nginx.
	Nginx       bool
	NginxConf   string
	NginxTest   func(ctx context.Context) error
	NginxReload func(ctx context.Context) error
	NginxProbe  func(ctx context.Context) error

	// PHPFPMConf is php-fpm.conf, set when PHP-FPM's pools can be
	// reached; Test, Reload and ReloadHint as in PHPFPM.
	PHPFPMConf       string
	PHPFPMTest       func(ctx context.Context) error
	PHPFPMReload     func(ctx context.Context) error
	PHPFPMReloadHint string

	// SysctlConf is the sysctl.d file (default
	// /etc/sysctl.d/99-stacktune.conf); ProcRoot is /proc/sys unless set.
	SysctlConf string
	ProcRoot   string
	// SystemdDir holds the units' drop-in directories (default
	// /etc/systemd/system); SystemdRun runs systemctl (nil: exec).
	SystemdDir string
	SystemdRun func(ctx context.Context, argv ...string) ([]byte, error)
	// HostWide lets RollbackTargets rebuild the sysctl and systemd
	// targets (FromChangeSet always builds them: Run skips them).
	HostWide bool
}

func (o Services) sysctlConf() string {
	if o.SysctlConf != "" {
		return o.SysctlConf
	}
	return "/etc/sysctl.d/99-stacktune.conf"
}

func (o Services) procRoot() string {
	if o.ProcRoot != "" {
		return o.ProcRoot
	}
	return "/proc/sys"
}

func (o Services) systemdDir() string {
	if o.SystemdDir != "" {
		return o.SystemdDir
	}
	return "/etc/systemd/system"
}

// NeedsDB reports whether a change set holds changes that are made on
// the MySQL server (so the caller knows to connect first).
func NeedsDB(s *changeset.Set) bool {
	return len(s.Of(changeset.MySQLVariable, changeset.MySQLOption, changeset.Index)) > 0
}

// FromChangeSet builds the targets that make the changes of s: a my.cnf
// drop-in (SET GLOBAL or restart), nginx edits, PHP-FPM pool edits, index
// DDL, a sysctl.d file and systemd drop-ins (host-wide), in that order. The notes say
// which changes are not applied and why (memcached options, Redis
// settings, application code).
func FromChangeSet(s *changeset.Set, o Services) ([]Target, []string, error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	var ts []Target
	var notes []string
	for _, k := range targetKinds {
		if cs := s.Of(k.kinds...); len(cs) > 0 {
			t, err := k.build(cs, o)
			if err != nil {
				return nil, nil, err
			}
			ts = append(ts, t...)
		}
	}
	for _, n := range notApplied {
		if cs := s.Of(n.kind); len(cs) > 0 {
			var names []string
			for _, c := range cs {
				if !slices.Contains(names, c.Name) {
					names = append(names, c.Name)
				}
			}
			notes = append(notes, fmt.Sprintf("not applied: %s %s: %s", n.kind, strings.Join(names, ", "), n.why))
		}
	}
	return ts, notes, nil
}

// A targetKind is one entry of the registry of apply targets: the kinds
// of change its targets make, and how FromChangeSet builds them.
type targetKind struct {
	kinds []changeset.Kind
	build func(cs []changeset.Change, o Services) ([]Target, error)
}

// targetKinds is the registry of apply targets, in the order
// FromChangeSet builds them (and Run activates them): a new target is an
// entry here and its file (see ARCHITECTURE.md, "How to add").
var targetKinds = []targetKind{
	{[]changeset.Kind{changeset.MySQLVariable, changeset.MySQLOption}, buildMySQL},
	{[]changeset.Kind{changeset.Nginx}, buildNginx},
	{[]changeset.Kind{changeset.PHPFPM}, buildPHPFPM},
	{[]changeset.Kind{changeset.Index}, buildIndexes},
	{[]changeset.Kind{changeset.Sysctl}, buildSysctl},
	{[]changeset.Kind{changeset.Systemd}, buildSystemd},
}

// notApplied are the kinds no target makes, each with why and what a
// person does instead (FromChangeSet's notes).
var notApplied = []struct {
	kind changeset.Kind
	why  string
}{
	{changeset.Memcached, "memcached's options live in the distribution's own file (/etc/memcached.conf, /etc/default/memcached or /etc/sysconfig/memcached): set them there (memcached/options of the change set's directory holds them) and restart memcached"},
	{changeset.Redis, "set them with redis-cli CONFIG SET, then CONFIG REWRITE to keep them (or add them to redis.conf)"},
	{changeset.Mount, "a mount option is set in /etc/fstab and takes effect with mount -o remount: fstab/stacktune of the change set's directory lists them"},
	{changeset.App, "a change to the application's code or settings, for its developers"},
}

func buildMySQL(cs []changeset.Change, o Services) ([]Target, error) {
	if o.DB == nil {
		return nil, fmt.Errorf("%d MySQL changes need the server (a DSN) to apply and read back", len(cs))
	}
	if o.MySQLConf == "" {
		if o.MySQLConfWhere != "" {
			return nil, fmt.Errorf("no destination for the my.cnf drop-in: %s", o.MySQLConfWhere)
		}
		return nil, fmt.Errorf("no destination for the my.cnf drop-in")
	}
	m, err := NewMySQL(o.DB, o.MySQLConf, cs)
	if err != nil {
		return nil, err
	}
	m.Check, m.Restart, m.RestartHint = o.MySQLCheck, o.MySQLRestart, o.MySQLRestartHint
	m.Why, m.Override = o.MySQLConfWhere, o.MySQLOverride
	return []Target{m}, nil
}

func buildNginx(cs []changeset.Change, o Services) ([]Target, error) {
	if o.NginxConf == "" {
		return nil, fmt.Errorf("%d nginx changes, and no nginx.conf to edit", len(cs))
	}
	n, err := NewNginx(o.NginxConf, cs)
	if err != nil {
		return nil, fmt.Errorf("nginx changes into %s: %w", o.NginxConf, err)
	}
	n.Test, n.Reload, n.Probe = o.NginxTest, o.NginxReload, o.NginxProbe
	return []Target{n}, nil
}

func buildPHPFPM(cs []changeset.Change, o Services) ([]Target, error) {
	if o.PHPFPMConf == "" {
		return nil, fmt.Errorf("%d PHP-FPM changes, and no php-fpm.conf to edit (--php-fpm-conf)", len(cs))
	}
	p, err := NewPHPFPM(o.PHPFPMConf, cs)
	if err != nil {
		return nil, fmt.Errorf("PHP-FPM changes into %s: %w", o.PHPFPMConf, err)
	}
	p.Test, p.Reload, p.ReloadHint = o.PHPFPMTest, o.PHPFPMReload, o.PHPFPMReloadHint
	return []Target{p}, nil
}

func buildIndexes(cs []changeset.Change, o Services) ([]Target, error) {
	if o.DB == nil {
		return nil, fmt.Errorf("%d indexes need the server (a DSN) to add them on", len(cs))
	}
	d, err := NewIndexes(o.DB, o.Schema, cs)
	if err != nil {
		return nil, err
	}
	return []Target{d}, nil
}

func buildSysctl(cs []changeset.Change, o Services) ([]Target, error) {
	sc, err := NewSysctl(o.sysctlConf(), cs)
	if err != nil {
		return nil, err
	}
	sc.ProcRoot = o.procRoot()
	return []Target{sc}, nil
}

// buildSystemd makes a drop-in per unit, in the order the units come.
func buildSystemd(cs []changeset.Change, o Services) ([]Target, error) {
	var units []string
	byUnit := map[string][]changeset.Change{}
	for _, c := range cs {
		if _, ok := byUnit[c.Target]; !ok {
			units = append(units, c.Target)
		}
		byUnit[c.Target] = append(byUnit[c.Target], c)
	}
	var ts []Target
	for _, unit := range units {
		d, err := NewSystemdDropIn(unit, filepath.Join(o.systemdDir(), unit+".d", "stacktune.conf"), byUnit[unit])
		if err != nil {
			return nil, err
		}
		d.Run = o.SystemdRun
		ts = append(ts, d)
	}
	return ts, nil
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
// undo (the newest unfinished one, else the newest applied one) from its
// journal and o, so that each can be brought back to its old state and
// verified. A target o cannot reach (no DB for mysql and ddl, Nginx
// unset, PHPFPMConf unset, host-wide ones without HostWide) is left out: Rollback restores
// its files and says it must be reloaded by hand.
func RollbackTargets(stateDir string, o Services) ([]Target, error) {
	_, j, err := last(stateDir, stateWriting, stateActivating, stateRollbackFailed)
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
		var cs []changeset.Change
		for _, k := range jt.Wanted.Keys() {
			cs = append(cs, changeset.Change{Name: k, To: jt.Wanted[k]})
		}
		withKind := func(k changeset.Kind, target string) []changeset.Change {
			out := slices.Clone(cs)
			for i := range out {
				out[i].Kind, out[i].Target = k, target
			}
			return out
		}
		switch {
		case jt.Name == "mysql":
			if o.DB != nil {
				ts = append(ts, &MySQL{DB: o.DB, Path: path, Check: o.MySQLCheck, Restart: o.MySQLRestart, RestartHint: o.MySQLRestartHint,
					changes: withKind(changeset.MySQLVariable, "mysqld")})
			}
		case jt.Name == "ddl":
			if o.DB == nil {
				continue
			}
			d := &Indexes{DB: o.DB, Schema: o.Schema}
			for _, k := range jt.Wanted.Keys() {
				s, t, n, ok := splitIndexKey(k)
				if !ok {
					return nil, fmt.Errorf("rollback: transaction %s: index %q is not schema.table.name", j.ID, k)
				}
				d.changes = append(d.changes, changeset.Change{Kind: changeset.Index, Target: s + "." + t, Name: n, To: jt.Wanted[k]})
			}
			ts = append(ts, d)
		case jt.Name == "nginx":
			if o.Nginx {
				ts = append(ts, &Nginx{Main: o.NginxConf, Test: o.NginxTest, Reload: o.NginxReload, Probe: o.NginxProbe})
			}
		case jt.Name == "php-fpm":
			if o.PHPFPMConf == "" {
				continue
			}
			p := &PHPFPM{Main: o.PHPFPMConf, Test: o.PHPFPMTest, Reload: o.PHPFPMReload, ReloadHint: o.PHPFPMReloadHint}
			for _, k := range jt.Wanted.Keys() {
				pool, setting, ok := splitPHPFPMKey(k)
				if !ok {
					return nil, fmt.Errorf("rollback: transaction %s: php-fpm setting %q is not POOL SETTING", j.ID, k)
				}
				p.changes = append(p.changes, changeset.Change{Kind: changeset.PHPFPM, Target: changeset.PHPFPMTarget(pool), Name: setting, To: jt.Wanted[k]})
			}
			ts = append(ts, p)
		case jt.Name == "sysctl":
			if o.HostWide {
				ts = append(ts, &Sysctl{Path: path, ProcRoot: o.procRoot(), changes: withKind(changeset.Sysctl, "/etc/sysctl.d")})
			}
		case strings.HasPrefix(jt.Name, "systemd "):
			if o.HostWide {
				unit := strings.TrimPrefix(jt.Name, "systemd ")
				ts = append(ts, &SystemdDropIn{Unit: unit, Path: path, Run: o.SystemdRun, changes: withKind(changeset.Systemd, unit)})
			}
		}
	}
	return ts, nil
}
