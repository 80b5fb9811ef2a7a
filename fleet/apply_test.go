package fleet

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stacktune/stacktune/inventory"
)

// fakeFleet is a fleet whose hosts run nothing: each call is recorded and
// answers as its host's behaviour says, so a failure can be put at every
// step of a rolling apply.
type fakeFleet struct {
	mu    sync.Mutex
	calls []string // "web1 apply", "web1 rollback"
	// behaviour by "HOST apply" / "HOST rollback" / "HOST dial".
	fail map[string]error
	// files are what each apply received in its tar, by host.
	files  map[string][]string
	cancel func() // called on "HOST cancel" apply
}

type fakeConn struct {
	f    *fakeFleet
	host string
}

func (f *fakeFleet) Dial(_ context.Context, h inventory.Host) (Conn, error) {
	if err := f.fail[h.Name+" dial"]; err != nil {
		return nil, err
	}
	return &fakeConn{f, h.Name}, nil
}

func (c *fakeConn) Close() error { return nil }

func (c *fakeConn) Run(ctx context.Context, command string, stdin io.Reader, stdout, stderr io.Writer) error {
	what := "apply"
	if strings.Contains(command, " rollback --expect-label") {
		what = "rollback"
	}
	var names []string
	if stdin != nil && what == "apply" {
		tr := tar.NewReader(stdin)
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			names = append(names, h.Name)
		}
		io.Copy(io.Discard, stdin)
	}
	c.f.mu.Lock()
	c.f.calls = append(c.f.calls, c.host+" "+what)
	if names != nil {
		c.f.files[c.host] = names
	}
	err := c.f.fail[c.host+" "+what]
	cancel := c.f.fail[c.host+" cancel"] != nil
	c.f.mu.Unlock()
	if cancel && what == "apply" {
		c.f.cancel()
	}
	fmt.Fprintf(stdout, "%s on %s\n", what, c.host)
	return err
}

func fleetHosts(n int) []inventory.Host {
	var hs []inventory.Host
	for i := 1; i <= n; i++ {
		hs = append(hs, inventory.Host{Name: fmt.Sprintf("web%d", i), Role: "web", Vars: map[string]string{}})
	}
	return hs
}

