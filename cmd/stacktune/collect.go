package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/dbconn"
	"github.com/stacktune/stacktune/internal/atomicfile"
)

// collectOptions are the flags that choose what `stacktune collect` and
// `stacktune audit` read.
type collectOptions struct {
	conn         dsnFlags
	interval     time.Duration
	nginxConf    string
	memcached    string
	redis        string
	redisPassEnv string
	procRoot     string
	noLinux      bool
}

func (o *collectOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	o.conn.add(f, "MySQL/MariaDB to read")
	f.DurationVar(&o.interval, "interval", 10*time.Second, "time between the two SHOW GLOBAL STATUS samples (rates, not totals since boot)")
	f.StringVar(&o.nginxConf, "nginx-conf", "", "nginx config to read (includes are followed)")
	f.StringVar(&o.memcached, "memcached", "", "memcached to read: host:port or a unix socket path")
	f.StringVar(&o.redis, "redis", "", "Redis to read: host:port or a unix socket path")
	f.StringVar(&o.redisPassEnv, "redis-password-env", "", "name of the environment variable holding the Redis password (never given on the command line)")
	f.StringVar(&o.procRoot, "proc-root", "/proc", "where /proc is (for reading another host's copy)")
	f.BoolVar(&o.noLinux, "no-linux", false, "do not read this host's Linux settings")
}

// network splits a memcached/Redis address into network and address: a path
// is a unix socket.
func network(addr string) (string, string) {
	if strings.HasPrefix(addr, "/") || strings.HasPrefix(addr, "unix:") {
		return "unix", strings.TrimPrefix(addr, "unix:")
	}
	return "tcp", addr
}

// collectors builds the collectors the flags ask for. A database that cannot
// be opened is not fatal: it becomes a recorded collector error, so the rest
// is still collected and audited.
func (o *collectOptions) collectors(ctx context.Context, stderr io.Writer) ([]collect.Collector, func(), []collect.CollectorError) {
	var cs []collect.Collector
	var failed []collect.CollectorError
	closeAll := func() {}
	if dsn, err := o.conn.resolve(stderr); err != nil {
		failed = append(failed, collect.CollectorError{Collector: "mysql", Error: err.Error()})
	} else if dsn != "" {
		db, err := dbconn.Open(ctx, dsn, 0)
		if err != nil {
			failed = append(failed, collect.CollectorError{Collector: "mysql", Error: err.Error()})
		} else {
			closeAll = func() { db.Close() }
			cs = append(cs, collect.NewMySQL(db, o.interval))
		}
	}
	if !o.noLinux {
		cs = append(cs, collect.NewLinux(collect.LinuxOptions{ProcRoot: o.procRoot}))
	}
	if o.nginxConf != "" {
		cs = append(cs, collect.NewNginx(o.nginxConf))
	}
	if o.memcached != "" {
		n, a := network(o.memcached)
		cs = append(cs, collect.NewMemcached(n, a))
	}
	if o.redis != "" {
		n, a := network(o.redis)
		pass := ""
		if o.redisPassEnv != "" {
			pass = os.Getenv(o.redisPassEnv)
		}
		cs = append(cs, collect.NewRedis(n, a, pass))
	}
	return cs, closeAll, failed
}

// snapshot collects everything the flags ask for.
func (o *collectOptions) snapshot(ctx context.Context, stderr io.Writer) (*collect.Snapshot, error) {
	cs, closeAll, failed := o.collectors(ctx, stderr)
	defer closeAll()
	if len(cs) == 0 && len(failed) == 0 {
		return nil, errors.New("nothing to collect: give --dsn, --nginx-conf, --memcached or --redis (or drop --no-linux)")
	}
	s := collect.Run(ctx, cs)
	s.Errors = append(failed, s.Errors...)
	return s, nil
}

func newCollectCmd() *cobra.Command {
	var o collectOptions
	var out string
	cmd := &cobra.Command{
		Use:   "collect [flags]",
		Short: "Gather read-only evidence from MySQL, Linux, nginx, memcached and Redis into a snapshot",
		Long: `collect reads, and only reads, what the audit needs: MySQL/MariaDB variables and
status sampled twice --interval apart, InnoDB and data sizes; this host's cores,
memory, sysctls, process limits and TCP sockets by state and port; the nginx
configuration with its includes; memcached and Redis statistics. A collector that
fails (unreachable server, wrong password, missing privilege) is recorded in the
snapshot and the others go on. -o saves the snapshot as JSON, to audit it later or
on another machine with "stacktune audit snap.json".`,
		Example: `  stacktune collect --dsn 'monitor:pw@unix(/run/mysqld/mysqld.sock)/' --nginx-conf /etc/nginx/nginx.conf -o snap.json
  stacktune collect --memcached /run/memcached/memcached.sock --redis 127.0.0.1:6379 -o cache.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the snapshot to this file (default: standard output)")
	return cmd
}

func writeSnapshot(w io.Writer, s *collect.Snapshot) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// saveSnapshot writes atomically: never a half-written snapshot.
func saveSnapshot(path string, s *collect.Snapshot) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return writeSnapshot(w, s) })
}
