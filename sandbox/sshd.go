package sandbox

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// SSHDOptions configures StartSSHD. The zero value listens on a free port
// of 127.0.0.1 and lets in the keys of AuthorizedKeys only.
type SSHDOptions struct {
	// Netns runs sshd in the namespace, listening on port 22 of its
	// address; nil listens on a free loopback port here.
	Netns *Netns
	// AuthorizedKeys are the public keys allowed to log in (as the user
	// running the sandbox), in authorized_keys form.
	AuthorizedKeys []byte
	// Dir holds the configuration, host key and logs. Empty means a new
	// temporary directory that Stop removes.
	Dir string
	// StartTimeout bounds the wait for sshd's banner; default 10s.
	StartTimeout time.Duration
	// Binary overrides the sshd binary. Default: sshd (/usr/sbin).
	Binary string
}

// SSHD is a running throwaway OpenSSH server: its own host key, its own
// authorized_keys, password and keyboard-interactive logins off.
type SSHD struct {
	inst    instance
	host    string
	port    int
	hostKey ssh.PublicKey
}

const (
	sshdPackage      = "openssh-server"
	sshdStartTimeout = 10 * time.Second
	sshdGrace        = 3 * time.Second
	// sshdPrivsepDir is the directory sshd insists on for privilege
	// separation; the package creates it at boot through tmpfiles.d.
	sshdPrivsepDir = "/run/sshd"
)

// sshdConfig is the server's whole configuration: nothing of /etc/ssh is
// read.
const sshdConfig = `# sshd_config of a stacktune sandbox
Port {{PORT}}
ListenAddress {{ADDR}}
HostKey {{DIR}}/ssh_host_ed25519_key
PidFile {{DIR}}/sshd.pid
AuthorizedKeysFile {{DIR}}/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
PrintMotd no
PermitUserEnvironment no
AllowAgentForwarding no
AllowTcpForwarding no
X11Forwarding no
LogLevel VERBOSE
`

// StartSSHD starts sshd with a fresh ed25519 host key and waits for its
// SSH banner.
func StartSSHD(ctx context.Context, opts SSHDOptions) (*SSHD, error) {
	bin, err := lookBinary(opts.Binary, sshdPackage, "sshd")
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(bin) {
		// sshd re-executes itself and wants an absolute path.
		if bin, err = filepath.Abs(bin); err != nil {
			return nil, err
		}
	}
	dir, owned, err := serverDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	s := &SSHD{inst: instance{name: "sshd", dir: dir, owned: owned, grace: sshdGrace}}
	fail := func(err error) (*SSHD, error) {
		_ = s.inst.stop()
		return nil, err
	}
	if err := os.MkdirAll(sshdPrivsepDir, 0o755); err != nil {
		return fail(fmt.Errorf("sandbox: sshd needs %s: %w", sshdPrivsepDir, err))
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fail(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ssh_host_ed25519_key"), pem.EncodeToMemory(block), 0o600); err != nil {
		return fail(err)
	}
	if s.hostKey, err = ssh.NewPublicKey(pub); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), opts.AuthorizedKeys, 0o600); err != nil {
		return fail(err)
	}
	timeout := orDefault(opts.StartTimeout, sshdStartTimeout)
	attempt := func(port int) error {
		s.port = port
		conf := strings.NewReplacer("{{PORT}}", strconv.Itoa(port), "{{ADDR}}", s.host, "{{DIR}}", dir).Replace(sshdConfig)
		path := filepath.Join(dir, "sshd_config")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			return err
		}
		args := []string{"-D", "-e", "-f", path}
		cmdBin := bin
		if opts.Netns != nil {
			args = append([]string{"netns", "exec", opts.Netns.Name(), bin}, args...)
			if cmdBin, err = lookBinary("", "iproute2", "ip"); err != nil {
				return err
			}
		}
		return s.inst.launch(ctx, timeout, cmdBin, args, s.banner)
	}
	if opts.Netns != nil {
		s.host = opts.Netns.Addr()
		err = attempt(22)
	} else {
		s.host = "127.0.0.1"
		err = startWithPortRetry(ctx, attempt)
	}
	if err != nil {
		return fail(err)
	}
	return s, nil
}

// banner reads sshd's identification line.
func (s *SSHD) banner(ctx context.Context) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", s.Addr())
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "SSH-2.0-") {
		return fmt.Errorf("not an SSH banner: %q", line)
	}
	return nil
}

// Addr is host:port.
func (s *SSHD) Addr() string { return net.JoinHostPort(s.host, strconv.Itoa(s.port)) }

// Host is the address sshd listens on.
func (s *SSHD) Host() string { return s.host }

// Port is the port sshd listens on.
func (s *SSHD) Port() int { return s.port }

// HostKey is the server's public host key.
func (s *SSHD) HostKey() ssh.PublicKey { return s.hostKey }

// Dir is the server's directory.
func (s *SSHD) Dir() string { return s.inst.dir }

// Stop stops sshd (sessions it started end with their connections) and
// removes its directory if it made it.
func (s *SSHD) Stop() error { return s.inst.stop() }

// Diagnostics returns the tail of sshd's log, for a failed test.
func (s *SSHD) Diagnostics() string { return s.inst.diagnostics() }

// NewClientKey makes an ed25519 key pair for a sandbox's SSH client: the
// private key in OpenSSH form (what ssh -i and ansible_ssh_private_key_file
// take), the signer, and the authorized_keys line.
func NewClientKey() (pemBytes []byte, signer ssh.Signer, authorized []byte, err error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "stacktune sandbox")
	if err != nil {
		return nil, nil, nil, err
	}
	signer, err = ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(block), signer, ssh.MarshalAuthorizedKey(signer.PublicKey()), nil
}
