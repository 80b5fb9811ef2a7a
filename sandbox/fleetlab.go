package sandbox

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// FleetLabOptions configures StartFleetLab.
type FleetLabOptions struct {
	// Dir receives hosts.ini, known_hosts and the client key. Empty
	// means a new temporary directory that Stop removes.
	Dir string
	// Web is the number of healthy web hosts (default 5, at least 3):
	// the second has a different ip_local_port_range, the third twice the
	// others' TIME_WAIT sockets.
	Web int
	// TimeWait is the TIME_WAIT sockets toward port 3306 left on each
	// healthy web host (default 100; the third gets twice as many). They
	// last 60 s.
	TimeWait int
	// HostVars are added to every host line of hosts.ini
	// ("stacktune_apply_args=..."), with {{DIR}} replaced by the host's
	// own directory (LabHost.Dir).
	HostVars string
}

// LabHost is one host of a fleet lab.
type LabHost struct {
	Name, Role string
	// Fault is "", "port-range" (a different ip_local_port_range),
	// "time-wait" (twice the TIME_WAIT), "unreachable" (nothing listens)
	// or "wrong-key" (known_hosts holds another key for it).
	Fault string
	// Netns and SSHD are nil for the unreachable host.
	Netns *Netns
	SSHD  *SSHD
	// Addr and Port are what hosts.ini says.
	Addr string
	Port int
	// Dir is a directory of the host's own on this machine, for
	// settings files that must not be shared between hosts.
	Dir string
}

// FleetLab is a fleet of SSH hosts on this machine for the fleet tests and
// the README's example: healthy web hosts and a db host, each an sshd in
// its own network namespace, plus an unreachable web host and one whose
// key does not match known_hosts.
type FleetLab struct {
	dir        string
	owned      bool
	Inventory  string // hosts.ini
	KnownHosts string
	KeyFile    string
	Signer     ssh.Signer
	Hosts      []*LabHost
}

// Lab faults.
const (
	FaultPortRange   = "port-range"
	FaultTimeWait    = "time-wait"
	FaultUnreachable = "unreachable"
	FaultWrongKey    = "wrong-key"
)

// labNginxConf is the web hosts' nginx.conf (web4 turns gzip on).
const labNginxConf = `worker_processes 2;
pid {{DIR}}/nginx.pid;
events { worker_connections 768; }
http {
	sendfile on;
	keepalive_timeout 65;
	access_log {{DIR}}/access.log;
	upstream app { server 127.0.0.1:8080; }
	server {
		listen 80;
		location / { proxy_pass http://app; }
	}
}
`

// LabPortRange is the outlier's net.ipv4.ip_local_port_range.
const LabPortRange = "40000 60999"

