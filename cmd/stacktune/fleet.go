package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stacktune/stacktune/advise"
	"github.com/stacktune/stacktune/apply"
	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/fleet"
	"github.com/stacktune/stacktune/internal/atomicfile"
	"github.com/stacktune/stacktune/inventory"
	"github.com/stacktune/stacktune/report"
)

// fleetFlags are the flags that reach a fleet over SSH (collect --hosts,
// apply --hosts).
type fleetFlags struct {
	hosts       string
	limit       []string
	parallel    int
	knownHosts  []string
	identities  []string
	user        string
	remoteBin   string
	hostTimeout time.Duration
	connTimeout time.Duration
}

func (o *fleetFlags) add(f *pflag.FlagSet, hostTimeout time.Duration) {
	f.StringVar(&o.hosts, "hosts", "", "an Ansible INI inventory: run on each of its hosts over SSH (groups are roles)")
	f.StringSliceVar(&o.limit, "limit", nil, "with --hosts: only these groups or hosts")
	f.IntVar(&o.parallel, "parallel", fleet.DefaultParallel, "with --hosts: hosts worked on at once")
	f.StringArrayVar(&o.knownHosts, "known-hosts", nil, "with --hosts: known_hosts file (repeatable; default ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts); unknown or changed host keys are refused")
	f.StringArrayVar(&o.identities, "identity", nil, "with --hosts: private key for hosts without ansible_ssh_private_key_file (repeatable; default ~/.ssh/id_ed25519, id_ecdsa, id_rsa; ssh-agent too)")
	f.StringVar(&o.user, "ssh-user", "", "with --hosts: login for hosts without ansible_user (default: you)")
	f.StringVar(&o.remoteBin, "remote-binary", "", "with --hosts: the stacktune already on every host (default: copy this one for the run, removed after)")
	f.DurationVar(&o.hostTimeout, "host-timeout", hostTimeout, "with --hosts: bound on one host's work")
	f.DurationVar(&o.connTimeout, "connect-timeout", 10*time.Second, "with --hosts: bound on connecting and the SSH handshake")
}

// selectHosts reads the inventory and keeps --limit's hosts.
func (o *fleetFlags) selectHosts() ([]inventory.Host, error) {
	inv, err := inventory.Load(o.hosts)
	if err != nil {
		return nil, err
	}
	hosts, err := inv.Select(o.limit)
	if err != nil {
		return nil, err
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("%s: %w", o.hosts, fleet.ErrNoHosts)
	}
	return hosts, nil
}

func (o *fleetFlags) dialer() *fleet.SSHDialer {
	return &fleet.SSHDialer{KnownHosts: o.knownHosts, Identities: o.identities, User: o.user, ConnectTimeout: o.connTimeout}
}

