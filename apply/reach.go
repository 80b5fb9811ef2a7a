package apply

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/mysqlconf"
	"github.com/stacktune/stacktune/mysqlvar"
)

// Reach says how each service is reached, checked and reloaded, as a
// person gives it (the flags of stacktune apply, rollback, tune,
// diagnose and search, whose names the errors use): command lines as
// text, "" for the default, "none" for no command. Services turns it into
// the Services of FromChangeSet and RollbackTargets.
type Reach struct {
	// MySQLConf is where the my.cnf drop-in goes ("": the directory the
	// running server includes last); MySQLCheck checks the option files
	// ("": the running server's binary with its own defaults);
	// MySQLRestart restarts the server ("": systemctl restart mariadb or
	// mysql).
	MySQLConf, MySQLCheck, MySQLRestart string

	// NginxConf is nginx.conf; NginxBin the binary the default test and
	// reload run; NginxProbe a URL that must answer after a reload.
	NginxConf, NginxBin, NginxTest, NginxReload, NginxProbe string

	// PHPFPMConf is php-fpm.conf ("": PHP-FPM not reached); PHPFPMBin
	// the binary ("": php-fpm8.3 ... php-fpm, as found).
	PHPFPMConf, PHPFPMBin, PHPFPMTest, PHPFPMReload string

	SysctlConf, SystemdDir, ProcRoot string
	HostWide                         bool

	// Rollback: the journal names the drop-in, nothing is located.
	Rollback bool
}

// Services turns r into Services: db (nil: no server) is the server of
// dsn, nginx says whether nginx is reached. What the server's option
// files could not show is given to note.
func (r Reach) Services(ctx context.Context, dsn string, db *sql.DB, srv mysqlvar.Server, nginx bool, note func(string)) (Services, error) {
	sv := Services{
		Nginx: nginx, NginxConf: r.NginxConf,
		SysctlConf: r.SysctlConf, SystemdDir: r.SystemdDir, ProcRoot: r.ProcRoot,
		HostWide: r.HostWide,
	}
	var err error
	if db != nil {
		sv.DB = db
		sv.Schema, _ = dbconn.CurrentDatabase(ctx, db) // "" when unknown: the DDL names its schema
		server := "mysql"
		if srv.IsMariaDB() {
			server = "mariadb"
		}
		sv.MySQLConf = r.MySQLConf
		if err := r.locateDropIn(ctx, dsn, db, srv, &sv, note); err != nil {
			return sv, err
		}
		sv.MySQLRestartHint = "systemctl restart " + server
		if r.MySQLRestart != "" && r.MySQLRestart != "none" {
			sv.MySQLRestartHint = r.MySQLRestart
		}
		if sv.MySQLRestart, err = CommandFlag("mysql-restart", r.MySQLRestart, []string{"systemctl", "restart", server}, false); err != nil {
			return sv, err
		}
		if r.MySQLCheck != "" {
			if sv.MySQLCheck, err = CommandFlag("mysql-check", r.MySQLCheck, nil, true); err != nil {
				return sv, err
			}
		}
	}
	if sv.NginxTest, err = CommandFlag("nginx-test", r.NginxTest, []string{r.NginxBin, "-t", "-c", r.NginxConf}, false); err != nil {
		return sv, err
	}
	if sv.NginxReload, err = CommandFlag("nginx-reload", r.NginxReload, []string{r.NginxBin, "-s", "reload", "-c", r.NginxConf}, false); err != nil {
		return sv, err
	}
	if r.NginxProbe != "" {
		sv.NginxProbe = HTTPProbe(r.NginxProbe)
	}
	if r.PHPFPMConf != "" {
		bin := r.PHPFPMBin
		if bin == "" {
			bin = FindBinary("php-fpm8.3", "php-fpm8.2", "php-fpm8.1", "php-fpm8.0", "php-fpm7.4", "php-fpm")
		}
		if bin == "" {
			bin = "php-fpm"
		}
		// Debian names the unit after the binary: php-fpm8.2 runs as
		// php8.2-fpm.service.
		unit := "php-fpm"
		if v, ok := strings.CutPrefix(filepath.Base(bin), "php-fpm"); ok && v != "" {
			unit = "php" + v + "-fpm"
		}
		sv.PHPFPMConf = r.PHPFPMConf
		if sv.PHPFPMTest, err = CommandFlag("php-fpm-test", r.PHPFPMTest, []string{bin, "-t", "-y", r.PHPFPMConf}, false); err != nil {
			return sv, err
		}
		if sv.PHPFPMReload, err = CommandFlag("php-fpm-reload", r.PHPFPMReload, []string{"systemctl", "reload", unit}, false); err != nil {
			return sv, err
		}
		sv.PHPFPMReloadHint = bin + " -t -y " + r.PHPFPMConf + " && systemctl reload " + unit
		if r.PHPFPMReload != "" {
			sv.PHPFPMReloadHint = r.PHPFPMReload
		}
	}
	return sv, nil
}

