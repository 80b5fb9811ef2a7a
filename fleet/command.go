package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/stacktune/stacktune/collect"
	"github.com/stacktune/stacktune/inventory"
)

// The fleet's commands, one call each: `collect --hosts` (CollectHosts),
// `apply --hosts` (ApplyHosts), `audit FLEET.json` (AuditFile, and
// HostSnapshot for --host), `plan --fleet` (PlanFile). The CLI maps its
// flags to a request and renders what comes back; errors name its flags.

// Reach is how a command reaches a fleet: the hosts of an Ansible
// inventory and the SSH to them.
type Reach struct {
	// Inventory is the Ansible INI inventory; Limit keeps only these
	// groups or hosts (none: all).
	Inventory string
	Limit     []string
	// Parallel is how many hosts are worked on at once.
	Parallel int
	// KnownHosts, Identities, User and ConnectTimeout are the SSH
	// dialer's (SSHDialer).
	KnownHosts     []string
	Identities     []string
	User           string
	ConnectTimeout time.Duration
	// RemoteBinary is the stacktune already on every host ("": this
	// one, copied for the run).
	RemoteBinary string
	// HostTimeout bounds one host's work.
	HostTimeout time.Duration
}

// Hosts reads the inventory and keeps Limit's hosts; none is ErrNoHosts.
func (r Reach) Hosts() ([]inventory.Host, error) {
	inv, err := inventory.Load(r.Inventory)
	if err != nil {
		return nil, err
	}
	hosts, err := inv.Select(r.Limit)
	if err != nil {
		return nil, err
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("%s: %w", r.Inventory, ErrNoHosts)
	}
	return hosts, nil
}

// Dialer is the SSH dialer Reach names.
func (r Reach) Dialer() *SSHDialer {
	return &SSHDialer{KnownHosts: r.KnownHosts, Identities: r.Identities, User: r.User, ConnectTimeout: r.ConnectTimeout}
}

// Binary is how each host runs stacktune.
func (r Reach) Binary() Binary { return Binary{Remote: r.RemoteBinary} }

// Flag is a flag given on this command line, which the hosts' own
// commands may take.
type Flag struct {
	Name string
	// Value is the flag's value as a string; Values a list's values one
	// by one (a flag of one value: Value alone).
	Value  string
	Values []string
}

// What a host cannot be given: a variable of this shell, a password on
// its command line.
const (
	dsnEnvHosts    = "--dsn-env names a variable of this shell, which the hosts do not have: give each host an option file (--defaults-file, or ~/.my.cnf there) or "
	errDSNPassword = "--dsn holds a password, which would be on every host's command line: put it in an option file there (--defaults-file or ~/.my.cnf)"
)

// hasPassword reports whether a --dsn value carries a password.
func hasPassword(dsn string) bool {
	cfg, err := mysql.ParseDSN(dsn)
	return err == nil && cfg.Passwd != ""
}

// collectArgs are the flags of `stacktune collect` among flags, for
// every host: the collectors' and the MySQL server's.
func collectArgs(flags []Flag) ([]string, error) {
	names := map[string]bool{"defaults-file": true, "no-defaults": true, "dsn": true}
	for _, r := range collect.Registered() {
		for _, f := range r.Flags {
			names[f.Name] = true
		}
	}
	var args []string
	var err error
	for _, f := range flags {
		switch {
		case f.Name == "dsn-env":
			err = errors.New(dsnEnvHosts + "stacktune_collect_args in the inventory")
		case f.Name == "dsn":
			if hasPassword(f.Value) {
				err = errors.New(errDSNPassword)
			}
			args = append(args, "--dsn", f.Value)
		case names[f.Name]:
			args = append(args, "--"+f.Name+"="+f.Value)
		}
	}
	return args, err
}

// CollectRequest is `stacktune collect --hosts`.
type CollectRequest struct {
	Reach
	// Flags are the flags of the command line; the collectors' and the
	// server's go to every host.
	Flags []Flag
	// Progress is Collect's.
	Progress func(done, total int, h Host)
}

// CollectHosts runs `stacktune collect` on the hosts Reach selects
// (Collect) into one fleet snapshot. The snapshot is returned whenever
// the hosts were tried, with an error when no host answered.
func CollectHosts(ctx context.Context, r CollectRequest) (*Snapshot, error) {
	hosts, err := r.Hosts()
	if err != nil {
		return nil, err
	}
	args, err := collectArgs(r.Flags)
	if err != nil {
		return nil, err
	}
	fs, err := Collect(ctx, hosts, CollectOptions{
		Dialer: r.Dialer(), Binary: r.Binary(), Args: args, Parallel: r.Parallel, HostTimeout: r.HostTimeout, Progress: r.Progress,
	})
	if fs == nil {
		return nil, err
	}
	fs.Inventory = r.Inventory
	if n := len(fs.Failed()); err == nil && n == len(fs.Hosts) {
		err = fmt.Errorf("no host answered (%d tried)", n)
	}
	return fs, err
}

