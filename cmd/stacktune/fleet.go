package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stacktune/stacktune/fleet"
	"github.com/stacktune/stacktune/report"
)

// fleetFlags are the flags that reach a fleet over SSH (collect --hosts,
// apply --hosts, bench --hosts).
type fleetFlags struct{ fleet.Reach }

func (o *fleetFlags) add(f *pflag.FlagSet, hostTimeout time.Duration) {
	f.StringVar(&o.Inventory, "hosts", "", "an Ansible INI inventory: run on each of its hosts over SSH (groups are roles)")
	f.StringSliceVar(&o.Limit, "limit", nil, "with --hosts: only these groups or hosts")
	f.IntVar(&o.Parallel, "parallel", fleet.DefaultParallel, "with --hosts: hosts worked on at once")
	f.StringArrayVar(&o.KnownHosts, "known-hosts", nil, "with --hosts: known_hosts file (repeatable; default ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts); unknown or changed host keys are refused")
	f.StringArrayVar(&o.Identities, "identity", nil, "with --hosts: private key for hosts without ansible_ssh_private_key_file (repeatable; default ~/.ssh/id_ed25519, id_ecdsa, id_rsa; ssh-agent too)")
	f.StringVar(&o.User, "ssh-user", "", "with --hosts: login for hosts without ansible_user (default: you)")
	f.StringVar(&o.RemoteBinary, "remote-binary", "", "with --hosts: the stacktune already on every host (default: copy this one for the run, removed after)")
	f.DurationVar(&o.HostTimeout, "host-timeout", hostTimeout, "with --hosts: bound on one host's work")
	f.DurationVar(&o.ConnectTimeout, "connect-timeout", 10*time.Second, "with --hosts: bound on connecting and the SSH handshake")
}

// givenFlags are the flags given on cmd's command line, for the hosts'
// own commands.
func givenFlags(cmd *cobra.Command) []fleet.Flag {
	var fs []fleet.Flag
	cmd.Flags().Visit(func(f *pflag.Flag) {
		fl := fleet.Flag{Name: f.Name, Value: f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			fl.Values = sv.GetSlice()
		}
		fs = append(fs, fl)
	})
	return fs
}

// runFleetCollect is `stacktune collect --hosts`.
func runFleetCollect(ctx context.Context, cmd *cobra.Command, o fleetFlags, out string, stderr io.Writer) error {
	live := live{w: stderr, show: isTerminal(stderr)}
	fs, err := fleet.CollectHosts(ctx, fleet.CollectRequest{Reach: o.Reach, Flags: givenFlags(cmd),
		Progress: func(done, total int, h fleet.Host) { live.draw(report.FleetCollectProgressLine(done, total, h)) },
	})
	live.clear()
	if fs == nil {
		return err
	}
	if out == "" || out == "-" {
		if werr := writeJSON(cmd.OutOrStdout(), fs); werr != nil {
			return werr
		}
		return err
	}
	if werr := saveJSON(out, fs); werr != nil {
		return werr
	}
	if werr := report.FleetHosts(stderr, fs); werr != nil {
		return werr
	}
	fmt.Fprintf(stderr, "stacktune: fleet snapshot written to %s (stacktune audit %s)\n", out, out)
	return err
}

// runFleetAudit is `stacktune audit FLEET.json`: the fleet's report by
// role, or with --emit the change set of one role's findings.
func runFleetAudit(path string, o auditOptions, opt fleet.AuditOptions, stdout, stderr io.Writer) error {
	if err := report.CheckFormat(o.format, report.FleetFormats...); err != nil {
		return err
	}
	rep, err := fleet.AuditFile(path, fleet.AuditRequest{Options: opt, Role: o.role, Emit: o.emit != ""})
	if err != nil {
		return err
	}
	if err := report.FleetAudit(stdout, rep, o.format); err != nil {
		return err
	}
	if o.emit == "" {
		return nil
	}
	res, _ := rep.RoleResult(o.role)
	return emitChanges(o.emit, res, stderr)
}

// fleetApplyFlags are apply --hosts' own flags.
type fleetApplyFlags struct {
	fleetFlags
	canary, batch int
}

func (o *fleetApplyFlags) add(f *pflag.FlagSet) {
	o.fleetFlags.add(f, 10*time.Minute)
	f.IntVar(&o.canary, "canary", 1, "with --hosts: hosts of the first batch")
	f.IntVar(&o.batch, "batch", fleet.DefaultBatch, "with --hosts: hosts of each batch after the canary")
}

// runFleetApply is `stacktune apply --hosts`.
func runFleetApply(ctx context.Context, cmd *cobra.Command, fo fleetApplyFlags, o applyOptions, dir string, stdout, stderr io.Writer) error {
	switch {
	case dir == "":
		return errors.New("apply --hosts needs the change set: the directory of stacktune audit --emit, or its changes.json")
	case o.list:
		return errors.New("--list with --hosts: run stacktune apply --list on the host")
	case o.ddl != "":
		return errors.New("--ddl with --hosts: DDL goes to one database server, not to every host: apply it there")
	}
	if err := report.CheckFormat(o.format, report.FleetApplyFormats...); err != nil {
		return err
	}
	rollbackFlags := newRollbackCmd().Flags()
	live := live{w: stderr, show: isTerminal(stderr)}
	rep, err := fleet.ApplyHosts(ctx, fleet.ApplyRequest{
		Reach: fo.Reach, ChangeSet: dir, Flags: givenFlags(cmd), RollbackTakes: func(name string) bool { return rollbackFlags.Lookup(name) != nil },
		Label: o.label, Canary: fo.canary, Batch: fo.batch, DryRun: o.dryRun,
		Progress: func(h fleet.HostApply) { live.draw(report.FleetApplyProgressLine(h)) },
	})
	live.clear()
	if rep == nil {
		return err
	}
	if werr := report.FleetApply(stdout, rep, o.format); werr != nil {
		return werr
	}
	return err
}

// runFleetPlan is `stacktune plan --fleet`.
func runFleetPlan(cmd *cobra.Command, o planOptions, stdout io.Writer) error {
	in, err := o.inputs()
	if err != nil {
		return err
	}
	set := map[string]bool{}
	for _, n := range []string{"servers", "port-range", "tw-buckets"} {
		set[n] = cmd.Flags().Changed(n)
	}
	p, err := fleet.PlanFile(o.fleet, fleet.PlanInputs{Options: in, Role: o.role, Set: set})
	if err != nil {
		return err
	}
	return report.FleetPlan(stdout, p, o.format)
}