// fleetCollectArgs are the flags of `stacktune collect` given on this
// command line, for every host: the collectors' and the MySQL server's.
func fleetCollectArgs(cmd *cobra.Command) ([]string, error) {
	names := map[string]bool{"defaults-file": true, "no-defaults": true, "dsn": true}
	for _, r := range collect.Registered() {
		for _, f := range r.Flags {
			names[f.Name] = true
		}
	}
	var args []string
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch {
		case f.Name == "dsn-env":
			err = errors.New("--dsn-env names a variable of this shell, which the hosts do not have: give each host an option file (--defaults-file, or ~/.my.cnf there) or stacktune_collect_args in the inventory")
		case f.Name == "dsn":
			if cfg, perr := mysql.ParseDSN(f.Value.String()); perr == nil && cfg.Passwd != "" {
				err = errors.New("--dsn holds a password, which would be on every host's command line: put it in an option file there (--defaults-file or ~/.my.cnf)")
			}
			args = append(args, "--dsn", f.Value.String())
		case names[f.Name]:
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	return args, err
}

// runFleetCollect is `stacktune collect --hosts`.
func runFleetCollect(ctx context.Context, cmd *cobra.Command, o fleetFlags, out string, stderr io.Writer) error {
	hosts, err := o.selectHosts()
	if err != nil {
		return err
	}
	args, err := fleetCollectArgs(cmd)
	if err != nil {
		return err
	}
	show := isTerminal(stderr)
	fs, err := fleet.Collect(ctx, hosts, fleet.CollectOptions{
		Dialer: o.dialer(), Binary: fleet.Binary{Remote: o.remoteBin}, Args: args, Parallel: o.parallel, HostTimeout: o.hostTimeout,
		Progress: func(done, total int, h fleet.Host) {
			if show {
				fmt.Fprintf(stderr, "\r\033[K%d/%d hosts (%s)", done, total, report.Clean(h.Name))
			}
		},
	})
	if show {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if fs == nil {
		return err
	}
	fs.Inventory = o.hosts
	if out == "" || out == "-" {
		if err := writeJSON(cmd.OutOrStdout(), fs); err != nil {
			return err
		}
	} else {
		if err := saveJSON(out, fs); err != nil {
			return err
		}
		if err := report.FleetHosts(stderr, fs); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "stacktune: fleet snapshot written to %s (stacktune audit %s)\n", out, out)
	}
	if err != nil {
		return err
	}
	if n := len(fs.Failed()); n == len(fs.Hosts) {
		return fmt.Errorf("no host answered (%d tried)", n)
	}
	return nil
}

// runFleetAudit is `stacktune audit FLEET.json`: the fleet's report by
// role, or with --emit the change set of one role's findings.
func runFleetAudit(path string, o auditOptions, opt fleet.AuditOptions, stdout, stderr io.Writer) error {
	fs, err := fleet.Load(path)
	if err != nil {
		return err
	}
	if err := report.CheckFormat(o.format, report.FleetFormats...); err != nil {
		return err
	}
	if o.emit != "" && o.role == "" {
		return errors.New("--emit with a fleet snapshot: name the role whose change set to write (--role), or one host (--host)")
	}
	rep := fleet.Audit(fs, opt)
	if o.role != "" {
		if _, err := rep.RoleResult(o.role); err != nil {
			return err
		}
		rep.Roles = slices.DeleteFunc(rep.Roles, func(r fleet.RoleReport) bool { return r.Role != o.role })
	}
	if err := report.FleetAudit(stdout, rep, o.format); err != nil {
		return err
	}
	if o.emit == "" {
		return nil
	}
	res, _ := rep.RoleResult(o.role)
	paths, err := advise.Emit(o.emit, res)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		fmt.Fprintf(stderr, "stacktune: no changes to write into %s\n", o.emit)
	}
	for _, p := range paths {
		fmt.Fprintf(stderr, "stacktune: wrote %s\n", p)
	}
	return nil
}

// fleetHost is one host's snapshot out of a fleet snapshot.
func fleetHost(path, name string) (*collect.Snapshot, error) {
	fs, err := fleet.Load(path)
	if err != nil {
		return nil, err
	}
	for _, h := range fs.Hosts {
		if h.Name != name {
			continue
		}
		if !h.OK() {
			return nil, fmt.Errorf("host %s has no snapshot in %s: %s: %s", name, path, h.Stage, h.Error)
		}
		return h.Snapshot, nil
	}
	return nil, fmt.Errorf("no host %q in %s", name, path)
}

// hostNames lists the hosts, for messages.
func hostNames(hs []inventory.Host) string {
	names := make([]string, len(hs))
	for i, h := range hs {
		names[i] = h.Name
	}
	return strings.Join(names, ", ")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// saveJSON writes atomically: never a half-written file.
func saveJSON(path string, v any) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return writeJSON(w, v) })
}

