package fleet

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/stacktune/stacktune/inventory"
	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestDialRefusals: what each way of not getting in says, on a real sshd.
func TestDialRefusals(t *testing.T) {
	lab := sandboxtest.NewFleetLab(t, sandbox.FleetLabOptions{Web: 3, TimeWait: 1})
	hosts := labHosts(t, lab)
	web1 := hosts[0]
	dir := t.TempDir()
	// known_hosts without web1's line.
	kh, err := os.ReadFile(lab.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	var rest []string
	for _, l := range strings.Split(strings.TrimSpace(string(kh)), "\n") {
		if !strings.HasPrefix(l, web1.Address+" ") {
			rest = append(rest, l)
		}
	}
	other := filepath.Join(dir, "known_hosts")
	os.WriteFile(other, []byte(strings.Join(rest, "\n")+"\n"), 0o600)
	// A key the host does not know, and one behind a passphrase.
	pemKey, _, _, err := sandbox.NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	stranger := filepath.Join(dir, "stranger")
	os.WriteFile(stranger, pemKey, 0o600)
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "locked", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(dir, "locked")
	os.WriteFile(locked, pem.EncodeToMemory(block), 0o600)

	with := func(h inventory.Host, k, v string) inventory.Host {
		vars := map[string]string{}
		for a, b := range h.Vars {
			vars[a] = b
		}
		vars[k] = v
		h.Vars = vars
		if k == inventory.VarKeyFile {
			h.KeyFile = v
		}
		return h
	}
	tests := []struct {
		name       string
		host       inventory.Host
		knownHosts string
		stage      Stage
		want       string
	}{
		{"unknown host key", web1, other, StageHostKey, "is not in known_hosts (it offers ssh-ed25519 SHA256:"},
		{"no known_hosts file", web1, filepath.Join(dir, "none"), StageHostKey, "known_hosts"},
		{"a key the host does not take", with(web1, inventory.VarKeyFile, stranger), lab.KnownHosts, StageLogin, "refused the login as"},
		{"a key behind a passphrase", with(web1, inventory.VarKeyFile, locked), lab.KnownHosts, StageLogin, "protected by a passphrase: add it to ssh-agent"},
		{"a missing key file", with(web1, inventory.VarKeyFile, filepath.Join(dir, "nokey")), lab.KnownHosts, StageLogin, "no such file"},
		{"another connection type", with(web1, inventory.VarConnection, "winrm"), lab.KnownHosts, StageConnect, "ansible_connection=winrm"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "another connection type" {
				tc.host.Connection = "winrm"
			}
			t.Setenv("SSH_AUTH_SOCK", "")
			d := &SSHDialer{KnownHosts: []string{tc.knownHosts}, ConnectTimeout: 5 * time.Second}
			c, err := d.Dial(context.Background(), tc.host)
			if err == nil {
				c.Close()
				t.Fatal("got in")
			}
			if stageOf(err) != tc.stage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("stage %s, error %v; want %s, %q", stageOf(err), err, tc.stage, tc.want)
			}
		})
	}
}

// TestCollectLocal: a host with ansible_connection=local is collected on
// this machine, with the same copy of stacktune.
func TestCollectLocal(t *testing.T) {
	inv, err := inventory.Parse("hosts", []byte("[web]\nthis ansible_connection=local\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := Collect(context.Background(), inv.Hosts, CollectOptions{Dialer: &SSHDialer{}})
	if err != nil {
		t.Fatal(err)
	}
	if h := fs.Hosts[0]; !h.OK() || h.Snapshot.Linux == nil {
		t.Errorf("%+v", h)
	}
}
