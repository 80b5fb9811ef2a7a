package main

import (
	"context"
	"database/sql"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stacktune/stacktune/apply"
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
	// rollback: the journal names the drop-in, nothing is located.
	rollback bool
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
	f.StringVar(&o.mysqlConf, "mysql-conf", "", "where the my.cnf drop-in goes (default: 99-stacktune.cnf in the directory the running server includes last, found from its process's command line and option files; the distribution's /etc/mysql/mariadb.conf.d or mysql.conf.d when the server is not on this host)")
	f.StringVar(&o.mysqlCheck, "mysql-check", "", `command line checking the server's option files; it fails on a non-zero exit or an "[ERROR]"/"error:" line ("none": no check; default: the running server's binary with its own defaults options and --help --verbose, e.g. "/usr/sbin/mariadbd --defaults-file=/srv/db/my.cnf --help --verbose")`)
}

func newApplyCmd() *cobra.Command {
	var o applyOptions
	var fo fleetApplyFlags
	cmd := &cobra.Command{
		Use:   "apply [flags] [EMIT-DIR]",
		Short: "Apply the files of audit --emit (and proven index DDL) as one transaction that rolls back on failure",
		// It changes systems: never cut short after a signal (main.go).
		Annotations: map[string]string{noForcedExit: ""},
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
			if fo.Inventory != "" {
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
		// It changes systems: never cut short after a signal (main.go).
		Annotations: map[string]string{noForcedExit: ""},
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

func (o *applyOptions) stateDir() (string, error) {
	if o.state != "" {
		return o.state, nil
	}
	return apply.DefaultStateDir()
}

// reach is how the flags reach each service.
func (o *applyOptions) reach() apply.Reach {
	return apply.Reach{
		MySQLConf: o.mysqlConf, MySQLCheck: o.mysqlCheck, MySQLRestart: o.mysqlRestart,
		NginxConf: o.nginxConf, NginxBin: o.nginxBin, NginxTest: o.nginxTest, NginxReload: o.nginxReload, NginxProbe: o.nginxProbe,
		PHPFPMConf: o.phpfpmConf, PHPFPMBin: o.phpfpmBin, PHPFPMTest: o.phpfpmTest, PHPFPMReload: o.phpfpmReload,
		SysctlConf: o.sysctlConf, SystemdDir: o.systemdDir, ProcRoot: o.procRoot, HostWide: o.hostWide,
		Rollback: o.rollback,
	}
}

// services turns the flags into apply.Services; db is nil without
// --dsn (dsn), nginx says whether nginx is reached. What the server's
// option files could not show is said on stderr.
func (o *applyOptions) services(ctx context.Context, dsn string, db *sql.DB, srv mysqlvar.Server, nginx bool, stderr io.Writer) (apply.Services, error) {
	return o.reach().Services(ctx, dsn, db, srv, nginx, noteTo(stderr))
}

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
	out, err := apply.Apply(ctx, apply.Request{
		Path: path, Skip: o.skip, DDL: o.ddl, DDLInput: stdin, DSN: o.dsn, Reach: o.reach(), DryRun: o.dryRun,
		Options: apply.Options{StateDir: state, HostWide: o.hostWide, Label: o.label, ForceDrift: o.forceDrift, Log: logTo(stderr)},
		Note:    noteTo(stderr),
	})
	switch {
	case out.Plan != nil && err == nil:
		return report.ApplyDryRun(stdout, out.Plan, o.format)
	case out.Result != nil:
		if werr := report.ApplyResult(stdout, out.Result, o.format, false); werr != nil && err == nil {
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
	res, err := apply.RollbackLast(ctx, apply.RollbackRequest{
		DSN: o.dsn, Reach: o.reach(), Nginx: nginx, ExpectLabel: o.expectLabel,
		Options: apply.Options{StateDir: state, HostWide: o.hostWide, Log: logTo(stderr)},
		Note:    noteTo(stderr),
	})
	if res != nil {
		if werr := report.ApplyResult(stdout, res, o.format, true); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}
