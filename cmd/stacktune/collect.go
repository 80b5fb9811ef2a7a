package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/dbconn"
)

// collectOptions are the flags that choose what `stacktune collect` and
// `stacktune audit` read: the MySQL server (dsnFlags) and every registered
// collector's own flags (collect.Registered), so a new collector brings its
// flags with it.
type collectOptions struct {
	conn dsnFlags
	// values are the registered collectors' flags by name.
	values map[string]pflag.Value
}

// mysqlWhat is the help of the --dsn flags of collect and audit.
const mysqlWhat = "MySQL/MariaDB to read"

func (o *collectOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	o.values = map[string]pflag.Value{}
	if needs(collect.NeedMySQL) {
		o.conn.add(f, mysqlWhat)
	}
	for _, r := range collect.Registered() {
		for _, fl := range r.Flags {
			switch fl.Kind {
			case collect.FlagBool:
				b, _ := strconv.ParseBool(fl.Default)
				f.Bool(fl.Name, b, fl.Usage)
			case collect.FlagDuration:
				d, _ := time.ParseDuration(fl.Default)
				f.Duration(fl.Name, d, fl.Usage)
			default:
				f.String(fl.Name, fl.Default, fl.Usage)
			}
			o.values[fl.Name] = f.Lookup(fl.Name).Value
		}
	}
}

// needs reports whether a registered collector needs n.
func needs(n collect.Need) bool {
	for _, r := range collect.Registered() {
		if r.Needs&n != 0 {
			return true
		}
	}
	return false
}

// config turns the flags into the collectors' Config, opening the MySQL
// server when one is named. A server that cannot be opened is not fatal:
// it becomes the MySQL collector's recorded error, so the rest is still
// collected and audited. The returned function closes what was opened.
func (o *collectOptions) config(ctx context.Context, stderr io.Writer) (collect.Config, func()) {
	cfg := collect.Config{Values: map[string]string{}}
	for name, v := range o.values {
		cfg.Values[name] = v.String()
	}
	closeAll := func() {}
	if needs(collect.NeedMySQL) {
		if dsn, err := o.conn.resolve(stderr); err != nil {
			cfg.DBError = err
		} else if dsn != "" {
			if db, err := dbconn.Open(ctx, dsn, 0); err != nil {
				cfg.DBError = err
			} else {
				cfg.DB = db
				closeAll = func() { db.Close() }
			}
		}
	}
	return cfg, closeAll
}

// snapshot collects everything the flags ask for.
func (o *collectOptions) snapshot(ctx context.Context, stderr io.Writer) (*collect.Snapshot, error) {
	cfg, closeAll := o.config(ctx, stderr)
	defer closeAll()
	s, err := collect.Take(ctx, cfg)
	if errors.Is(err, collect.ErrNothingAsked) {
		return nil, errors.New(nothingToCollect())
	}
	return s, err
}

// nothingToCollect says which flags ask for a collector:
// "nothing to collect: give --dsn, --nginx-conf, --memcached or --redis
// (or drop --no-linux)".
func nothingToCollect() string {
	var give, drop []string
	for _, r := range collect.Registered() {
		switch {
		case r.Needs&collect.NeedMySQL != 0:
			give = append(give, "--dsn")
		case r.AskedBy != "":
			give = append(give, "--"+r.AskedBy)
		}
		if r.DisabledBy != "" {
			drop = append(drop, "--"+r.DisabledBy)
		}
	}
	msg := "nothing to collect"
	if len(give) > 0 {
		msg += ": give " + orList(give)
	}
	if len(drop) > 0 {
		msg += " (or drop " + orList(drop) + ")"
	}
	return msg
}

// orList joins "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

func newCollectCmd() *cobra.Command {
	var o collectOptions
	var fo fleetFlags
	var out string
	cmd := &cobra.Command{
		Use:   "collect [flags]",
		Short: "Gather read-only evidence from MySQL, Linux, nginx, memcached and Redis into a snapshot",
		Long: `collect reads, and only reads, what the audit needs: MySQL/MariaDB variables and
status sampled twice --interval apart, InnoDB and data sizes; this host's cores,
memory, sysctls, process limits, TCP sockets by state and port, and each service's
CPU over the same interval; the nginx configuration with its includes; memcached and
Redis statistics; PHP-FPM's pools and their status (--php-fpm-conf); the access log
(--http-log) and the queries (--queries) of the interval. A collector that fails
(unreachable server, wrong password, missing privilege) is recorded in the snapshot
and the others go on. -o saves the snapshot as JSON, to audit it later or on another
machine with "stacktune audit snap.json". Collect while the stack is under its usual
load: rates over an idle interval say nothing (the audit says so).

With --hosts INVENTORY (an Ansible INI inventory) it collects on every host over
SSH, --parallel at a time, with host keys checked against known_hosts (an unknown
or changed key is refused): this stacktune is copied to each host for the run and
removed after (or --remote-binary names one there), with this command's collector
flags and the host's stacktune_collect_args. A host that fails is recorded with
its reason and the others go on; the result is one fleet snapshot for audit.`,
		Example: `  stacktune collect --dsn 'monitor:pw@unix(/run/mysqld/mysqld.sock)/' --nginx-conf /etc/nginx/nginx.conf -o snap.json
  stacktune collect --memcached /run/memcached/memcached.sock --redis 127.0.0.1:6379 -o cache.json
  stacktune collect --hosts hosts.ini --limit web --nginx-conf /etc/nginx/nginx.conf -o fleet.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fo.Inventory != "" {
				return runFleetCollect(cmd.Context(), cmd, fo, out, cmd.ErrOrStderr())
			}
			s, err := o.snapshot(cmd.Context(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				return writeSnapshot(cmd.OutOrStdout(), s)
			}
			if err := saveSnapshot(out, s); err != nil {
				return err
			}
			for _, e := range s.Errors {
				fmt.Fprintf(cmd.ErrOrStderr(), "stacktune: %s: %s\n", e.Collector, e.Error)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "stacktune: snapshot written to %s\n", out)
			return nil
		},
	}
	o.flags(cmd)
	fo.add(cmd.Flags(), 5*time.Minute)
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the snapshot to this file (default: standard output)")
	return cmd
}

func writeSnapshot(w io.Writer, s *collect.Snapshot) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
