package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/report"
)

// applyOptions are the flags of `stacktune apply` and `stacktune rollback`.
type applyOptions struct {
	conn         dsnFlags
	dsn          string
	mysqlConf    string
	mysqlCheck   string
	mysqlRestart string

	nginxConf   string
	nginxBin    string
	nginxTest   string
	nginxReload string
	nginxProbe  string

	phpfpmConf   string
	phpfpmBin    string
	phpfpmTest   string
	phpfpmReload string

	sysctlConf string
	systemdDir string
	procRoot   string

	ddl        string
	skip       []string
	forceDrift bool
	hostWide   bool
	state      string
	dryRun     bool
	label      string
	format     string
	list       bool
	// expectLabel makes rollback undo only a transaction of this label
	// (apply --hosts rolls back its own and nobody else's).
	expectLabel string
}

// addTargetFlags registers the flags that say how each service is reached
// (shared by apply and rollback).
func addTargetFlags(f *pflag.FlagSet, o *applyOptions) {
	o.conn.add(f, "the MySQL/MariaDB server: needed for MySQL settings and --ddl")
	f.StringVar(&o.nginxConf, "nginx-conf", "/etc/nginx/nginx.conf", "nginx's main configuration file")
	f.StringVar(&o.phpfpmConf, "php-fpm-conf", "", "PHP-FPM's php-fpm.conf, whose pools PHP-FPM changes edit (e.g. /etc/php/8.2/fpm/php-fpm.conf)")
	addServiceFlags(f, o)
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.ApplyFormats, ", "))
}

// addServiceFlags registers how apply reaches and changes each service
// (besides the server and nginx.conf, which the caller names): shared by
// apply, rollback and tune.
func addServiceFlags(f *pflag.FlagSet, o *applyOptions) {
	f.StringVar(&o.mysqlRestart, "mysql-restart", "", `command restarting the server when a read-only variable changes ("none": such a change fails and rolls back; default "systemctl restart mariadb" or "systemctl restart mysql")`)
	f.StringVar(&o.nginxBin, "nginx-bin", "nginx", "the nginx binary")
	f.StringVar(&o.nginxTest, "nginx-test", "", `command line checking nginx's files (default "NGINX-BIN -t -c NGINX-CONF")`)
	f.StringVar(&o.nginxReload, "nginx-reload", "", `command line reloading nginx (default "NGINX-BIN -s reload -c NGINX-CONF")`)
	f.StringVar(&o.nginxProbe, "nginx-probe", "", "URL that must answer (status below 500) after the reload")
	f.StringVar(&o.phpfpmBin, "php-fpm-bin", "", "the php-fpm binary (default php-fpm8.2, php-fpm8.1, ... or php-fpm, as found)")
	f.StringVar(&o.phpfpmTest, "php-fpm-test", "", `command line checking PHP-FPM's files (default "PHP-FPM-BIN -t -y PHP-FPM-CONF")`)
	f.StringVar(&o.phpfpmReload, "php-fpm-reload", "", `command line reloading PHP-FPM (default "systemctl reload php8.2-fpm", the unit named after PHP-FPM-BIN)`)
	f.StringVar(&o.sysctlConf, "sysctl-conf", "/etc/sysctl.d/99-stacktune.conf", "where the sysctl.d file goes (apply; rollback takes the paths from the journal)")
	f.StringVar(&o.systemdDir, "systemd-dir", "/etc/systemd/system", "directory of the units' drop-in directories (apply)")
	f.StringVar(&o.procRoot, "proc-sys", "/proc/sys", "where the kernel's settings are read and written (another mount of /proc/sys, e.g. a container's)")
	f.BoolVar(&o.hostWide, "host-wide", false, "also change host-wide settings (sysctl.d, systemd drop-ins)")
	f.StringVar(&o.state, "state", "", "directory of the transactions' journals and backups (default $XDG_STATE_HOME/stacktune/apply, ~/.local/state/stacktune/apply, or /var/lib/stacktune/apply as root)")
}

