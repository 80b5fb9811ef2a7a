package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/fleet"
	"github.com/stacktune/stacktune/mysqlvar"
	"github.com/stacktune/stacktune/report"
)

// auditOptions are the flags of `stacktune audit`.
type auditOptions struct {
	collect             collectOptions
	allowDurabilityLoss bool
	observability       bool
	fixed               []string
	dedicatedDB         bool
	reserve             string
	format              string
	emit                string
	role, host          string // with a fleet snapshot: one role's, or one host's
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
touched. It only reads.

Given a fleet snapshot ("stacktune collect --hosts ... -o fleet.json") it audits
every host and reports by role (the inventory's groups): each finding with the
hosts it applies to, the outlier hosts (a setting that differs from the one most
of the role's hosts share, a rate at least twice or at most half the role's
median: one server with another ip_local_port_range, one with twice the
TIME_WAIT), and the hosts that did not answer, with why.`,
		Example: `  stacktune audit snap.json
  stacktune audit --dsn 'monitor:pw@unix(/run/mysqld/mysqld.sock)/' --nginx-conf /etc/nginx/nginx.conf
  stacktune audit --fix innodb_doublewrite=1 --fix innodb_flush_log_at_trx_commit=1 --format json snap.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAudit(cmd.Context(), o, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.collect.flags(cmd)
	f := cmd.Flags()
	f.BoolVar(&o.allowDurabilityLoss, "allow-durability-loss", false, "also propose changes that can lose up to ~1 s of commits on a crash")
	f.BoolVar(&o.observability, "observability", false, "also propose the changes that add measurement at a cost (performance_schema = ON, the slow log)")
	f.StringArrayVar(&o.fixed, "fix", nil, "a setting that must not change, NAME=VALUE (repeatable)")
	f.BoolVar(&o.dedicatedDB, "dedicated-db", false, "the host runs the database alone: the buffer pool may take most of the RAM")
	f.StringVar(&o.reserve, "memory-reserve", "", "RAM to keep for the OS and other services, e.g. 2GiB (default max(1 GiB, 10% of RAM))")
	f.StringVar(&o.format, "format", report.Text, "output format: "+strings.Join(report.AuditFormats, ", "))
	f.StringVar(&o.role, "role", "", "with a fleet snapshot: only this role; with --emit, the change set of the role's findings")
	f.StringVar(&o.host, "host", "", "with a fleet snapshot: audit this host's snapshot alone")
	f.StringVar(&o.emit, "emit", "", "also write ready files into this directory: a my.cnf drop-in, a sysctl.d file, an nginx snippet, systemd drop-ins, memcached options, each line commented with its finding id (nothing is applied)")
	return cmd
}

func runAudit(ctx context.Context, o auditOptions, args []string, stdout, stderr io.Writer) error {
	if err := report.CheckFormat(o.format, report.AuditFormats...); err != nil {
		return err
	}
	fixed, err := advise.ParseFixed(o.fixed)
	if err != nil {
		return err
	}
	opt := advise.Options{AllowDurabilityLoss: o.allowDurabilityLoss, Observability: o.observability, DedicatedDB: o.dedicatedDB, Fixed: fixed}
	if o.reserve != "" {
		n, err := mysqlvar.ParseSize(o.reserve)
		if err != nil {
			return fmt.Errorf("--memory-reserve: %w", err)
		}
		opt.MemoryReserveBytes = n
	}
	var s *collect.Snapshot
	switch {
	case len(args) == 1 && fleet.IsFleet(args[0]) && o.host == "":
		return runFleetAudit(args[0], o, fleet.AuditOptions{Advise: opt}, stdout, stderr)
	case len(args) == 1 && fleet.IsFleet(args[0]):
		s, err = fleet.HostSnapshot(args[0], o.host)
	case o.role != "" || o.host != "":
		return errors.New("--role and --host read a fleet snapshot (stacktune collect --hosts ... -o fleet.json)")
	case len(args) == 1:
		s, err = collect.Load(args[0])
	default:
		s, err = o.collect.snapshot(ctx, stderr)
	}
	if err != nil {
		return err
	}
	res := advise.Audit(s, opt)
	if err := report.Audit(stdout, res, o.format); err != nil {
		return err
	}
	if o.emit == "" {
		return nil
	}
	return emitChanges(o.emit, res, stderr)
}