// checkExpectLabel refuses a rollback whose transaction (the newest one not
// rolled back) does not carry label; "" checks nothing.
func checkExpectLabel(state, label string) error {
	if label == "" {
		return nil
	}
	hist, err := apply.History(state)
	if err != nil {
		return err
	}
	for _, t := range hist { // newest first
		if t.State == "rolled-back" {
			continue
		}
		if t.Label != label {
			return fmt.Errorf("--expect-label: the transaction to undo is %s (label %q), not one labelled %q: nothing rolled back", t.ID, t.Label, label)
		}
		return nil
	}
	return fmt.Errorf("--expect-label: no transaction to undo in %s: nothing rolled back", state)
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

// fleetOwnFlags are the flags that steer the fleet, not any host's apply.
var fleetOwnFlags = map[string]bool{"hosts": true, "limit": true, "parallel": true, "known-hosts": true, "identity": true, "ssh-user": true,
	"remote-binary": true, "host-timeout": true, "connect-timeout": true, "canary": true, "batch": true, "label": true, "dry-run": true}

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
	hosts, err := fo.selectHosts()
	if err != nil {
		return err
	}
	rollbackFlags := newRollbackCmd().Flags()
	var applyArgs, rollbackArgs []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if fleetOwnFlags[f.Name] || err != nil {
			return
		}
		switch f.Name {
		case "dsn-env":
			err = errors.New("--dsn-env names a variable of this shell, which the hosts do not have: give each host an option file (--defaults-file, or ~/.my.cnf there) or stacktune_apply_args")
			return
		case "dsn":
			if cfg, perr := mysql.ParseDSN(f.Value.String()); perr == nil && cfg.Passwd != "" {
				err = errors.New("--dsn holds a password, which would be on every host's command line: put it in an option file there (--defaults-file or ~/.my.cnf)")
				return
			}
		case "format":
			return // the hosts print text; this command renders the fleet's report
		}
		var vals []string
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			vals = sv.GetSlice()
		} else {
			vals = []string{f.Value.String()}
		}
		for _, v := range vals {
			arg := "--" + f.Name + "=" + v
			applyArgs = append(applyArgs, arg)
			if rollbackFlags.Lookup(f.Name) != nil {
				rollbackArgs = append(rollbackArgs, arg)
			}
		}
	})
	if err != nil {
		return err
	}
	label := fmt.Sprintf("fleet %s", time.Now().UTC().Format("2006-01-02T15:04:05Z"))
	if o.label != "" {
		label = o.label + " [" + label + "]"
	}
	show := isTerminal(stderr)
	rep, err := fleet.Apply(ctx, hosts, fleet.ApplyOptions{
		Dialer: fo.dialer(), Binary: fleet.Binary{Remote: fo.remoteBin}, ChangeSet: dir, ApplyArgs: applyArgs, RollbackArgs: rollbackArgs,
		Label: label, Canary: fo.canary, Batch: fo.batch, Parallel: fo.parallel, HostTimeout: fo.hostTimeout, DryRun: o.dryRun,
		Progress: func(h fleet.HostApply) {
			if show {
				fmt.Fprintf(stderr, "\r\033[K%s: %s", report.Clean(h.Name), h.State)
			}
		},
	})
	if show {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if rep == nil {
		return err
	}
	if werr := report.FleetApply(stdout, rep, o.format); werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	if !rep.OK() {
		if rep.StoppedAt != "" {
			return fmt.Errorf("the fleet apply stopped at %s and was rolled back", rep.StoppedAt)
		}
		return errors.New("the fleet apply did not complete")
	}
	return nil
}

// runFleetPlan is `stacktune plan --fleet`.
func runFleetPlan(cmd *cobra.Command, o planOptions, stdout io.Writer) error {
	in, err := o.inputs()
	if err != nil {
		return err
	}
	fs, err := fleet.Load(o.fleet)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	for _, n := range []string{"servers", "port-range", "tw-buckets"} {
		set[n] = cmd.Flags().Changed(n)
	}
	p, err := fleet.PlanFleet(fs, fleet.PlanInputs{Options: in, Role: o.role, Set: set})
	if err != nil {
		return err
	}
	return report.FleetPlan(stdout, p, o.format)
}