// addDropInFlags registers where the my.cnf drop-in goes and how it is
// checked (apply and tune).
func addDropInFlags(f *pflag.FlagSet, o *applyOptions) {
	f.StringVar(&o.mysqlConf, "mysql-conf", "", "where the my.cnf drop-in goes (default /etc/mysql/mariadb.conf.d/99-stacktune.cnf for MariaDB, /etc/mysql/mysql.conf.d/99-stacktune.cnf for MySQL)")
	f.StringVar(&o.mysqlCheck, "mysql-check", "", `command line checking the server's option files; it fails on a non-zero exit or an "[ERROR]"/"error:" line ("none": no check; default "mariadbd --help --verbose" or "mysqld --help --verbose")`)
}

func newApplyCmd() *cobra.Command {
	var o applyOptions
	var fo fleetApplyFlags
	cmd := &cobra.Command{
		Use:   "apply [flags] [EMIT-DIR]",
		Short: "Apply the files of audit --emit (and proven index DDL) as one transaction that rolls back on failure",
		Long: `apply puts the files that "stacktune audit --emit DIR" wrote in place and makes the
running services use them, as one transaction: every file it replaces is backed up
in a journal (--state) first, the files are checked (mariadbd --help --verbose,
nginx -t), then each service is activated (SET GLOBAL, or a restart for read-only
variables; nginx reload; sysctl; systemctl restart) and its running values are read
back. Any failure puts the old files and settings back. "stacktune rollback" undoes
the last applied transaction.

  mysql/99-stacktune.cnf        -> --mysql-conf (needs --dsn)
  nginx/stacktune.conf          -> edits --nginx-conf and the files it includes
  php-fpm/stacktune.conf        -> edits the pools of --php-fpm-conf (php-fpm -t, reload)
  sysctl/99-stacktune.conf      -> --sysctl-conf (host-wide)
  systemd/UNIT.d/stacktune.conf -> --systemd-dir/UNIT.d/stacktune.conf (host-wide)
  --ddl FILE                    -> ALTER TABLE ... ADD INDEX on --dsn

Host-wide files are only applied with --host-wide. memcached and Redis settings
are not applied (apply says why). --dry-run shows the diff of every file and
changes nothing. --list shows the transactions of --state.

With --hosts INVENTORY the same change set is applied host by host over SSH, each
host through its own apply transaction with these flags and its
stacktune_apply_args: first --canary hosts, then batches of --batch. When a host
fails, its batch finishes, no further batch starts and every host already done
is rolled back (stacktune rollback --expect-label, so only this run's
transaction is undone); a rollback that fails is listed with its command.`,
		Example: `  stacktune apply --dsn 'root@unix(/run/mysqld/mysqld.sock)/' --dry-run ./tuned
  stacktune apply --dsn 'root@unix(/run/mysqld/mysqld.sock)/' --label 'audit 2024-05' ./tuned
  stacktune indexes --dsn "$DSN" > ix.sql && stacktune apply --dsn "$DSN" --ddl ix.sql
  stacktune apply --list`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			}
			if fo.hosts != "" {
				return runFleetApply(cmd.Context(), cmd, fo, o, dir, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			return runApply(cmd.Context(), o, dir, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	addTargetFlags(f, &o)
	addDropInFlags(f, &o)
	f.StringVar(&o.ddl, "ddl", "", "also add the indexes of this file of ALTER TABLE ... ADD INDEX (stacktune indexes' output; - for standard input)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would be written and each setting's plan (running value, wanted value, how), change nothing")
	f.StringSliceVar(&o.skip, "skip", nil, "leave out the changes of these findings (ids as audit prints them)")
	f.BoolVar(&o.forceDrift, "force-drift", false, "apply settings whose running value moved since the audit (without it apply refuses them, changing nothing)")
	f.StringVar(&o.label, "label", "", "what the transaction is for (kept in its journal)")
	f.BoolVar(&o.list, "list", false, "list the transactions in --state, newest first, and exit")
	fo.add(f)
	return cmd
}

func newRollbackCmd() *cobra.Command {
	var o applyOptions
	cmd := &cobra.Command{
		Use:   "rollback [flags]",
		Short: "Undo the last transaction of stacktune apply",
		Long: `rollback undoes the newest applied transaction in --state: the files it replaced are
put back (the ones it created are removed) and each service is brought back to its
old settings and read back. Run it again to undo the transaction before. The
services are reached with the same flags as apply's: without --dsn the MySQL
settings and indexes, without an --nginx-* flag nginx, and without --host-wide
sysctl and systemd units are not touched; their files are still restored and
rollback names what must be reloaded or restarted by hand (and exits non-zero).`,
		Example: `  stacktune rollback --dsn 'root@unix(/run/mysqld/mysqld.sock)/' --nginx-conf /etc/nginx/nginx.conf`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			nginx := false
			for _, n := range []string{"nginx-conf", "nginx-bin", "nginx-test", "nginx-reload", "nginx-probe"} {
				nginx = nginx || cmd.Flags().Changed(n)
			}
			return runRollback(cmd.Context(), o, nginx, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addTargetFlags(cmd.Flags(), &o)
	cmd.Flags().StringVar(&o.expectLabel, "expect-label", "", "undo the transaction only if it carries this label (else change nothing and fail)")
	return cmd
}

// defaultStateDir is where journals live unless --state says otherwise.
func defaultStateDir() (string, error) {
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

func (o *applyOptions) stateDir() (string, error) {
	if o.state != "" {
		return o.state, nil
	}
	return defaultStateDir()
}

// command turns a command-line flag into a step: "" takes def, "none"
// gives nil. strict makes output "[ERROR]" lines fail it too.
func command(flag, value string, def []string, strict bool) (func(context.Context) error, error) {
	argv := def
	if value == "none" {
		return nil, nil
	}
	if value != "" {
		var err error
		if argv, err = apply.ParseCommandLine(value); err != nil {
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
		return apply.CommandCheckStrict(argv...), nil
	}
	return apply.CommandCheck(argv...), nil
}

// findBinary looks a server binary up in PATH, then /usr/sbin.
func findBinary(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		if p := filepath.Join("/usr/sbin", n); isExecutable(p) {
			return p
		}
	}
	return ""
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// openDB connects to --dsn and says which server answered.
func openDB(ctx context.Context, dsn string) (*sql.DB, mysqlvar.Server, error) {
	db, err := dbconn.Open(ctx, dsn, 0)
	if err != nil {
		return nil, mysqlvar.Server{}, err
	}
	srv, err := mysqlvar.Detect(ctx, db)
	if err != nil {
		db.Close()
		return nil, srv, dbconn.Explain(err, dsn)
	}
	return db, srv, nil
}

// services turns the flags into apply.Services; db is nil without
// --dsn, nginx says whether nginx is reached.
func (o *applyOptions) services(ctx context.Context, db *sql.DB, srv mysqlvar.Server, nginx bool) (apply.Services, error) {
	sv := apply.Services{
		Nginx: nginx, NginxConf: o.nginxConf,
		SysctlConf: o.sysctlConf, SystemdDir: o.systemdDir, ProcRoot: o.procRoot,
		HostWide: o.hostWide,
	}
	var err error
	if db != nil {
		sv.DB = db
		sv.Schema, _ = dbconn.CurrentDatabase(ctx, db) // "" when unknown: the DDL names its schema
		server, conf, bins := "mysql", "/etc/mysql/mysql.conf.d/99-stacktune.cnf", []string{"mysqld"}
		if srv.IsMariaDB() {
			server, conf, bins = "mariadb", "/etc/mysql/mariadb.conf.d/99-stacktune.cnf", []string{"mariadbd", "mysqld"}
		}
		sv.MySQLConf = o.mysqlConf
		if sv.MySQLConf == "" {
			sv.MySQLConf = conf
		}
		sv.MySQLRestartHint = "systemctl restart " + server
		if o.mysqlRestart != "" && o.mysqlRestart != "none" {
			sv.MySQLRestartHint = o.mysqlRestart
		}
		if sv.MySQLRestart, err = command("mysql-restart", o.mysqlRestart, []string{"systemctl", "restart", server}, false); err != nil {
			return sv, err
		}
		var check []string
		if o.mysqlCheck == "" {
			bin := findBinary(bins...)
			if bin == "" {
				// Only a my.cnf drop-in needs the check: fail there.
				missing := fmt.Errorf("no %s found in PATH or /usr/sbin to check the option files: give --mysql-check (or --mysql-check none)", bins[0])
				sv.MySQLCheck = func(context.Context) error { return missing }
			} else {
				check = []string{bin, "--help", "--verbose"}
			}
		}
		if check != nil || o.mysqlCheck != "" {
			if sv.MySQLCheck, err = command("mysql-check", o.mysqlCheck, check, true); err != nil {
				return sv, err
			}
		}
	}
	if sv.NginxTest, err = command("nginx-test", o.nginxTest, []string{o.nginxBin, "-t", "-c", o.nginxConf}, false); err != nil {
		return sv, err
	}
	if sv.NginxReload, err = command("nginx-reload", o.nginxReload, []string{o.nginxBin, "-s", "reload", "-c", o.nginxConf}, false); err != nil {
		return sv, err
	}
	if o.nginxProbe != "" {
		sv.NginxProbe = apply.HTTPProbe(o.nginxProbe)
	}
	if o.phpfpmConf != "" {
		bin := o.phpfpmBin
		if bin == "" {
			bin = findBinary("php-fpm8.3", "php-fpm8.2", "php-fpm8.1", "php-fpm8.0", "php-fpm7.4", "php-fpm")
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
		sv.PHPFPMConf = o.phpfpmConf
		if sv.PHPFPMTest, err = command("php-fpm-test", o.phpfpmTest, []string{bin, "-t", "-y", o.phpfpmConf}, false); err != nil {
			return sv, err
		}
		if sv.PHPFPMReload, err = command("php-fpm-reload", o.phpfpmReload, []string{"systemctl", "reload", unit}, false); err != nil {
			return sv, err
		}
		sv.PHPFPMReloadHint = bin + " -t -y " + o.phpfpmConf + " && systemctl reload " + unit
		if o.phpfpmReload != "" {
			sv.PHPFPMReloadHint = o.phpfpmReload
		}
	}
	return sv, nil
}

// readChangeSet reads the change set of path (a directory audit --emit
// wrote, or a changes.json), without the findings of --skip.
func (o *applyOptions) readChangeSet(path string, stderr io.Writer) (*changeset.Set, error) {
	set := &changeset.Set{Format: changeset.FormatVersion, Source: "stacktune apply"}
	if path != "" {
		s, notes, err := changeset.Read(path)
		for _, n := range notes {
			fmt.Fprintln(stderr, "stacktune:", n)
		}
		if err != nil {
			return nil, err
		}
		set = s
	}
	for _, id := range o.skip {
		if !slices.ContainsFunc(set.Changes, func(c changeset.Change) bool { return c.Finding == id }) {
			return nil, fmt.Errorf("--skip %s: no change of %s comes from that finding", id, path)
		}
	}
	return set.Without(o.skip...), nil
}

// readDDL reads --ddl (- for standard input) into index changes.
func (o *applyOptions) readDDL(stdin io.Reader, schema string) ([]changeset.Change, error) {
	var text []byte
	var err error
	if o.ddl == "-" {
		text, err = io.ReadAll(io.LimitReader(stdin, maxDDL+1))
	} else {
		var f *os.File
		if f, err = os.Open(o.ddl); err == nil {
			text, err = io.ReadAll(io.LimitReader(f, maxDDL+1))
			f.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--ddl: %w", err)
	}
	if len(text) > maxDDL {
		return nil, fmt.Errorf("--ddl %s: larger than %d bytes: not the output of stacktune indexes", o.ddl, maxDDL)
	}
	cs, err := apply.ReadIndexChanges(text, schema)
	if err != nil {
		return nil, fmt.Errorf("--ddl %s: %w", o.ddl, err)
	}
	return cs, nil
}

// maxDDL bounds what --ddl reads.
const maxDDL = 16 << 20

// prepare checks the format and resolves the state directory and the
// DSN, for apply and rollback alike.
func (o *applyOptions) prepare(stderr io.Writer) (state string, err error) {
	if err := report.CheckFormat(o.format, report.ApplyFormats...); err != nil {
		return "", err
	}
	if state, err = o.stateDir(); err != nil {
		return "", err
	}
	o.dsn, err = o.conn.resolve(stderr)
	return state, err
}

func runApply(ctx context.Context, o applyOptions, path string, stdin io.Reader, stdout, stderr io.Writer) error {
	state, err := o.prepare(stderr)
	if err != nil {
		return err
	}
	if o.list {
		hist, err := apply.History(state)
		if err != nil {
			return err
		}
		return report.ApplyTransactions(stdout, hist, state, o.format)
	}
	if path == "" && o.ddl == "" {
		return errors.New("nothing to apply: give the directory of stacktune audit --emit (or its changes.json), or --ddl FILE")
	}
	set, err := o.readChangeSet(path, stderr)
	if err != nil {
		return err
	}
	var db *sql.DB
	var srv mysqlvar.Server
	if apply.NeedsDB(set) || o.ddl != "" {
		if o.dsn == "" {
			if o.ddl != "" {
				return errors.New("--ddl needs --dsn: the indexes are added on that server")
			}
			return fmt.Errorf("%s holds MySQL settings: give --dsn, the server they are applied to and read back from", path)
		}
		if db, srv, err = openDB(ctx, o.dsn); err != nil {
			return err
		}
		defer db.Close()
	}
	sv, err := o.services(ctx, db, srv, true)
	if err != nil {
		return err
	}
	if o.ddl != "" {
		ixs, err := o.readDDL(stdin, sv.Schema)
		if err != nil {
			return err
		}
		if len(ixs) == 0 {
			fmt.Fprintf(stderr, "stacktune: --ddl %s holds no index\n", o.ddl)
		}
		set.Changes = append(set.Changes, ixs...)
	}
	targets, notes, err := apply.FromChangeSet(set, sv)
	for _, n := range notes {
		fmt.Fprintln(stderr, "stacktune:", n)
	}
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		return errors.New("nothing to apply")
	}
	opt := apply.Options{StateDir: state, HostWide: o.hostWide, Label: o.label, ForceDrift: o.forceDrift,
		Log: func(format string, args ...any) { fmt.Fprintf(stderr, "stacktune: "+format+"\n", args...) }}
	if o.dryRun {
		plan, err := apply.DryRun(ctx, targets, opt)
		if err != nil {
			return err
		}
		return report.ApplyDryRun(stdout, plan, o.format)
	}
	res, err := apply.Run(ctx, targets, opt)
	if res != nil {
		if werr := report.ApplyResult(stdout, res, o.format, false); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

func runRollback(ctx context.Context, o applyOptions, nginx bool, stdout, stderr io.Writer) error {
	state, err := o.prepare(stderr)
	if err != nil {
		return err
	}
	if err := checkExpectLabel(state, o.expectLabel); err != nil {
		return err
	}
	var db *sql.DB
	var srv mysqlvar.Server
	if o.dsn != "" {
		if db, srv, err = openDB(ctx, o.dsn); err != nil {
			return err
		}
		defer db.Close()
	}
	o.mysqlCheck = "none" // a rollback puts back files that passed before
	sv, err := o.services(ctx, db, srv, nginx)
	if err != nil {
		return err
	}
	targets, err := apply.RollbackTargets(state, sv)
	if err != nil {
		return err
	}
	if last, err := apply.LastApplied(state); err == nil && last != nil {
		reached := map[string]bool{}
		for _, t := range targets {
			reached[t.Name()] = true
		}
		var manual []string
		for _, n := range last.Targets {
			if !reached[n] {
				manual = append(manual, n)
			}
		}
		if len(manual) > 0 {
			fmt.Fprintf(stderr, "stacktune: undoing %s: %s not reachable with these flags (--dsn, --nginx-*, --host-wide): its files are restored, the service is not reloaded\n", last.ID, strings.Join(manual, ", "))
		}
	}
	opt := apply.Options{StateDir: state, HostWide: o.hostWide,
		Log: func(format string, args ...any) { fmt.Fprintf(stderr, "stacktune: "+format+"\n", args...) }}
	res, err := apply.Rollback(ctx, targets, opt)
	if res != nil {
		if werr := report.ApplyResult(stdout, res, o.format, true); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}