func changeSetDir(t *testing.T) string {
	dir := t.TempDir()
	for name, body := range map[string]string{"changes.json": `{"format":1}`, "sysctl/99-stacktune.conf": "x = 1\n"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestApplyFaults puts a failure at every step of a rolling apply of 7
// hosts (canary 1, batches of 3) and checks what ran, in which order, and
// each host's final state.
func TestApplyFaults(t *testing.T) {
	exit := &HostError{StageRun, &ExitError{Status: 1, Stderr: "apply: refused: drifted"}}
	lost := &HostError{StageRun, errors.New("ssh: connection lost")}
	refusedLabel := &HostError{StageRun, &ExitError{Status: 1, Stderr: "stacktune: --expect-label: the transaction to undo is x"}}
	tests := []struct {
		name    string
		fail    map[string]error
		dryRun  bool
		calls   []string
		states  string // web1..web7
		stopped string
	}{
		{name: "all applied", calls: []string{"web1 apply", "web2 apply", "web3 apply", "web4 apply", "web5 apply", "web6 apply", "web7 apply"},
			states: "applied applied applied applied applied applied applied"},
		{name: "the canary fails", fail: map[string]error{"web1 apply": exit}, calls: []string{"web1 apply"},
			states: "failed not-started not-started not-started not-started not-started not-started", stopped: "web1"},
		{name: "the canary cannot be reached", fail: map[string]error{"web1 dial": &HostError{StageConnect, errors.New("connection refused")}}, calls: nil,
			states: "failed not-started not-started not-started not-started not-started not-started", stopped: "web1"},
		{name: "a host of batch 2 fails", fail: map[string]error{"web3 apply": exit},
			calls:  []string{"web1 apply", "web2 apply", "web3 apply", "web4 apply", "web4 rollback", "web2 rollback", "web1 rollback"},
			states: "rolled-back rolled-back failed rolled-back not-started not-started not-started", stopped: "web3"},
		{name: "a host of the last batch fails", fail: map[string]error{"web7 apply": exit},
			calls: []string{"web1 apply", "web2 apply", "web3 apply", "web4 apply", "web5 apply", "web6 apply", "web7 apply",
				"web6 rollback", "web5 rollback", "web4 rollback", "web3 rollback", "web2 rollback", "web1 rollback"},
			states: "rolled-back rolled-back rolled-back rolled-back rolled-back rolled-back failed", stopped: "web7"},
		{name: "a rollback fails too", fail: map[string]error{"web3 apply": exit, "web2 rollback": exit},
			calls:  []string{"web1 apply", "web2 apply", "web3 apply", "web4 apply", "web4 rollback", "web2 rollback", "web1 rollback"},
			states: "rolled-back rollback-failed failed rolled-back not-started not-started not-started", stopped: "web3"},
		{name: "connection lost, its transaction undone there", fail: map[string]error{"web2 apply": lost, "web2 rollback": refusedLabel},
			calls:  []string{"web1 apply", "web2 apply", "web3 apply", "web4 apply", "web4 rollback", "web3 rollback", "web2 rollback", "web1 rollback"},
			states: "rolled-back failed rolled-back rolled-back not-started not-started not-started", stopped: "web2"},
		{name: "connection lost, its transaction in place", fail: map[string]error{"web2 apply": lost},
			calls:  []string{"web1 apply", "web2 apply", "web3 apply", "web4 apply", "web4 rollback", "web3 rollback", "web2 rollback", "web1 rollback"},
			states: "rolled-back rolled-back rolled-back rolled-back not-started not-started not-started", stopped: "web2"},
		{name: "canceled in batch 2", fail: map[string]error{"web3 cancel": errors.New("x")},
			calls:  []string{"web1 apply", "web2 apply", "web3 apply", "web4 apply", "web4 rollback", "web3 rollback", "web2 rollback", "web1 rollback"},
			states: "rolled-back rolled-back rolled-back rolled-back not-started not-started not-started"},
		{name: "dry run goes on past a failure", dryRun: true, fail: map[string]error{"web3 apply": exit},
			calls:  []string{"web1 apply", "web2 apply", "web3 apply", "web4 apply", "web5 apply", "web6 apply", "web7 apply"},
			states: "dry-run dry-run failed dry-run dry-run dry-run dry-run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := &fakeFleet{fail: tc.fail, files: map[string][]string{}, cancel: cancel}
			self := filepath.Join(t.TempDir(), "stacktune")
			os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755)
			rep, err := Apply(ctx, fleetHosts(7), ApplyOptions{Dialer: f, Binary: Binary{Self: self}, ChangeSet: changeSetDir(t), Label: "fleet test",
				Canary: 1, Batch: 3, Parallel: 1, DryRun: tc.dryRun})
			if rep == nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.calls, tc.calls) {
				t.Errorf("calls\n%q\nwant\n%q", f.calls, tc.calls)
			}
			var states []string
			for _, h := range rep.Hosts {
				states = append(states, string(h.State))
			}
			if got := strings.Join(states, " "); got != tc.states {
				t.Errorf("states\n%s\nwant\n%s", got, tc.states)
			}
			if rep.StoppedAt != tc.stopped {
				t.Errorf("stopped at %q, want %q", rep.StoppedAt, tc.stopped)
			}
			if len(rep.Batches) < 1 || len(rep.Batches[0]) != 1 {
				t.Errorf("batches %v", rep.Batches)
			}
			for _, h := range rep.Hosts {
				if h.State == HostRollbackFailed && !strings.HasPrefix(h.HandFix, "stacktune rollback --expect-label 'fleet test'") {
					t.Errorf("%s: hand fix %q", h.Name, h.HandFix)
				}
			}
			for host, files := range f.files {
				if !slices.Equal(files, []string{"changes/", "changes/changes.json", "changes/sysctl/", "changes/sysctl/99-stacktune.conf", "stacktune"}) {
					t.Errorf("%s received %q", host, files)
				}
			}
			if tc.stopped == "" && !tc.dryRun && ctx.Err() == nil && !rep.OK() {
				t.Error("not OK")
			}
		})
	}
}

func TestApplyBad(t *testing.T) {
	if _, err := Apply(context.Background(), nil, ApplyOptions{}); !errors.Is(err, ErrNoHosts) {
		t.Errorf("no hosts: %v", err)
	}
	if _, err := Apply(context.Background(), fleetHosts(1), ApplyOptions{ChangeSet: "/nonexistent"}); err == nil {
		t.Error("a missing change set")
	}
	if _, err := Apply(context.Background(), fleetHosts(1), ApplyOptions{ChangeSet: changeSetDir(t), Batch: -1}); err == nil {
		t.Error("a negative batch")
	}
	dir := changeSetDir(t)
	os.Symlink("/etc/passwd", filepath.Join(dir, "link"))
	if _, err := changeSetTar(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a symlink in the change set: %v", err)
	}
	b, err := changeSetTar(filepath.Join(changeSetDir(t), "changes.json"))
	if err != nil || !bytes.Contains(b, []byte("changes/changes.json")) {
		t.Errorf("a changes.json: %v", err)
	}
}