// StartFleetLab starts the lab. Stop removes everything it made.
func StartFleetLab(ctx context.Context, opts FleetLabOptions) (lab *FleetLab, err error) {
	web := orDefault(opts.Web, 5)
	if web < 3 {
		return nil, errors.New("sandbox: a fleet lab needs at least 3 web hosts")
	}
	tw := orDefault(opts.TimeWait, 100)
	dir, owned, err := serverDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	lab = &FleetLab{dir: dir, owned: owned, Inventory: filepath.Join(dir, "hosts.ini"),
		KnownHosts: filepath.Join(dir, "known_hosts"), KeyFile: filepath.Join(dir, "id_ed25519")}
	// Every failed return below is "return nil, err", which clears lab
	// before this runs: stop what was started through a copy.
	started := lab
	defer func() {
		if err != nil {
			err = errors.Join(err, started.Stop())
		}
	}()
	pemKey, signer, authorized, err := NewClientKey()
	if err != nil {
		return nil, err
	}
	lab.Signer = signer
	if err := os.WriteFile(lab.KeyFile, pemKey, 0o600); err != nil {
		return nil, err
	}
	type spec struct{ name, role, fault string }
	var specs []spec
	for i := 1; i <= web; i++ {
		f := ""
		switch i {
		case 2:
			f = FaultPortRange
		case 3:
			f = FaultTimeWait
		}
		specs = append(specs, spec{fmt.Sprintf("web%d", i), "web", f})
	}
	specs = append(specs, spec{"db1", "db", ""},
		spec{fmt.Sprintf("web%d", web+1), "web", FaultUnreachable},
		spec{fmt.Sprintf("web%d", web+2), "web", FaultWrongKey})

	var known []string
	for _, sp := range specs {
		h := &LabHost{Name: sp.name, Role: sp.role, Fault: sp.fault, Dir: filepath.Join(dir, sp.name)}
		lab.Hosts = append(lab.Hosts, h)
		if err := os.MkdirAll(h.Dir, 0o755); err != nil {
			return nil, err
		}
		if sp.fault == FaultUnreachable {
			// A loopback port nothing listens on: connection refused.
			if h.Port, err = freePort(); err != nil {
				return nil, err
			}
			h.Addr = "127.0.0.1"
			continue
		}
		if h.Netns, err = StartNetns(ctx); err != nil {
			return nil, err
		}
		if h.SSHD, err = StartSSHD(ctx, SSHDOptions{Netns: h.Netns, AuthorizedKeys: authorized, Dir: filepath.Join(h.Dir, "sshd")}); err != nil {
			return nil, err
		}
		h.Addr, h.Port = h.SSHD.Host(), h.SSHD.Port()
		key := h.SSHD.HostKey()
		if sp.fault == FaultWrongKey {
			pub, _, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				return nil, err
			}
			if key, err = ssh.NewPublicKey(pub); err != nil {
				return nil, err
			}
		}
		known = append(known, knownhosts.Line([]string{knownhosts.Normalize(net.JoinHostPort(h.Addr, strconv.Itoa(h.Port)))}, key))
		if sp.role == "web" {
			// What nginx's collector reads: no nginx needs to run.
			conf := labNginxConf
			if sp.name == "web4" {
				conf = strings.Replace(conf, "sendfile on;", "sendfile on;\n\tgzip on;", 1)
			}
			if err := os.WriteFile(filepath.Join(h.Dir, "nginx.conf"), []byte(strings.ReplaceAll(conf, "{{DIR}}", h.Dir)), 0o644); err != nil {
				return nil, err
			}
		}
		switch sp.fault {
		case FaultPortRange:
			if err := h.Netns.Sysctl(ctx, "net.ipv4.ip_local_port_range", LabPortRange); err != nil {
				return nil, err
			}
		}
	}
	if err := os.WriteFile(lab.KnownHosts, []byte(strings.Join(known, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	me := "root"
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	var inv strings.Builder
	fmt.Fprintf(&inv, "# a fleet of SSH hosts on this machine (stacktune sandbox), each in its own network namespace\n")
	for _, role := range []string{"web", "db"} {
		fmt.Fprintf(&inv, "\n[%s]\n", role)
		for _, h := range lab.Hosts {
			if h.Role != role {
				continue
			}
			fmt.Fprintf(&inv, "%s ansible_host=%s ansible_port=%d", h.Name, h.Addr, h.Port)
			if role == "web" {
				fmt.Fprintf(&inv, " stacktune_collect_args='--nginx-conf %s'", filepath.Join(h.Dir, "nginx.conf"))
			}
			if opts.HostVars != "" {
				fmt.Fprintf(&inv, " %s", strings.ReplaceAll(opts.HostVars, "{{DIR}}", h.Dir))
			}
			if h.Fault != "" {
				fmt.Fprintf(&inv, "  # %s", h.Fault)
			}
			inv.WriteString("\n")
		}
	}
	fmt.Fprintf(&inv, "\n[all:vars]\nansible_user=%s\nansible_ssh_private_key_file=%s\n", me, lab.KeyFile)
	if err := os.WriteFile(lab.Inventory, []byte(inv.String()), 0o644); err != nil {
		return nil, err
	}
	if err := lab.FillTimeWait(ctx, tw); err != nil {
		return nil, err
	}
	return lab, nil
}

// FillTimeWait leaves count TIME_WAIT sockets toward port 3306 on each
// healthy web host, as PHP without persistent connections leaves toward
// MySQL, and twice as many on the time-wait one. They last 60 s: call it
// again before a collection that comes later.
func (l *FleetLab) FillTimeWait(ctx context.Context, count int) error {
	for _, h := range l.Hosts {
		if h.Role != "web" || h.Netns == nil || h.Fault == FaultWrongKey {
			continue
		}
		n := count
		if h.Fault == FaultTimeWait {
			n *= 2
		}
		if err := h.Netns.TimeWait(ctx, 3306, n); err != nil {
			return err
		}
	}
	return nil
}

// Host returns the lab host named name, or nil.
func (l *FleetLab) Host(name string) *LabHost {
	for _, h := range l.Hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// Dir is the lab's directory.
func (l *FleetLab) Dir() string { return l.dir }

// Stop stops every sshd, deletes every namespace and removes the lab's
// directory if it made it.
func (l *FleetLab) Stop() error {
	var errs []error
	for _, h := range l.Hosts {
		if h.SSHD != nil {
			errs = append(errs, h.SSHD.Stop())
		}
		if h.Netns != nil {
			errs = append(errs, h.Netns.Stop())
		}
	}
	if l.owned {
		errs = append(errs, os.RemoveAll(l.dir))
	}
	return errors.Join(errs...)
}

// Diagnostics is the tail of every sshd's log.
func (l *FleetLab) Diagnostics() string {
	var b strings.Builder
	for _, h := range l.Hosts {
		if h.SSHD != nil {
			if d := h.SSHD.Diagnostics(); d != "" {
				b.WriteString(d + "\n")
			}
		}
	}
	return b.String()
}
