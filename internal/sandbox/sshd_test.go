package sandbox_test

import (
	"bytes"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/stacktune/stacktune/internal/sandbox"
	"github.com/stacktune/stacktune/internal/sandbox/sandboxtest"
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