// locateDropIn finds the option files the running server read
// (package mysqlconf): where the drop-in goes (unless MySQLConf says),
// why, what would override it there, and, without MySQLCheck, the check
// with the server's own binary and defaults.
func (r Reach) locateDropIn(ctx context.Context, dsn string, db *sql.DB, srv mysqlvar.Server, sv *Services, note func(string)) error {
	if r.Rollback {
		return nil // the journal names the drop-in; the check is "none"
	}
	loc, err := mysqlconf.Locate(ctx, db, mysqlconf.Options{DSN: dsn, MariaDB: srv.IsMariaDB()})
	if err != nil {
		return err
	}
	if r.MySQLConf != "" {
		loc.Given(r.MySQLConf)
	}
	for _, n := range loc.Notes {
		note("the server's option files: " + n)
	}
	sv.MySQLConf, sv.MySQLConfWhere, sv.MySQLOverride = loc.DropIn, loc.Why, loc.Override
	if r.MySQLCheck == "" {
		switch {
		case loc.Check != nil:
			sv.MySQLCheck = CommandCheckStrict(loc.Check...)
		default:
			// Only a my.cnf drop-in needs the check: fail there.
			missing := errors.New("no server binary found to check the option files: give --mysql-check (or --mysql-check none)")
			sv.MySQLCheck = func(context.Context) error { return missing }
		}
	}
	return nil
}

// CommandFlag turns a command line a person gave (the flag named flag)
// into a step: "" takes def, "none" gives nil. strict makes output
// "[ERROR]" lines fail it too (CommandCheckStrict).
func CommandFlag(flag, value string, def []string, strict bool) (func(context.Context) error, error) {
	argv := def
	if value == "none" {
		return nil, nil
	}
	if value != "" {
		var err error
		if argv, err = ParseCommandLine(value); err != nil {
			return nil, fmt.Errorf("--%s: %w", flag, err)
		}
		if len(argv) == 0 {
			return nil, fmt.Errorf("--%s: empty command", flag)
		}
	}
	if len(argv) == 0 {
		return nil, nil
	}
	if strict {
		return CommandCheckStrict(argv...), nil
	}
	return CommandCheck(argv...), nil
}

// FindBinary looks a server binary up in PATH, then /usr/sbin; "" when
// neither has one (mysqlconf.FindBinary).
func FindBinary(names ...string) string { return mysqlconf.FindBinary(names...) }

// DefaultStateDir is where journals live unless a caller says otherwise:
// /var/lib/stacktune/apply as root, else $XDG_STATE_HOME/stacktune/apply
// or ~/.local/state/stacktune/apply.
func DefaultStateDir() (string, error) {
	if os.Geteuid() == 0 {
		return "/var/lib/stacktune/apply", nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "stacktune", "apply"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no --state and no home directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "stacktune", "apply"), nil
}
