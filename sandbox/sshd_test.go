package sandbox_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/stacktune/stacktune/sandbox"
	"github.com/stacktune/stacktune/sandbox/sandboxtest"
)

// TestFleetLab logs into every host of a lab with its key and known_hosts
// and reads the namespace's own sysctl and TIME_WAIT count; the unreachable
// host refuses the connection and the wrong-key host fails the host key
// check.
func TestFleetLab(t *testing.T) {
	lab := sandboxtest.NewFleetLab(t, sandbox.FleetLabOptions{Web: 3, TimeWait: 20})
	hostKeys, err := knownhosts.New(lab.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range lab.Hosts {
		t.Run(h.Name, func(t *testing.T) {
			cfg := &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(lab.Signer)}, HostKeyCallback: hostKeys, Timeout: 5 * time.Second}
			c, err := ssh.Dial("tcp", net.JoinHostPort(h.Addr, strconv.Itoa(h.Port)), cfg)
			switch h.Fault {
			case sandbox.FaultUnreachable:
				if err == nil || !strings.Contains(err.Error(), "refused") {
					t.Fatalf("unreachable host: %v", err)
				}
				return
			case sandbox.FaultWrongKey:
				if err == nil || !strings.Contains(err.Error(), "key mismatch") {
					t.Fatalf("wrong key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s, err := c.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			out, err := s.Output("cat /proc/sys/net/ipv4/ip_local_port_range; awk '$4 == \"06\"' /proc/net/tcp | wc -l")
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(string(out))
			if len(f) != 3 {
				t.Fatalf("output %q", out)
			}
			wantRange := "32768 60999"
			if h.Fault == sandbox.FaultPortRange {
				wantRange = sandbox.LabPortRange
			}
			if got := f[0] + " " + f[1]; got != wantRange {
				t.Errorf("port range %q, want %q", got, wantRange)
			}
			wantTW := map[string]string{"": "20", sandbox.FaultPortRange: "20", sandbox.FaultTimeWait: "40"}[h.Fault]
			if h.Role == "db" {
				wantTW = "0"
			}
			if f[2] != wantTW {
				t.Errorf("TIME_WAIT %s, want %s", f[2], wantTW)
			}
		})
	}
	inv, err := os.ReadFile(lab.Inventory)
	if err != nil || !bytes.Contains(inv, []byte("[web]")) || !bytes.Contains(inv, []byte("ansible_ssh_private_key_file="+lab.KeyFile)) {
		t.Errorf("hosts.ini: %s %v", inv, err)
	}
}

// TestFleetLabFailsClean makes the lab's last file unwritable, after every
// namespace and sshd has started: StartFleetLab returns the error, and no
// namespace of this process or sshd of the lab is left behind.
func TestFleetLabFailsClean(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "hosts.ini"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := ourNamespaces(t)
	lab, err := sandbox.StartFleetLab(context.Background(), sandbox.FleetLabOptions{Dir: dir, Web: 3})
	if err == nil || lab != nil {
		t.Fatalf("StartFleetLab = %v, %v; want an error and no lab", lab, err)
	}
	if !strings.Contains(err.Error(), "hosts.ini") {
		t.Errorf("error %q does not name the file", err)
	}
	if after := ourNamespaces(t); after != before {
		t.Errorf("namespaces of this process: %d before, %d after", before, after)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(dir)) {
			t.Errorf("%s is still running: %q", filepath.Dir(p), bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
}

// ourNamespaces counts the network namespaces this process has made.
func ourNamespaces(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(out), "st-"+strconv.Itoa(os.Getpid())+"-")
}
