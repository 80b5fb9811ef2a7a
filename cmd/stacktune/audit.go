package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/report"
)

// auditOptions are the flags of `stacktune audit`.
type auditOptions struct {
	collect             collectOptions
	allowDurabilityLoss bool
	fixed               []string
	dedicatedDB         bool
	reserve             string
	format              string
}

func newAuditCmd() *cobra.Command {
	var o auditOptions
	cmd := &cobra.Command{
		Use:   "audit [flags] [SNAPSHOT.json]",
		Short: "Advice for MySQL/MariaDB, Linux, nginx, memcached and Redis, with the evidence behind it",
		Long: `audit turns a snapshot (from "stacktune collect -o", or collected now with the same
flags as collect) into findings: each with its evidence and how it was measured, the
change to make as a typed setting, the expected effect, the risk (durability, memory,
restart) and its source. Advice fits the server's flavour and version, can say
decrease, and keeps the memory budget. Changes that can lose commits on a crash are
only proposed with --allow-durability-loss; settings given with --fix are never
touched. It only reads.`,
		Example: `  stacktune audit snap.json
  stacktune audit --dsn 'monitor:pw@unix(/run/mysqld/mysqld.sock)/' --nginx-conf /etc/nginx/nginx.conf
  stacktune audit --fix innodb_doublewrite=1 --fix innodb_flush_log_at_trx_commit=1 --format json snap.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAudit(cmd.Context(), o, args, cmd.OutOrStdout())
		},
	}
	o.collect.flags(cmd)
	f := cmd.Flags()
	f.BoolVar(&o.allowDurabilityLoss, "allow-durability-loss", false, "also propose changes that can lose up to ~1 s of commits on a crash")
	f.StringArrayVar(&o.fixed, "fix", nil, "a setting that must not change, NAME=VALUE (repeatable)")
	f.BoolVar(&o.dedicatedDB, "dedicated-db", false, "the host runs the database alone: the buffer pool may take most of the RAM")
	f.StringVar(&o.reserve, "memory-reserve", "", "RAM to keep for the OS and other services, e.g. 2GiB (default max(1 GiB, 10% of RAM))")
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.AuditFormats, ", "))
	return cmd
}

func runAudit(ctx context.Context, o auditOptions, args []string, stdout io.Writer) error {
	if err := report.CheckFormat(o.format, report.AuditFormats...); err != nil {
		return err
	}
	opt := advise.Options{AllowDurabilityLoss: o.allowDurabilityLoss, DedicatedDB: o.dedicatedDB, Fixed: map[string]string{}}
	for _, f := range o.fixed {
		name, value, ok := strings.Cut(f, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return fmt.Errorf("--fix %q: want NAME=VALUE, e.g. innodb_doublewrite=1", f)
		}
		opt.Fixed[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	if o.reserve != "" {
		n, err := parseBytes(o.reserve)
		if err != nil {
			return fmt.Errorf("--memory-reserve: %w", err)
		}
		opt.MemoryReserveBytes = n
	}
	var s *collect.Snapshot
	var err error
	if len(args) == 1 {
		s, err = collect.Load(args[0])
	} else {
		s, err = o.collect.snapshot(ctx)
	}
	if err != nil {
		return err
	}
	return report.Audit(stdout, advise.Audit(s, opt), o.format)
}

// parseBytes reads sizes such as 512MiB, 2G, 1073741824.
func parseBytes(v string) (int64, error) {
	s := strings.TrimSpace(strings.ToUpper(v))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	var n int64
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n < 0 || fmt.Sprint(n) != s {
		return 0, fmt.Errorf("%q is not a size (e.g. 512MiB, 2GiB)", v)
	}
	return n * mult, nil
}
