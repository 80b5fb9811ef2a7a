package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacktune/stacktune/internal/sandbox"
	"github.com/stacktune/stacktune/internal/sandbox/sandboxtest"
)

// TestMain lets this test binary be the stacktune that `collect --hosts`
// and `apply --hosts` copy to the lab's hosts: run there as `stacktune
// collect ...`, it is the real command.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "collect" || os.Args[1] == "apply" || os.Args[1] == "rollback") {
		root := newRootCmd(os.Stdin, os.Stdout, os.Stderr)
		root.SetArgs(os.Args[1:])
		if err := root.ExecuteContext(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "stacktune:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFleetCollectAudit is README's fleet example: `collect --hosts` over
// a lab of SSH hosts in network namespaces, then `audit` of the fleet
// snapshot: the two outliers found, the unreachable host and the one with
// the changed key recorded with their reasons, nginx findings counted by
// host.
func TestFleetCollectAudit(t *testing.T) {
	lab := sandboxtest.NewFleetLab(t, sandbox.FleetLabOptions{Web: 5, TimeWait: 100})
	out := filepath.Join(t.TempDir(), "fleet.json")
	_, stderr, err := run(t, "", "collect", "--hosts", lab.Inventory, "--known-hosts", lab.KnownHosts, "--parallel", "4", "-o", out)
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
		"web3                 linux TIME_WAIT sockets = 200 (role: 100; 200 is 2.0× the role's median 100)",
		`web2                 linux net.ipv4.ip_local_port_range = 40000 60999 (role: 32768 60999; 4 of 5 hosts have "32768 60999")`,
		`web4                 nginx gzip = on (role: off; 4 of 5 hosts have "off")`,
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
	// Refused: a DSN with a password would travel on every command line.
	if _, _, err := run(t, "", "collect", "--hosts", lab.Inventory, "--dsn", "u:secret@tcp(db:3306)/"); err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "password") {
		t.Errorf("--dsn with a password: %v", err)
	}
}
