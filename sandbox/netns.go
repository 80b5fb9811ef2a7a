package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Netns is a throwaway Linux network namespace joined to this one by a
// veth pair: a host of its own on this machine, with its own addresses,
// TCP sockets and per-namespace sysctls (net.ipv4.ip_local_port_range,
// tcp_max_tw_buckets, somaxconn...), reachable at Addr from here. The
// fleet tests run one sshd in each. Creating one needs root (CAP_NET_ADMIN)
// and iproute2's ip.
type Netns struct {
	name     string
	hostIf   string
	hostAddr netip.Addr
	addr     netip.Addr

	stopOnce sync.Once
	stopErr  error
}

// netnsBase is the /16 the namespaces' /30 links are taken from: private
// addresses that only these namespaces use, never routed off this machine.
var netnsBase = netip.MustParseAddr("10.231.0.0")

// netnsLock serialises picking a link subnet between processes.
const netnsLock = "/tmp/stacktune-netns.lock"

// StartNetns creates a namespace and its link. The namespace is named
// st-PID-N; its address is the second of a /30 taken from 10.231.0.0/16
// that no interface of this namespace uses yet.
func StartNetns(ctx context.Context) (*Netns, error) {
	ip, err := lookBinary("", "iproute2", "ip")
	if err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(netnsLock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sandbox: netns lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("sandbox: netns lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	used, err := exec.CommandContext(ctx, ip, "-4", "-o", "addr", "show").Output()
	if err != nil {
		return nil, fmt.Errorf("sandbox: ip addr show: %w", err)
	}
	netnsSeq.Lock()
	netnsSeq.n++
	seq := netnsSeq.n
	netnsSeq.Unlock()
	var n *Netns
	for i := 0; i < 1<<14; i++ {
		b := netnsBase.As4()
		b[2], b[3] = byte(i>>6), byte(i&63)<<2
		host := netip.AddrFrom4(b).Next()
		if strings.Contains(string(used), " "+host.String()+"/") {
			continue
		}
		n = &Netns{
			name:     fmt.Sprintf("st-%d-%d", os.Getpid(), seq),
			hostIf:   fmt.Sprintf("stv%x", (os.Getpid()<<8|seq)&0xffffffff),
			hostAddr: host,
			addr:     host.Next(),
		}
		break
	}
	if n == nil {
		return nil, errors.New("sandbox: no free /30 left in 10.231.0.0/16 for a namespace")
	}
	peer := "eth0"
	steps := [][]string{
		{"netns", "add", n.name},
		{"link", "add", n.hostIf, "type", "veth", "peer", "name", peer, "netns", n.name},
		{"addr", "add", n.hostAddr.String() + "/30", "dev", n.hostIf},
		{"link", "set", n.hostIf, "up"},
		{"-n", n.name, "addr", "add", n.addr.String() + "/30", "dev", peer},
		{"-n", n.name, "link", "set", peer, "up"},
		{"-n", n.name, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if out, err := exec.CommandContext(ctx, ip, s...).CombinedOutput(); err != nil {
			_ = n.Stop()
			return nil, fmt.Errorf("sandbox: ip %s: %w: %s (a network namespace needs root)", strings.Join(s, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return n, nil
}

var netnsSeq struct {
	sync.Mutex
	n int
}

// Name is the namespace's name (ip netns exec NAME ...).
func (n *Netns) Name() string { return n.name }

// Addr is the namespace's address, reachable from this namespace.
func (n *Netns) Addr() string { return n.addr.String() }

// Command returns a command that runs in the namespace.
func (n *Netns) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.name, name}, args...)...)
}

// Sysctl sets a per-namespace sysctl ("net.ipv4.ip_local_port_range").
func (n *Netns) Sysctl(ctx context.Context, name, value string) error {
	path := filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
	out, err := n.Command(ctx, "sh", "-c", `printf '%s\n' "$1" > "$2"`, "sh", value, path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sandbox: netns %s: set %s: %w: %s", n.name, name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// ReadSysctl reads a sysctl as the namespace sees it.
func (n *Netns) ReadSysctl(ctx context.Context, name string) (string, error) {
	path := filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
	out, err := n.Command(ctx, "cat", path).Output()
	if err != nil {
		return "", fmt.Errorf("sandbox: netns %s: read %s: %w", n.name, name, err)
	}
	return strings.Join(strings.Fields(string(out)), " "), nil
}

// Stop deletes the namespace (and with it both ends of its link). It is
// idempotent.
func (n *Netns) Stop() error {
	n.stopOnce.Do(func() {
		// Processes still in the namespace keep it alive: kill them first.
		if out, err := exec.Command("ip", "netns", "pids", n.name).Output(); err == nil {
			for _, f := range strings.Fields(string(out)) {
				if pid, err := strconv.Atoi(f); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		_ = exec.Command("ip", "link", "del", n.hostIf).Run()
		if out, err := exec.Command("ip", "netns", "del", n.name).CombinedOutput(); err != nil && !strings.Contains(string(out), "No such file") {
			n.stopErr = fmt.Errorf("sandbox: ip netns del %s: %w: %s", n.name, err, strings.TrimSpace(string(out)))
		}
	})
	return n.stopErr
}

// Diagnostics is empty: a namespace keeps no log.
func (n *Netns) Diagnostics() string { return "" }

// Do runs fn on an OS thread that has joined the namespace, so sockets fn
// opens are the namespace's. The thread joins its own namespace again
// afterwards; if it cannot, it is not given back to the Go runtime and
// ends with fn's goroutine. (A thread that ends kills the processes it
// started with Pdeathsig, the sandbox's servers among them: it must come
// back rather than die.)
func (n *Netns) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("sandbox: this thread's netns: %w", err)
			return
		}
		defer home.Close()
		f, err := os.Open(filepath.Join("/run/netns", n.name))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("sandbox: netns %s: %w", n.name, err)
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("sandbox: setns %s: %w", n.name, err)
			return
		}
		err = fn()
		if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// TimeWait leaves count TCP sockets in TIME_WAIT in the namespace (for
// about 60 s, TCP_TIMEWAIT_LEN): count connections to a listener of its
// own on port (0: any free one; the namespace has its own ports, so 3306
// is free there), each closed first by the client, as non-persistent PHP
// closes its MySQL connections. It returns once all count are in
// TIME_WAIT, as /proc/net/tcp shows them.
func (n *Netns) TimeWait(ctx context.Context, port, count int) error {
	return n.Do(func() error {
		// On a busy machine loopback can deliver a client's handshake
		// ACK after its FIN (they queue on different CPUs' backlogs):
		// by then the server's socket is closed, the listener answers
		// the stray ACK with a RST, and a TIME_WAIT that takes a RST
		// ends (RFC 1337's "TIME-WAIT assassination"). Under load one
		// socket in ten could vanish so. tcp_rfc1337=1 keeps them;
		// stacktune's collectors do not read it.
		if err := os.WriteFile("/proc/sys/net/ipv4/tcp_rfc1337", []byte("1\n"), 0); err != nil {
			return fmt.Errorf("sandbox: netns %s: set net.ipv4.tcp_rfc1337: %w", n.name, err)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return err
		}
		defer l.Close()
		var closed sync.WaitGroup
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < count; i++ {
				c, err := l.Accept()
				if err != nil {
					return
				}
				// Wait for the client's FIN, then close: the client
				// closed first and holds the TIME_WAIT.
				closed.Add(1)
				go func() {
					defer closed.Done()
					_, _ = c.Read(make([]byte, 1))
					c.Close()
				}()
			}
		}()
		var d net.Dialer
		ours := map[string]bool{} // the clients' local ports, in hex as /proc/net/tcp writes them
		for i := 0; i < count; i++ {
			c, err := d.DialContext(ctx, "tcp", l.Addr().String())
			if err != nil {
				return fmt.Errorf("sandbox: netns %s: connection %d: %w", n.name, i+1, err)
			}
			ours[fmt.Sprintf("%04X", c.LocalAddr().(*net.TCPAddr).Port)] = true
			c.Close()
		}
		<-done
		closed.Wait()
		// A client socket is in TIME_WAIT once the listener's FIN has
		// reached it; until then it is in FIN_WAIT_2, and a reader of
		// /proc/net/tcp would count it short.
		lport := l.Addr().(*net.TCPAddr).Port
		deadline := time.Now().Add(5 * time.Second)
		for {
			states, err := statesTo(lport, ours)
			if err != nil || states["06"] == count {
				return err
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("sandbox: netns %s: %d of %d sockets reached TIME_WAIT (%d distinct local ports; states %v)", n.name, states["06"], count, len(ours), states)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// statesTo counts the TCP sockets toward port from one of the local ports
// in from (in hex, as /proc/net/tcp writes them), by state as
// /proc/net/tcp writes it ("06" is TIME_WAIT), in the calling thread's
// network namespace.
func statesTo(port int, from map[string]bool) (map[string]int, error) {
	b, err := os.ReadFile("/proc/thread-self/net/tcp")
	if err != nil {
		return nil, err
	}
	want := fmt.Sprintf(":%04X", port)
	n := map[string]int{}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasSuffix(f[2], want) {
			continue
		}
		if _, local, ok := strings.Cut(f[1], ":"); ok && from[local] {
			n[f[3]]++
		}
	}
	return n, nil
}