// ownFlags are the flags that steer the fleet, not any host's apply.
var ownFlags = map[string]bool{"hosts": true, "limit": true, "parallel": true, "known-hosts": true, "identity": true, "ssh-user": true,
	"remote-binary": true, "host-timeout": true, "connect-timeout": true, "canary": true, "batch": true, "label": true, "dry-run": true}

// applyArgs are the flags of `stacktune apply` among flags, for every
// host, and those rollback takes too (rollbackTakes), for its rollback.
func applyArgs(flags []Flag, rollbackTakes func(name string) bool) (apply, rollback []string, err error) {
	for _, f := range flags {
		if ownFlags[f.Name] {
			continue
		}
		switch f.Name {
		case "dsn-env":
			return nil, nil, errors.New(dsnEnvHosts + "stacktune_apply_args")
		case "dsn":
			if hasPassword(f.Value) {
				return nil, nil, errors.New(errDSNPassword)
			}
		case "format":
			continue // the hosts print text; the command renders the fleet's report
		}
		vals := f.Values
		if vals == nil {
			vals = []string{f.Value}
		}
		for _, v := range vals {
			arg := "--" + f.Name + "=" + v
			apply = append(apply, arg)
			if rollbackTakes != nil && rollbackTakes(f.Name) {
				rollback = append(rollback, arg)
			}
		}
	}
	return apply, rollback, nil
}

// ApplyRequest is `stacktune apply --hosts`.
type ApplyRequest struct {
	Reach
	// ChangeSet is ApplyOptions'.
	ChangeSet string
	// Flags are the flags of the command line: apply's own go to every
	// host (RollbackTakes says which its rollback takes too).
	Flags         []Flag
	RollbackTakes func(name string) bool
	// Label is what the run is for ("": only "fleet" and its start).
	Label string
	// Canary, Batch, DryRun and Progress are ApplyOptions'.
	Canary, Batch int
	DryRun        bool
	Progress      func(HostApply)
}

// ApplyHosts applies the change set on the hosts Reach selects (Apply),
// every host's transaction labelled "fleet START" (after Label when
// given). The report is returned whenever a host was worked on, with an
// error when the apply stopped or did not complete.
func ApplyHosts(ctx context.Context, r ApplyRequest) (*ApplyReport, error) {
	hosts, err := r.Hosts()
	if err != nil {
		return nil, err
	}
	args, rollbackArgs, err := applyArgs(r.Flags, r.RollbackTakes)
	if err != nil {
		return nil, err
	}
	label := fmt.Sprintf("fleet %s", time.Now().UTC().Format("2006-01-02T15:04:05Z"))
	if r.Label != "" {
		label = r.Label + " [" + label + "]"
	}
	rep, err := Apply(ctx, hosts, ApplyOptions{
		Dialer: r.Dialer(), Binary: r.Binary(), ChangeSet: r.ChangeSet, ApplyArgs: args, RollbackArgs: rollbackArgs,
		Label: label, Canary: r.Canary, Batch: r.Batch, Parallel: r.Parallel, HostTimeout: r.HostTimeout, DryRun: r.DryRun,
		Progress: r.Progress,
	})
	if rep == nil || err != nil {
		return rep, err
	}
	if !rep.OK() {
		if rep.StoppedAt != "" {
			return rep, fmt.Errorf("the fleet apply stopped at %s and was rolled back", rep.StoppedAt)
		}
		return rep, errors.New("the fleet apply did not complete")
	}
	return rep, nil
}

// AuditRequest is `stacktune audit FLEET.json`.
type AuditRequest struct {
	Options AuditOptions
	// Role keeps only this role's report ("": every role).
	Role string
	// Emit says the role's change set will be written: a role is needed.
	Emit bool
}

// AuditFile audits the fleet snapshot at path (Audit), by role or only
// Role's. The change set of Role's findings is the report's RoleResult.
func AuditFile(path string, r AuditRequest) (*Report, error) {
	fs, err := Load(path)
	if err != nil {
		return nil, err
	}
	if r.Emit && r.Role == "" {
		return nil, errors.New("--emit with a fleet snapshot: name the role whose change set to write (--role), or one host (--host)")
	}
	rep := Audit(fs, r.Options)
	if r.Role != "" {
		if _, err := rep.RoleResult(r.Role); err != nil {
			return nil, err
		}
		rep.Roles = slices.DeleteFunc(rep.Roles, func(rr RoleReport) bool { return rr.Role != r.Role })
	}
	return rep, nil
}

// HostSnapshot is one host's snapshot out of the fleet snapshot at path.
func HostSnapshot(path, name string) (*collect.Snapshot, error) {
	fs, err := Load(path)
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

// PlanFile is `stacktune plan --fleet`: PlanFleet on the fleet snapshot
// at path.
func PlanFile(path string, in PlanInputs) (*Plan, error) {
	fs, err := Load(path)
	if err != nil {
		return nil, err
	}
	return PlanFleet(fs, in)
}
