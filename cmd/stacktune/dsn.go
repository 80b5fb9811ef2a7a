package main

import (
	"fmt"
	"io"

	"github.com/go-sql-driver/mysql"
	"github.com/spf13/pflag"

	"github.com/stacktune/stacktune/dbconn"
)

// dsnFlags are the flags that name a MySQL/MariaDB server, the same in
// every command that takes one: a DSN, the variable holding one, and the
// client option files that fill in what it leaves out (the password
// above all, which then never appears on the command line).
type dsnFlags struct {
	dsn          string
	env          string
	defaultsFile string
	noDefaults   bool
}

// add registers the flags; what says what the server is for.
func (d *dsnFlags) add(f *pflag.FlagSet, what string) {
	f.StringVar(&d.dsn, "dsn", "", what+" (go-sql-driver DSN, e.g. 'monitor@unix(/run/mysqld/mysqld.sock)/'); a password here is visible in ps: leave it to ~/.my.cnf or use --dsn-env")
	f.StringVar(&d.env, "dsn-env", "", "name of the environment variable holding the DSN (instead of --dsn)")
	f.StringVar(&d.defaultsFile, "defaults-file", "", "read the client options (user, password, socket, host, port, database) only from this MySQL option file")
	f.BoolVar(&d.noDefaults, "no-defaults", false, "read no MySQL option file (by default [client] of /etc/my.cnf, /etc/mysql/my.cnf and ~/.my.cnf fill in what the DSN leaves out)")
}

// asked reports whether a server was named.
func (d *dsnFlags) asked() bool {
	return dbconn.Source{DSN: d.dsn, DSNEnv: d.env, DefaultsFile: d.defaultsFile}.Asked()
}

// resolve returns the DSN to connect with ("" when none was asked for),
// warning on stderr when the password was given on the command line.
func (d *dsnFlags) resolve(stderr io.Writer) (string, error) {
	if cfg, err := mysql.ParseDSN(d.dsn); err == nil && cfg.Passwd != "" && stderr != nil {
		fmt.Fprintln(stderr, "stacktune: the --dsn password is visible to other users (ps, /proc): put it in ~/.my.cnf ([client] password=...) or pass the DSN with --dsn-env")
	}
	return dbconn.Source{DSN: d.dsn, DSNEnv: d.env, DefaultsFile: d.defaultsFile, NoDefaults: d.noDefaults}.Resolve()
}
