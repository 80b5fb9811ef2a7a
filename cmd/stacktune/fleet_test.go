package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/changeset"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestMain lets this test binary be the stacktune that `collect --hosts`
// and `apply --hosts` copy to the lab's hosts: run there as `stacktune
// collect ...`, it is the real command.
func TestMain(m *testing.M) {
	if spec := os.Getenv(hostileLaunchEnv); spec != "" {
		os.Exit(hostileLaunch(spec))
	}
	if len(os.Args) > 1 && (os.Args[1] == "collect" || os.Args[1] == "apply" || os.Args[1] == "rollback") {
		root := newRootCmd(os.Stdin, os.Stdout, os.Stderr)
		root.SetArgs(os.Args[1:])
		if err := root.ExecuteContext(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "stacktune:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The tests' runs never touch the user's history: a build of
	// another branch may have left a newer schema there.
	hist, err := os.MkdirTemp("", "stacktune-history-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("STACKTUNE_HISTORY", filepath.Join(hist, "history.db"))
	code := m.Run()
	os.RemoveAll(hist)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// TestFleetCollectAudit is README's fleet example: `collect --hosts` over
// a lab of SSH hosts in network namespaces, then `audit` of the fleet
// snapshot: the two outliers found, the unreachable host and the one with
// the changed key recorded with their reasons, nginx findings counted by
// host.
func TestFleetCollectAudit(t *testing.T) {
	lab := sandboxtest.NewFleetLab(t, sandbox.FleetLabOptions{Web: 5, TimeWait: 100})
	out := filepath.Join(t.TempDir(), "fleet.json")
	// A short interval: the lab's TIME_WAIT sockets last 60 s from its
	// start, and every host's collection waits out the interval.
	_, stderr, err := run(t, "", "collect", "--hosts", lab.Inventory, "--known-hosts", lab.KnownHosts, "--parallel", "4", "--interval", "1s", "-o", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"8 hosts, 6 answered, 2 failed", "FAILED  web6", "connection refused", "FAILED  web7", "CHANGED"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("collect's report lacks %q:\n%s", want, stderr)
		}
	}
	stdout, _, err := run(t, "", "audit", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"fleet audit: 8 hosts, 6 answered, 2 failed",
		"web3  linux TIME_WAIT sockets = 200 (role: 100; 200 is 2.0× the role's median 100)",
		`web2  linux net.ipv4.ip_local_port_range = 40000 60999 (role: 32768 60999; 4 of 5 hosts have "32768 60999")`,
		`web4  nginx gzip = on (role: off; 4 of 5 hosts have "off")`,
		"(nginx-gzip, nginx)  4/5 hosts",
		"(nginx-upstream-keepalive, nginx)  5/5 hosts",
		"host-key: the host key of",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("audit lacks %q:\n%s", want, stdout)
		}
	}
	// Markdown and JSON render the same report.
	if md, _, err := run(t, "", "audit", "--format", "markdown", out); err != nil || !strings.Contains(md, "| web2 | linux net.ipv4.ip") {
		t.Errorf("markdown: %v\n%s", err, md)
	}
	if js, _, err := run(t, "", "audit", "--format", "json", out); err != nil || !strings.Contains(js, `"outliers"`) {
		t.Errorf("json: %v", err)
	}
	// One role's change set, one host's audit.
	tuned := filepath.Join(t.TempDir(), "tuned")
	if _, stderr, err := run(t, "", "audit", "--role", "web", "--emit", tuned, out); err != nil || !strings.Contains(stderr, "wrote "+tuned+"/changes.json") {
		t.Errorf("--role web --emit: %v\n%s", err, stderr)
	}
	if md, _, err := run(t, "", "audit", "--host", "web3", out); err != nil || !strings.Contains(md, "findings for") {
		t.Errorf("--host web3: %v\n%s", err, md)
	}
	for args, want := range map[string]string{"--host web6": "has no snapshot", "--host nosuch": `no host "nosuch"`, "--role nosuch": `no role "nosuch"`, "--emit x": "name the role"} {
		if _, _, err := run(t, "", append(append([]string{"audit"}, strings.Fields(args)...), out)...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("audit %s: %v, want %q", args, err, want)
		}
	}
	// Refused: a DSN with a password would travel on every command line.
	if _, _, err := run(t, "", "collect", "--hosts", lab.Inventory, "--dsn", "u:secret@tcp(db:3306)/"); err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "password") {
		t.Errorf("--dsn with a password: %v", err)
	}
}

// TestFleetApplyRollsBack applies a sysctl change set to the lab's web
// hosts over SSH, each host through its own apply transaction (its own
// /proc/sys: a network namespace), canary first then batches of 3. The
// second batch holds web2, whose ip_local_port_range is not the one the
// change set was advised from: its apply refuses (drift), its batch
// finishes, no further batch starts, and the hosts already done are rolled
// back, so every namespace ends with the value it started with and no
// sysctl.d file is left. Then the healthy hosts alone take it.
func TestFleetApplyRollsBack(t *testing.T) {
	lab := sandboxtest.NewFleetLab(t, sandbox.FleetLabOptions{Web: 5, TimeWait: 10,
		HostVars: "stacktune_apply_args='--host-wide --sysctl-conf {{DIR}}/99-stacktune.conf --state {{DIR}}/state'"})
	set := &changeset.Set{Format: changeset.FormatVersion, Source: "test", Changes: []changeset.Change{
		{Kind: changeset.Sysctl, Target: "/etc/sysctl.d", Name: "net.ipv4.ip_local_port_range", From: "32768 60999", To: "10000 65000", Finding: "linux-port-range"},
	}}
	dir := filepath.Join(t.TempDir(), "tuned")
	if _, err := changeset.Write(dir, set); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	portRange := func(name string) string {
		v, err := lab.Host(name).Netns.ReadSysctl(ctx, "net.ipv4.ip_local_port_range")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	stdout, stderr, err := run(t, "", "apply", "--hosts", lab.Inventory, "--known-hosts", lab.KnownHosts, "--limit", "web1,web2,web3,web4,web5",
		"--canary", "1", "--batch", "3", "--label", "port range", dir)
	if err == nil || !strings.Contains(err.Error(), "stopped at web2 and was rolled back") {
		t.Fatalf("err %v\n%s\n%s", err, stdout, stderr)
	}
	t.Log(stdout)
	for _, want := range []string{"stopped at web2", "canary 1:", "web1  web  rolled-back", "web2  web  failed",
		"advised from 32768 60999, running 40000 60999", "web3  web  rolled-back", "web4  web  rolled-back", "not started:", "web5  web  not-started"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	for _, h := range []string{"web1", "web3", "web4", "web5"} {
		if got := portRange(h); got != "32768 60999" {
			t.Errorf("%s: ip_local_port_range %q after the rollback", h, got)
		}
		if _, err := os.Stat(filepath.Join(lab.Host(h).Dir, "99-stacktune.conf")); !os.IsNotExist(err) {
			t.Errorf("%s: the sysctl.d file is left: %v", h, err)
		}
	}
	if got := portRange("web2"); got != sandbox.LabPortRange {
		t.Errorf("web2 changed: %q", got)
	}
	// The healthy hosts alone: all applied.
	stdout, _, err = run(t, "", "apply", "--hosts", lab.Inventory, "--known-hosts", lab.KnownHosts, "--limit", "web1,web3,web4", dir)
	if err != nil || !strings.Contains(stdout, "3 applied") {
		t.Fatalf("%v\n%s", err, stdout)
	}
	for _, h := range []string{"web1", "web3", "web4"} {
		if got := portRange(h); got != "10000 65000" {
			t.Errorf("%s: ip_local_port_range %q", h, got)
		}
	}
	// A rollback that names another run's label changes nothing.
	conf := filepath.Join(lab.Host("web1").Dir, "99-stacktune.conf")
	state := filepath.Join(lab.Host("web1").Dir, "state")
	if _, _, err := run(t, "", "rollback", "--host-wide", "--sysctl-conf", conf, "--state", state, "--expect-label", "someone else's"); err == nil || !strings.Contains(err.Error(), "nothing rolled back") {
		t.Errorf("--expect-label: %v", err)
	}
}
